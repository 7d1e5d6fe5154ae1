"""Each entry's review and cards: from the cache, else made here or in worker processes.

The unit of work is one entry: :func:`~deckgen.extract.extract.extract_review` then
:func:`~deckgen.cards.cards.make_cards`, which depend on nothing but the entry (and
the code), so they can be cached per entry (:mod:`deckgen.cache.resultcache`) and
spread over processes (jieba is pure Python: threads would only take turns).
The segmenter, hence jieba, is loaded only when some entry is not in the cache,
and once per process.  In a big build the missing entries are made in a worker
even with one job: it sets jieba up and extracts while this process reads and
handles the cached entries, and jieba's memory is gone before the deck is
packaged.  Every result comes with its entry's index, so the deck is
byte-identical with or without cache or workers.
"""

from __future__ import annotations

import gc
import importlib
import itertools
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from ..progress import NO_PROGRESS, Progress
from ..shutdown import STOP_SIGNALS, signals_held
from ..types import Entry
from .lifetime import exit_with_parent
from .resultcache import ResultCache, decode, encode

if TYPE_CHECKING:  # named in annotations only: see make_result
    from ..cards.cards import Result

MIN_ENTRIES_PER_JOB = 1000
"""Fewer workers than asked when each would get fewer entries than this.  Each worker sets jieba up
(about 1 s of CPU) and keeps its own memo caches: measured on 1,000 entries, two workers took 4.9 s
where one took 3.5 s; on 10,000, two were no slower than one."""
OWN_PROCESS_ENTRIES = 1000
"""In a build of this many entries, those to make are made in a worker even with ``jobs=1``: jieba
(120 MB) then lives only as long as the extraction, not through the packaging that follows (the build's
memory peak), and setting it up (0.7 s) overlaps with reading the cache (0.9 s for 10,000 entries)."""
_CHUNK = 32


@dataclass(frozen=True)
class EntryResults:
    results: tuple[Result, ...]
    """(review, cards) of every entry, in entry order."""
    cached: int
    """How many came from the cache."""


Companion: TypeAlias = "Callable[[Sequence[Entry], Sequence[Result]], bytes]"
"""More work on a chunk of freshly made results, done by the worker that made them: its bytes come back with the
chunk, and must hold the results too (the caller gets them in their place)."""


@dataclass(frozen=True)
class Companioned:
    """What a worker's companion made of one chunk: its bytes, and the indexes of the chunk's entries in order."""

    data: bytes
    indexes: tuple[int, ...]


Arrival: TypeAlias = "tuple[int, Result | None, Companioned | None]"
"""An entry's index, its result, and what the companion made of its chunk when a worker ran one (else None).  The
result is None then: the companion's bytes hold it (decoding it twice cost the main process about 0.6 s of its 5.9 s
of CPU in a 10,000-entry build with two workers)."""


class ResultStream:
    """The results of the entries asked for, each as soon as it is there (see :func:`result_stream`); use it in a ``with``.

    Iterating yields :data:`Arrival` tuples: first what the cache had, in entry
    order, then what is made.  Workers, if any, were started with the stream:
    they make entries while the caller handles the cached ones.  The end of the
    iteration, or of the ``with``, stops them.
    """

    def __init__(self, cached: list[tuple[int, Result]], made: Iterator[Arrival],
                 stop: Callable[[bool], None], progress: Progress) -> None:
        self._cached, self._made, self._stop, self._progress = cached, made, stop, progress
        self.cached = len(cached)
        """How many came from the cache."""

    def __iter__(self) -> Iterator[Arrival]:
        for index, result in self._cached:
            yield index, result, None
        for arrival in self._made:
            self._progress.advance()
            yield arrival
        self._stop(False)  # now: the workers' memory is gone before the deck is packaged, the cache written
        self._progress.end()

    def __enter__(self) -> ResultStream:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        # An error or an interrupt (Ctrl-C, SIGTERM) wants nothing more of the workers: they end mid-chunk.
        self._stop(kind is not None)


_MEMO_MODULES = ("text.segment", "text.units", "text.clauses", "extract.relations", "extract.extract", "extract.spans",
                 "extract.decisions", "extract.roles",
                 "cards.cards", "cards.accept", "cards.rank",
                 "cards.gate", "text.markup", "types")


