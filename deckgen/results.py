"""Each entry's review and cards: from the cache, else made here or in worker processes.

The unit of work is one entry: :func:`~deckgen.extract.extract_review` then
:func:`~deckgen.cards.make_cards`, which depend on nothing but the entry (and
the code), so they can be cached per entry (:mod:`deckgen.resultcache`) and
spread over processes (jieba is pure Python: threads would only take turns).
The segmenter, hence jieba, is loaded only when some entry is not in the cache,
and once per process; when many entries are missing they are made in a worker
even with one job, so jieba's memory is gone before the deck is packaged.  Results come back in entry order whatever the route, so
the deck is byte-identical with or without cache or workers.
"""

from __future__ import annotations

import gc
import multiprocessing
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from .progress import NO_PROGRESS, Progress
from .resultcache import Result, ResultCache, decode, encode
from .types import Card, Entry, Review

MIN_ENTRIES_PER_JOB = 1000
"""Fewer workers than asked when each would get fewer entries than this.  Each worker sets jieba up
(about 1 s of CPU) and keeps its own memo caches: measured on 1,000 entries, two workers took 4.9 s
where one took 3.5 s; on 10,000, two were no slower than one."""
OWN_PROCESS_ENTRIES = 1000
"""From this many entries to make, they are made in a worker even with ``jobs=1``: jieba (120 MB) then
lives only as long as the extraction, not through the packaging that follows (the build's memory peak)."""
_CHUNK = 32


@dataclass(frozen=True)
class EntryResults:
    results: tuple[Result, ...]
    """(review, cards) of every entry, in entry order."""
    cached: int
    """How many came from the cache."""


Companion = Callable[[Review, tuple[Card, ...]], bytes]
"""More work on a freshly made result, done by the worker that made it; its bytes come back with it."""


class ResultStream:
    """Every entry's result, in entry order, each as soon as it is made (see :func:`result_stream`).

    Each comes with the bytes of the *companion* when a worker made it, else None.
    """

    def __init__(self, results: list[Result | None], made: Iterator[tuple[Result, bytes | None]],
                 progress: Progress) -> None:
        self._results, self._made, self._progress = results, made, progress
        self.cached = sum(r is not None for r in results)
        """How many came from the cache."""

    def __iter__(self) -> Iterator[tuple[Result, bytes | None]]:
        for result in self._results:
            extra = None
            if result is None:
                result, extra = next(self._made)
                self._progress.advance()
            yield result, extra
        self._progress.end()


def make_result(entry: Entry) -> Result:
    """One entry's review and cards (the segmenter is set up on first use, once per process)."""
    from .cards import make_cards
    from .extract import extract_review
    from .segment import get_segmenter

    seg = get_segmenter()
    review = extract_review(entry, seg)
    return review, tuple(make_cards(review, seg))


_companion: Companion | None = None
"""The companion of the worker this is (set when it starts)."""


def _start_worker(companion: Companion | None) -> None:
    global _companion
    _companion = companion
    # Workers collect cycles again (the build pauses the collector, see deckgen.pipeline): jieba leaves
    # cyclic garbage behind, 30 MB over 10,000 entries, and the pause saves a worker little time.
    gc.enable()


def _encoded_results(entries: Sequence[Entry]) -> list[tuple[bytes, bytes | None]]:
    # Workers send results in the cache's format: the parent stores the bytes as they
    # are and decodes them around its own Entry objects (no copies of the entries).
    out = []
    for entry in entries:
        result = make_result(entry)
        out.append((encode(entry, result), _companion(*result) if _companion else None))
    return out


def entry_results(entries: Sequence[Entry], *, cache: bool = True, jobs: int = 1,
                  progress: Progress = NO_PROGRESS) -> EntryResults:
    """The review and cards of every entry, in entry order (all of :func:`result_stream`)."""
    stream = result_stream(entries, cache=cache, jobs=jobs, progress=progress)
    return EntryResults(tuple(result for result, _ in stream), stream.cached)


def result_stream(entries: Sequence[Entry], *, cache: bool = True, jobs: int = 1,
                  progress: Progress = NO_PROGRESS, companion: Companion | None = None) -> ResultStream:
    """The review and cards of every entry, in entry order, yielded as they are made.

    *cache* reads and fills the per-user results cache; *jobs* > 1 makes the
    entries the cache lacks in up to that many worker processes (when there are
    enough of them).  *progress* hears of every entry done.  What the caller does
    with one result overlaps with the making of the next ones in the workers.
    When there are several workers, each also runs *companion* on what it made.
    """
    store = ResultCache.open(cache)
    progress.begin(len(entries))
    results: list[Result | None] = [store.get(e) for e in entries]
    progress.advance(sum(r is not None for r in results))
    missing = [entries[i] for i, r in enumerate(results) if r is None]
    jobs = max(1, min(jobs, len(missing) // MIN_ENTRIES_PER_JOB))
    elsewhere = jobs > 1 or len(missing) >= OWN_PROCESS_ENTRIES
    made = _in_workers(missing, jobs, store, companion if jobs > 1 else None) if elsewhere else _here(missing, store)
    return ResultStream(results, made, progress)


def _here(entries: Sequence[Entry], store: ResultCache) -> Iterator[tuple[Result, None]]:
    for entry in entries:
        result = make_result(entry)
        if store.enabled:
            store.put(entry, encode(entry, result))
        yield result, None


def _in_workers(entries: Sequence[Entry], jobs: int, store: ResultCache,
                companion: Companion | None) -> Iterator[tuple[Result, bytes | None]]:
    chunks = [entries[i:i + _CHUNK] for i in range(0, len(entries), _CHUNK)]
    # fork where it is safe and cheap (Linux): workers start with deckgen already imported.
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method), initializer=_start_worker,
                             initargs=(companion,)) as pool:
        for chunk, encoded in zip(chunks, pool.map(_encoded_results, chunks)):
            for entry, (data, extra) in zip(chunk, encoded):
                result = decode(data, entry)
                if result is None:  # only a bug in encode/decode could get here: never lose an entry for it
                    result, extra = make_result(entry), None
                    data = encode(entry, result)
                store.put(entry, data)
                yield result, extra
