"""How much of extraction's speed on a corpus comes from memo hits across entries (benchmarks only).

The synthetic corpora recombine the real seeds' sentences, so the same clauses
recur across thousands of entries and deckgen's bounded memo caches (jieba per
text and per block, the quality gate's plain forms and token sets) hit far more
often than on real reviews, which rarely repeat one another.  The floor has no
such caches.  This script makes every entry of a corpus twice, each run in a
fresh process: with the caches as they are, and with every memo cache cleared
before each entry (reuse within an entry kept, reuse across entries gone).

    python benchmarks/reuse.py /tmp/deckgen-bench/corpus-1000 [--limit 1000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def run(corpus: Path, limit: int, scoped: bool) -> float:
    """ms per entry of making every entry (in this process)."""
    from deckgen.parse import read_corpus
    from deckgen.results import make_result, memo_caches

    entries = read_corpus([corpus]).entries[:limit]
    memos = memo_caches()  # set-up caches (the segmenter, tag tables, templates) stay
    make_result(entries[0])
    start = time.perf_counter()
    for entry in entries:
        if scoped:
            for memo in memos:
                memo.cache_clear()
        make_result(entry)
    return (time.perf_counter() - start) / len(entries) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--limit", type=int, default=1000, help="entries to make (default %(default)s)")
    parser.add_argument("--scoped", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(run(args.corpus, args.limit, args.scoped))
        return
    results: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(2):
        for scoped in (False, True):
            out = subprocess.run([sys.executable, __file__, str(args.corpus), "--limit", str(args.limit), "--one",
                                  *(["--scoped"] if scoped else [])], check=True, capture_output=True, text=True)
            results[scoped].append(float(out.stdout))
    shared_ms, cleared_ms = min(results[False]), min(results[True])
    print(f"caches shared across entries: {shared_ms:.2f} ms/entry")
    print(f"caches cleared before each entry: {cleared_ms:.2f} ms/entry")
    print(f"reuse across entries makes extraction {cleared_ms / shared_ms:.2f}x faster on this corpus")


if __name__ == "__main__":
    main()
