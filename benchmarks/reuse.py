"""How much of extraction's speed on a corpus comes from memo hits across entries, and what it costs next to
segmenting the same text once with jieba, as the floor does (benchmarks only).

The synthetic corpora recombine the real seeds' sentences, so the same clauses
recur across thousands of entries and deckgen's bounded memo caches (jieba per
text and per block, the quality gate's plain forms and token sets) hit far more
often than on real reviews, which rarely repeat one another.  The floor has no
such caches.  This script makes every entry of a corpus twice, each run in a
fresh process: with the caches as they are, and with every memo cache cleared
before each entry (reuse within an entry kept, reuse across entries gone).
A third run segments each entry's summary and review with ``jieba.cut``, the
floor's work for that entry: making an entry costs that many times as much.

    python benchmarks/reuse.py /tmp/deckgen-bench/corpus-1000 [--limit 1000]
    python benchmarks/reuse.py seeds tests/fixtures/heldout     # real reviews
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deckgen.types import Entry

MODES = ("shared", "cleared", "jieba")


def jieba_ms(entries: Sequence[Entry]) -> float:
    """ms per entry of ``jieba.cut`` of its summary and review: the floor's segmentation of that entry."""
    import jieba

    jieba.setLogLevel(60)
    jieba.initialize()
    start = time.perf_counter()
    for entry in entries:
        for _ in jieba.cut(entry.title):
            pass
        for _ in jieba.cut(entry.review):
            pass
    return (time.perf_counter() - start) / len(entries) * 1e3


def run(corpora: list[Path], limit: int, mode: str) -> float:
    """ms per entry of making every entry (in this process), or of segmenting its text with jieba."""
    from deckgen.cache.results import memo_caches
    from deckgen.cards.cards import make_result
    from deckgen.source.parse import read_corpus

    entries = read_corpus(corpora).entries[:limit]
    if mode == "jieba":
        return jieba_ms(entries)
    memos = memo_caches()  # set-up caches (the segmenter, tag tables, templates) stay
    make_result(entries[0])
    start = time.perf_counter()
    for entry in entries:
        if mode == "cleared":
            for memo in memos:
                memo.cache_clear()
        make_result(entry)
    return (time.perf_counter() - start) / len(entries) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, nargs="+", help="seed files or folders")
    parser.add_argument("--limit", type=int, default=1000, help="entries to make (default %(default)s)")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per measure, the fastest kept (default %(default)s)")
    parser.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(run(args.corpus, args.limit, args.one))
        return
    results: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(args.runs):
        for mode in MODES:  # in turns, so that each measure sees the same load
            out = subprocess.run([sys.executable, __file__, *map(str, args.corpus), "--limit", str(args.limit),
                                  "--one", mode], check=True, capture_output=True, text=True)
            results[mode].append(float(out.stdout))
    shared_ms, cleared_ms, jieba_ms = (min(results[mode]) for mode in MODES)
    print(f"caches shared across entries: {shared_ms:.2f} ms/entry")
    print(f"caches cleared before each entry: {cleared_ms:.2f} ms/entry")
    print(f"jieba.cut of each entry's text (the floor's segmentation): {jieba_ms:.2f} ms/entry")
    print(f"reuse across entries makes extraction {cleared_ms / shared_ms:.2f}x faster on this corpus")
    print(f"making an entry costs {shared_ms / jieba_ms:.2f}x segmenting it ({cleared_ms / jieba_ms:.2f}x without reuse)")


if __name__ == "__main__":
    main()
