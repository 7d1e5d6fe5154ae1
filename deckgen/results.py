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
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from .progress import NO_PROGRESS, Progress
from .resultcache import Result, ResultCache, decode, encode
from .types import Entry

MIN_ENTRIES_PER_JOB = 50
"""With fewer entries to make than this per worker, they are made in this process: workers cost a start-up."""
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


class ResultStream:
    """Every entry's result, in entry order, each as soon as it is made (see :func:`result_stream`)."""

    def __init__(self, results: list[Result | None], made: Iterator[Result], progress: Progress) -> None:
        self._results, self._made, self._progress = results, made, progress
        self.cached = sum(r is not None for r in results)
        """How many came from the cache."""

    def __iter__(self) -> Iterator[Result]:
        for result in self._results:
            if result is None:
                result = next(self._made)
                self._progress.advance()
            yield result
        self._progress.end()


def make_result(entry: Entry) -> Result:
    """One entry's review and cards (the segmenter is set up on first use, once per process)."""
    from .cards import make_cards
    from .extract import extract_review
    from .segment import get_segmenter

    seg = get_segmenter()
    review = extract_review(entry, seg)
    return review, tuple(make_cards(review, seg))


def _encoded_results(entries: Sequence[Entry]) -> list[bytes]:
    # Workers send results in the cache's format: the parent stores the bytes as they
    # are and decodes them around its own Entry objects (no copies of the entries).
    return [encode(e, make_result(e)) for e in entries]


def entry_results(entries: Sequence[Entry], *, cache: bool = True, jobs: int = 1,
                  progress: Progress = NO_PROGRESS) -> EntryResults:
    """The review and cards of every entry, in entry order (all of :func:`result_stream`)."""
    stream = result_stream(entries, cache=cache, jobs=jobs, progress=progress)
    return EntryResults(tuple(stream), stream.cached)


def result_stream(entries: Sequence[Entry], *, cache: bool = True, jobs: int = 1,
                  progress: Progress = NO_PROGRESS) -> ResultStream:
    """The review and cards of every entry, in entry order, yielded as they are made.

    *cache* reads and fills the per-user results cache; *jobs* > 1 makes the
    entries the cache lacks in up to that many worker processes (when there are
    enough of them).  *progress* hears of every entry done.  What the caller does
    with one result overlaps with the making of the next ones in the workers.
    """
    store = ResultCache.open(cache)
    progress.begin(len(entries))
    results: list[Result | None] = [store.get(e) for e in entries]
    progress.advance(sum(r is not None for r in results))
    missing = [entries[i] for i, r in enumerate(results) if r is None]
    jobs = max(1, min(jobs, len(missing) // MIN_ENTRIES_PER_JOB))
    elsewhere = jobs > 1 or len(missing) >= OWN_PROCESS_ENTRIES
    made = _in_workers(missing, jobs, store) if elsewhere else _here(missing, store)
    return ResultStream(results, made, progress)


def _here(entries: Sequence[Entry], store: ResultCache) -> Iterator[Result]:
    for entry in entries:
        result = make_result(entry)
        if store.enabled:
            store.put(entry, encode(entry, result))
        yield result


def _in_workers(entries: Sequence[Entry], jobs: int, store: ResultCache) -> Iterator[Result]:
    chunks = [entries[i:i + _CHUNK] for i in range(0, len(entries), _CHUNK)]
    # fork where it is safe and cheap (Linux): workers start with deckgen already imported.
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    # Workers collect cycles again (the build pauses the collector, see deckgen.pipeline): jieba leaves
    # cyclic garbage behind, 30 MB over 10,000 entries, and the pause saves a worker little time.
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method), initializer=gc.enable) as pool:
        for chunk, encoded in zip(chunks, pool.map(_encoded_results, chunks)):
            for entry, data in zip(chunk, encoded):
                result = decode(data, entry)
                if result is None:  # only a bug in encode/decode could get here: never lose an entry for it
                    result = make_result(entry)
                    data = encode(entry, result)
                store.put(entry, data)
                yield result
