"""Where the time of making entries goes, stage by stage, on given seed folders (benchmarks only).

Takes seed files or folders (default: the real-review corpus of ``real_corpus.py``,
1,000 entries, written under ``--work`` if it is not there yet) and does in one
process what a cold build does with each entry, without any cache or worker:
parse the files (``read_corpus``), make every entry's review and cards
(``make_result``: extraction, then the card stages), work out its notes
(``NoteMaker.notes``: topics and glossary matching, rendering, warnings), then
the corpus-wide topics step (``apply_curriculum``).  The package (genanki) is
not written: ``run.py`` and ``floor.py`` time whole builds.

Each stage is one or more of deckgen's functions, wrapped in a timer in every
module that holds them (a name imported with ``from .x import y`` is a binding of
its own, so each is patched).  The timer keeps a stack: a stage's *self* time is
its time less that of the stages called inside it, so the self times add up to
the total, and a stage called inside itself is counted once.  Segmentation
(``Segmenter._tokenize``: what the segmenter's memo lacks, jieba included) cuts
across all stages: its time is its own line, not its callers'.

It prints, for each stage, calls, inclusive and self ms (total and per entry) and
the self time's share of the total; then the memo caches' hit rates; then the
same work without timers (a pass after the timed one; a first pass, before it,
also pays what a process does once), each pass with deckgen's memos emptied
first; the timers' own cost (µs a call, measured on a function that does
nothing, times the calls: about 1% of the total); and ``jieba.cut`` of each
entry's summary and review, the floor's segmentation, for the ratio.  On a
shared machine two passes of the same code differ by up to 20-30%, so the timed
pass against the untimed one says little; the timers' own cost is the overhead.
All in one process: about four times the corpus's making time.

    python benchmarks/stages.py                                   # real reviews, 1,000 entries
    python benchmarks/stages.py corpus/dev/seeds corpus/dev2/seeds
    python benchmarks/stages.py /tmp/deckgen-bench/corpus-1000 --cprofile   # also the top 40 functions
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

STAGES: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    # (label, indent, the functions timed as this stage: "module:attribute" or "module:Class.method")
    ("parse", 0, ("deckgen.source.parse:read_corpus",)),
    ("make an entry", 0, ("deckgen.cards.cards:make_result",)),
    ("extraction", 1, ("deckgen.extract.extract:extract_review",)),
    ("reading, units", 2, ("deckgen.extract.extract:_read",)),
    ("roles", 3, ("deckgen.extract.roles:decision_text",)),
    ("decision model", 3, ("deckgen.extract.decisions:decision_score",)),
    ("facts of units", 2, ("deckgen.extract.extract:_unit_facts", "deckgen.extract.extract:_procedure_facts")),
    ("key phrases", 2, ("deckgen.extract.spans:key_spans",)),
    ("headline", 2, ("deckgen.extract.headline:headline_facts",)),
    ("cards", 1, ("deckgen.cards.cards:make_cards",)),
    ("candidates", 2, ("deckgen.cards.cards:make_candidates",)),
    ("selection", 2, ("deckgen.cards.select:select_cards",)),
    ("gate", 3, ("deckgen.cards.gate:warnings_unless_rejected",)),
    ("acceptance model", 3, ("deckgen.cards.accept:features", "deckgen.cards.accept:probability",
                             "deckgen.cards.accept:echoes")),
    ("ranker", 3, ("deckgen.cards.rank:features", "deckgen.cards.rank:probability")),
    ("notes", 0, ("deckgen.cache.notecache:NoteMaker.notes",)),
    ("matching", 1, ("deckgen.curriculum.curriculum:entry_curriculum",)),
    ("topics", 2, ("deckgen.curriculum.topics:match_topics",)),
    ("glossary, acronyms", 2, ("deckgen.curriculum.glossary:terms_used", "deckgen.curriculum.glossary:unknown_in")),
    ("rendering", 1, ("deckgen.deck.notes:built_note",)),
    ("warnings", 1, ("deckgen.deck.notes:entry_warnings",)),
    ("topics, whole corpus", 0, ("deckgen.curriculum.curriculum:apply_curriculum",)),
    ("segmentation (cross-cutting)", 0, ("deckgen.text.segment:Segmenter._tokenize",)),
)


class Clock:
    """Inclusive and self time and calls per stage, from timers that keep a stack of the stages running."""

    def __init__(self) -> None:
        self.inclusive: dict[str, float] = {}
        self.self_time: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._stack: list[list[Any]] = []  # [stage, start, time of the stages timed inside it]
        self._running: dict[str, int] = {}
        self._patched: list[tuple[Any, str, Any]] = []  # (owner, name, original): what uninstall puts back

    def reset(self) -> None:
        self.inclusive = {label: 0.0 for label, _, _ in STAGES}
        self.self_time = dict(self.inclusive)
        self.calls = {label: 0 for label, _, _ in STAGES}

    def timer(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """*fn*, timed as *stage* (a plain function, so that it binds as a method too)."""
        clock = self

        @functools.wraps(fn)  # its name, for the memo report
        def timed(*args: Any, **kwargs: Any) -> Any:
            if clock._running.get(stage):  # inside itself (recursion, or one of its functions calling another)
                return fn(*args, **kwargs)
            clock._running[stage] = 1
            frame = [stage, time.perf_counter(), 0.0]
            clock._stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - frame[1]
                clock._stack.pop()
                clock._running[stage] = 0
                clock.inclusive[stage] += elapsed
                clock.self_time[stage] += elapsed - frame[2]
                clock.calls[stage] += 1
                if clock._stack:
                    clock._stack[-1][2] += elapsed

        return timed

    def install(self) -> None:
        """Wrap every stage's functions, wherever deckgen's loaded modules hold them by name."""
        self.reset()
        for stage, _, targets in STAGES:
            for target in targets:
                module_name, attribute = target.split(":")
                module = importlib.import_module(module_name)
                if "." in attribute:  # a method: patched on its class, every instance's calls go through it
                    owner_name, name = attribute.split(".")
                    owner = getattr(module, owner_name)
                    self._patch(owner, name, self.timer(stage, getattr(owner, name)))
                    continue
                original = getattr(module, attribute)
                wrapped = self.timer(stage, original)
                for loaded in list(sys.modules.values()):
                    if getattr(loaded, "__name__", "").startswith("deckgen"):
                        for name, value in list(vars(loaded).items()):
                            if value is original:
                                self._patch(loaded, name, wrapped)

    def _patch(self, owner: Any, name: str, value: Any) -> None:
        self._patched.append((owner, name, vars(owner)[name]))
        setattr(owner, name, value)

    def uninstall(self) -> None:
        """Put every function back as it was."""
        for owner, name, original in reversed(self._patched):
            setattr(owner, name, original)
        self._patched.clear()


def _import_stages() -> None:
    # Every module that may import a stage's function by name, loaded before the patching (a module imported
    # later would bind the original).
    for name in ("deckgen.pipeline", "deckgen.cards.cards", "deckgen.cards.select", "deckgen.cards.accept",
                 "deckgen.extract.extract", "deckgen.extract.findings", "deckgen.cache.notecache",
                 "deckgen.cache.results", "deckgen.deck.notes", "deckgen.curriculum.curriculum"):
        importlib.import_module(name)


def measure(sources: list[Path], limit: int, profile: bool = False) -> dict[str, Any]:
    """Everything, in this process: a first pass without timers (it also pays what a process does once: compiling
    the taxonomy's patterns, filling the tag look-ups), one with timers, one without (the time without timers, to
    which the timed pass is compared), then jieba's ms per entry.

    Each pass starts with deckgen's memo caches empty (the set-up, jieba and the models, stays loaded).  With
    *profile*, a pass under cProfile prints the top 40 functions by cumulative time to stderr first.
    """
    gc.disable()  # as a build does (deckgen.pipeline): the cycle collector found nothing and cost a fifth
    _import_stages()
    from deckgen.cache.results import memo_caches
    from deckgen.text import segment

    memos = _unique(memo_caches())  # before the timers: they hide lru_cache's cache_clear (this also sets jieba up)
    _warm_up()

    def one_pass() -> tuple[int, float]:
        for memo in memos:
            memo.cache_clear()  # what one entry leaves for the next goes; set-up stays
        start = time.perf_counter()
        count = _make_all(sources, limit)
        return count, time.perf_counter() - start

    if profile:
        import cProfile
        import pstats

        with cProfile.Profile() as profiler:
            one_pass()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
    _, before = one_pass()
    def new_segmenter() -> None:
        # The segmenter binds _tokenize into its memo when it is made: made again once the timers are in (or out).
        nonlocal memos
        old = segment.get_segmenter()
        segment.get_segmenter.cache_clear()
        seg = segment.get_segmenter()
        memos = [seg._memo, seg._block_memo] + [m for m in memos if m not in (old._memo, old._block_memo)]
        _warm_up()

    clock = Clock()
    clock.install()
    new_segmenter()
    clock.reset()
    count, total = one_pass()
    hits = [(_memo_name(m), m.cache_info().hits, m.cache_info().misses) for m in memos]
    clock.uninstall()
    new_segmenter()
    _, after = one_pass()
    return {"entries": count, "total": total, "plain": after, "first": before,
            "inclusive": clock.inclusive, "self": clock.self_time, "calls": clock.calls, "memos": hits,
            "jieba_ms": _jieba_ms(sources, limit), "timer_us": _timer_cost()}


def _timer_cost(calls: int = 200_000) -> float:
    """µs a timer adds to one call (timing a function that does nothing, less calling it bare): with the count of
    timed calls, the timers' overhead without the machine's drift between passes."""
    clock = Clock()
    clock.reset()
    label = STAGES[0][0]

    def nothing() -> None:
        return None

    timed = clock.timer(label, nothing)
    clock._stack.append([STAGES[1][0], 0.0, 0.0])  # inside another stage, as most timed calls are
    start = time.perf_counter()
    for _ in range(calls):
        timed()
    with_timer = time.perf_counter() - start
    clock._stack.pop()
    start = time.perf_counter()
    for _ in range(calls):
        nothing()
    bare = time.perf_counter() - start
    return (with_timer - bare) / calls * 1e6


def _unique(caches: list[Any]) -> list[Any]:
    """*caches* without repeats (a memo imported by name in several modules is listed once for each)."""
    return list({id(c): c for c in caches}.values())


def _warm_up() -> None:
    """Load what a build loads once per process (jieba, tag tables, the models' weights) on an entry of ``seeds/``,
    not of the corpus measured."""
    from deckgen.cards import cards
    from deckgen.source.parse import read_corpus

    cards.make_result(read_corpus([ROOT / "seeds"]).entries[0])


def _make_all(sources: list[Path], limit: int) -> int:
    """What a cold build without cache or workers does with each entry (``deckgen.pipeline._entry_notes``, then the
    topics step); the number of entries."""
    from deckgen.cache.notecache import NoteMaker
    from deckgen.cards import cards
    from deckgen.curriculum import curriculum
    from deckgen.source import parse

    entries = parse.read_corpus(sources).entries[:limit]
    taxonomy, glossary = curriculum.load_data_files(sources)
    with NoteMaker(taxonomy, glossary, cache=False) as maker:
        maker.missing(entries)
        made = [maker.notes(entry, cards.make_result(entry)) for entry in entries]
    curriculum.apply_curriculum([n.review for n in made], [c for n in made for c in n.cards], taxonomy, glossary,
                                [n.curriculum for n in made])
    return len(entries)


def _jieba_ms(sources: list[Path], limit: int) -> float:
    """ms per entry of ``jieba.cut`` of its summary and review, as ``reuse.py`` (and the floor) segment it."""
    from deckgen.source.parse import read_corpus
    from reuse import jieba_ms

    return jieba_ms(read_corpus(sources).entries[:limit])


def _memo_name(memo: Any) -> str:
    wrapped = getattr(memo, "__wrapped__", None)
    name = getattr(wrapped, "__qualname__", None) or getattr(memo, "__qualname__", "?")
    return f"{getattr(wrapped, '__module__', '')}.{name}".removeprefix("deckgen.")


def table(result: dict[str, Any]) -> str:
    """The stage table of a "stages" measure."""
    n, total = result["entries"], result["total"] * 1e3
    head = f"{'stage':<34} {'calls':>8} {'incl ms':>9} {'ms/entry':>8} {'self ms':>9} {'ms/entry':>8} {'share':>6}"
    lines = [head, "-" * len(head)]
    for label, indent, _ in STAGES:
        incl, own = result["inclusive"][label] * 1e3, result["self"][label] * 1e3
        lines.append(f"{'  ' * indent + label:<34} {result['calls'][label]:>8} {incl:>9.0f} {incl / n:>8.2f} "
                     f"{own:>9.0f} {own / n:>8.2f} {own / total:>6.1%}")
    rest = total - sum(result["self"].values()) * 1e3
    lines.append(f"{'(the loop, outside any stage)':<34} {'':>8} {'':>9} {'':>8} {rest:>9.0f} {rest / n:>8.2f} "
                 f"{rest / total:>6.1%}")
    lines.append(f"{'total':<34} {'':>8} {total:>9.0f} {total / n:>8.2f} {total:>9.0f} {total / n:>8.2f} {1:>6.0%}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, nargs="*", help="seed files or folders (default: real reviews, 1,000)")
    parser.add_argument("--limit", type=int, default=1000, help="entries to make (default %(default)s)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/deckgen-bench"), help="where the default corpus is")
    parser.add_argument("--cprofile", action="store_true", help="also print the top 40 functions by cumulative time "
                        "(a pass of its own, without the stage timers)")
    args = parser.parse_args()
    if not args.corpus:
        from real_corpus import write_real_corpus

        args.corpus = [args.work / "corpus-real1000"]  # the folder run.py's real1000 uses
        if not (args.corpus[0] / "topics.toml").exists():
            write_real_corpus(1000, args.corpus[0])
    result = measure(args.corpus, args.limit, args.cprofile)
    n, plain = result["entries"], result["plain"]
    print(f"{n} entries of {', '.join(map(str, args.corpus))}\n")
    print(table(result))
    print("\nmemo caches (hits / calls):")
    for name, hits, misses in result["memos"]:
        if hits + misses:
            print(f"  {name:<40} {hits:>8} / {hits + misses:<8} {hits / (hits + misses):>6.1%}")
    print(f"\nwithout the timers: {plain / n * 1e3:.2f} ms/entry (the first pass: {result['first'] / n * 1e3:.2f}); "
          f"the timed pass took {result['total'] / plain - 1:+.1%}; the timers' own cost, "
          f"{result['timer_us']:.2f} µs a call × {sum(result['calls'].values())} calls, is "
          f"{result['timer_us'] * sum(result['calls'].values()) / 1e6 / result['total']:.1%} of the timed total")
    jieba_ms = result["jieba_ms"]
    print(f"jieba.cut of each entry's summary and review (the floor's segmentation): {jieba_ms:.2f} ms/entry")
    print(f"making an entry, its notes included, costs {plain / n * 1e3 / jieba_ms:.2f}x segmenting it")


if __name__ == "__main__":
    main()