def make_result(entry: Entry) -> Result:
    """:func:`deckgen.cards.cards.make_result`, loaded on first use: extraction and the card stages (their
    patterns and rule tables, 0.1-0.2 s to import) are not loaded by a build whose entries are all cached, nor by a
    build's main process while workers make its entries."""
    from ..cards.cards import make_result as make

    return make(entry)


def memo_caches() -> list[Any]:
    """The bounded memo caches that making entries fills and reuses across entries (the segmenter's too).

    Set-up caches (size 1 or unbounded: the segmenter, tag tables, templates) are not among them.
    Emptied before each entry, they show what an entry costs with no help from the ones before it
    (``benchmarks/reuse.py``), and they make every path that builds new objects run.
    """
    from ..text.segment import get_segmenter

    seg = get_segmenter()
    caches: list[Any] = [seg._memo, seg._block_memo]
    for name in _MEMO_MODULES:
        module = importlib.import_module(f"..{name}", __package__)
        caches += [v for v in vars(module).values() if hasattr(v, "cache_clear")]
    return [c for c in caches if (c.cache_info().maxsize or 0) > 1]


_companion: Companion | None = None
"""The companion of the worker this is (set when it starts)."""


def _start_worker(companion: Companion | None, parent: int) -> None:
    global _companion
    # Started with the stop signals held (see _Workers.make): the parent's handlers, copied by fork, must not run here.
    exit_with_parent(parent)
    # Ctrl-C reaches the whole process group: the parent decides, and stops its workers itself.  SIGTERM and
    # SIGHUP sent to a worker end it, as they would any process.
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:  # what the build ignores (nohup), its workers ignore too
            signal.signal(signum, signal.SIG_IGN if signum == signal.SIGINT else signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    _companion = companion
    # Workers run without the cycle collector too, as the build does (see deckgen.pipeline): making an
    # entry leaves no cyclic garbage (a test holds it to that), and collecting took 6-10% of a worker's time.
    gc.disable()


def _encoded_results(entries: Sequence[Entry]) -> tuple[list[bytes], bytes | None]:
    # Workers send results in the cache's format: the parent stores the bytes as they
    # are and decodes them around its own Entry objects (no copies of the entries), unless a
    # companion's bytes hold them.
    made = [make_result(entry) for entry in entries]
    return [encode(e, r) for e, r in zip(entries, made)], _companion(entries, made) if _companion else None


def entry_results(entries: Sequence[Entry], *, cache: bool = True, jobs: int = 1,
                  progress: Progress = NO_PROGRESS) -> EntryResults:
    """The review and cards of every entry, in entry order (all of :func:`result_stream`)."""
    ordered: list[Result | None] = [None] * len(entries)
    with result_stream(entries, cache=cache, jobs=jobs, progress=progress) as stream:
        for index, result, _ in stream:
            ordered[index] = result
    return EntryResults(tuple(r for r in ordered if r is not None), stream.cached)


def result_stream(entries: Sequence[Entry], wanted: Sequence[int] | None = None, *, cache: bool = True, jobs: int = 1,
                  progress: Progress = NO_PROGRESS, companion: Companion | None = None,
                  together: Callable[[int], object] | None = None) -> ResultStream:
    """The review and cards of the entries at indexes *wanted* (default: all), as they are there (see :class:`ResultStream`).

    *cache* reads and fills the per-user results cache; *jobs* > 1 makes the
    entries the cache lacks in up to that many worker processes (when there are
    enough of them).  *progress* hears of every entry done (of all *entries*:
    the caller tells it of those it did not want).  What the caller does
    with one result overlaps with the making of the next ones in the workers.
    When there are several workers, each also runs *companion* on each chunk it made: neighbouring entries
    to make for which *together* (given an index) is the same go in one chunk, else runs of a few entries.
    """
    wanted = range(len(entries)) if wanted is None else wanted
    store = ResultCache.open(cache and bool(wanted))
    progress.begin(len(entries))
    absent = store.missing(entries, wanted)
    jobs = max(1, min(jobs, len(absent) // MIN_ENTRIES_PER_JOB))
    from_workers: Iterator[Arrival] = iter(())
    workers = None
    if absent and (jobs > 1 or len(entries) >= OWN_PROCESS_ENTRIES):
        # Sent before the cache is read: jieba is set up and the absent entries are
        # made while this process reads and handles the others.
        workers = _Workers(jobs, companion if jobs > 1 else None)
        from_workers = workers.make(entries, absent, store, together if jobs > 1 else None)

    def stop(now: bool) -> None:
        if workers:
            workers.stop(now=now)
        store.close()

    try:
        missing = set(absent)
        present = [i for i in wanted if i not in missing]
        found = list(zip(present, store.get_many([entries[i] for i in present])))
    except BaseException:
        stop(True)
        raise
    cached = [(index, result) for index, result in found if result is not None]
    progress.advance(len(cached))
    # What no worker makes (all of it without workers, and a cache row that turned out damaged): made here, last.
    left = sorted([i for i, result in found if result is None] + ([] if workers else absent))
    return ResultStream(cached, itertools.chain(from_workers, _here(entries, left, store)), stop, progress)


def _here(entries: Sequence[Entry], indexes: Sequence[int], store: ResultCache) -> Iterator[Arrival]:
    for index in indexes:
        entry = entries[index]
        result = make_result(entry)
        if store.enabled:
            store.put(entry, encode(entry, result))
        yield index, result, None


class _Workers:
    """Worker processes making entries in the background from the moment they are sent."""

    def __init__(self, jobs: int, companion: Companion | None) -> None:
        import multiprocessing  # here: a build whose entries are all cached starts no process
        from concurrent.futures import ProcessPoolExecutor

        # fork where it is safe and cheap (Linux): workers start with what this process imported (the card stages
        # not among them: each worker loads those on its first entry, while this process reads the cache).
        method = "fork" if sys.platform.startswith("linux") else "spawn"
        self._pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method),
                                         initializer=_start_worker, initargs=(companion, os.getpid()))

    def make(self, entries: Sequence[Entry], indexes: Sequence[int], store: ResultCache,
             together: Callable[[int], object] | None = None) -> Iterator[Arrival]:
        """Start making the entries at *indexes* now; their arrivals, in that order, each stored in *store*.

        A chunk is a run of *indexes* for which *together* is the same (when given), else of :data:`_CHUNK`.
        """
        if together is None:
            chunks = [indexes[i:i + _CHUNK] for i in range(0, len(indexes), _CHUNK)]
        else:
            chunks = [list(run) for _, run in itertools.groupby(indexes, together)]
        work = [[entries[i] for i in chunk] for chunk in chunks]
        with signals_held():  # the workers start (fork) here: see _start_worker
            encoded = self._pool.map(_encoded_results, work)
        return self._arrivals(entries, chunks, encoded, store)

    @staticmethod
    def _arrivals(entries: Sequence[Entry], chunks: list[Sequence[int]],
                  encoded: Iterator[tuple[list[bytes], bytes | None]], store: ResultCache) -> Iterator[Arrival]:
        for chunk, (datas, extra) in zip(chunks, encoded):
            # With a companion its bytes hold the results, and any reader checks what is stored.
            companioned = None if extra is None else Companioned(extra, tuple(chunk))
            for index, data in zip(chunk, datas):
                entry = entries[index]
                result = None
                if companioned is None:
                    result = decode(data, entry)
                    if result is None:  # only a bug in encode/decode could get here: never lose an entry for it
                        result = make_result(entry)
                        data = encode(entry, result)
                store.put(entry, data)
                yield index, result, companioned

    def stop(self, *, now: bool = False) -> None:
        """Stop when the chunks being made are done (work not started is dropped), or *now*, ending the workers
        mid-chunk (the build was interrupted); again is harmless."""
        if now:
            # ProcessPoolExecutor ends its workers only when their work is done (Python 3.14 adds terminate_workers).
            for process in list((getattr(self._pool, "_processes", None) or {}).values()):
                process.kill()
        self._pool.shutdown(wait=True, cancel_futures=True)
