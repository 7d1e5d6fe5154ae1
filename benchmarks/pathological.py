"""Time builds of pathological reviews at doubling lengths: does a build grow linearly with a review? (benchmarks only)

Issue #27: one long sentence (a run of text with no 。；！？) made the extraction time of its
review grow about quadratically with its length.  Each family here is one seed file holding one
review, built cold (``deckgen build --no-cache``) in a fresh interpreter:

* ``connective``  通过 repeated, no punctuation: one sentence, a connective every two characters;
* ``invisible``   decisions (通过 X 实现 Y, 采用 X 而非 Y, 把 X 移到 Y…) joined by zero-width spaces
                  (U+200B) instead of 。: a sentence only as long as it looks to deckgen;
* ``enumerated``  a list of decisions, one ``- item`` line each: thousands of enumerated items.

The time reported is the build's beyond start-up: minus the same build of a one-sentence review,
measured in the same run.  Each doubling of the length should at most double it (growth 2.0);
the issue's target is at most 2.2 per doubling from 10,000 to 40,000 characters, and a
40,000-character single-sentence review in under 20 s.  A build still running after
``--timeout`` seconds is stopped and shown as ``>``.  No test asserts any of this.

    python benchmarks/pathological.py                             # every family, 2,500 to 40,000 characters
    python benchmarks/pathological.py --families connective --sizes 10000,20000,40000 --repeat 3
"""

from __future__ import annotations

import argparse
import compileall
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_DECISIONS = ("通过引入缓存实现实例复用以避免重复构造", "采用共享内存而非管道传输以减少拷贝",
              "把调度逻辑移到工作进程从而降低主进程负载")
_ITEM = "- 通过 `opt_{n}` 实现实例复用以避免重复构造"


def _repeated(pieces: Callable[[int], str], separator: str, chars: int) -> str:
    out, length, n = [], 0, 0
    while length < chars:
        piece = pieces(n)
        out.append(piece)
        length += len(piece) + len(separator)
        n += 1
    return separator.join(out)[:chars]


FAMILIES: dict[str, Callable[[int], str]] = {
    "connective": lambda chars: "通过" * (chars // 2),
    "invisible": lambda chars: _repeated(lambda n: _DECISIONS[n % len(_DECISIONS)], "\u200b", chars),
    "enumerated": lambda chars: "关键设计决策：\n" + "\n".join(
        _ITEM.format(n=n) for n in range(max(1, chars // len(_ITEM.format(n=1000))))),
}
BASELINE = "这是一个值得精读的 PR。通过 `lru_cache` 实现重采样器复用以提升性能。"


def seed_file(folder: Path, review: str) -> Path:
    path = folder / "review.txt"
    path.write_text(f"synth/pathological\n\n一个病态评审的 PR\n\n{review}\n", encoding="utf-8")
    return path


def build_seconds(review: str, work: Path, timeout: float) -> float | None:
    """Wall time of a cold build of one seed file holding *review*; None past *timeout*."""
    with tempfile.TemporaryDirectory(dir=work) as folder:
        seeds = seed_file(Path(folder), review)
        args = [sys.executable, "-m", "deckgen", "build", str(seeds), "-o", str(Path(folder) / "deck.apkg"), "-q",
                "--no-cache"]
        env = {**os.environ, "DECKGEN_CACHE_DIR": str(work / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
        start = time.perf_counter()
        try:
            done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout, cwd=work)
        except subprocess.TimeoutExpired:
            return None
        if done.returncode != 0:
            raise SystemExit(f"failed: {' '.join(args)}\n{done.stderr}")
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated (default: %(default)s)")
    parser.add_argument("--sizes", default="2500,5000,10000,20000,40000",
                        help="review lengths in characters, comma-separated (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=1, help="builds per measurement, the median kept (default 1)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a build is stopped (default 120)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "deckgen-pathological")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    compileall.compile_dir(ROOT / "deckgen", quiet=1)  # as run.py: time the build, not the compiler
    build_seconds(BASELINE, args.work, args.timeout)  # jieba's dictionary, kept in the cache folder once
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'family':<11} {'chars':>7} {'beyond start-up':>16} {'growth per doubling':>20}")
    for family in args.families.split(","):
        previous: tuple[int, float] | None = None
        for chars in sizes:
            review = FAMILIES[family](chars)
            runs, start_up = [], []
            for _ in range(args.repeat):
                start_up.append(build_seconds(BASELINE, args.work, args.timeout) or 0.0)
                runs.append(build_seconds(review, args.work, args.timeout))
            base = statistics.median(start_up)
            if None in runs:
                stopped = f"> {args.timeout - base:.1f} s"
                print(f"{family:<11} {len(review):>7,} {stopped:>16}", flush=True)
                previous = None
                continue
            beyond = max(statistics.median([r for r in runs if r is not None]) - base, 0.001)
            # From the size before: the ratio of the times, per doubling of the length (2.0 is linear).
            growth = f"{(beyond / previous[1]) ** (1 / math.log2(len(review) / previous[0])):.2f}" if previous else ""
            print(f"{family:<11} {len(review):>7,} {beyond:>14.2f} s {growth:>20}", flush=True)
            previous = (len(review), beyond)


if __name__ == "__main__":
    main()
