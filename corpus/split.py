#!/usr/bin/env python3
"""Split one writer's finished corpus into the development half and the locked half, by file.

    python3 corpus/split.py /work/corpus/w5        # copies w5's files into corpus/dev and corpus/locked

The rule was fixed before any file of the corpus was read or any rule was tuned on it: a writer's seed files
are ordered by the SHA-256 of their names, and the 1st, 3rd, 5th … go to ``dev/``, the 2nd, 4th … to
``locked/`` (each with its gold file).  Per writer, so both halves hold every writer's projects and styles.
Only names and counts are printed: nobody reads the locked half; it is measured, to report, at the end of a
round (``benchmarks/quality.py corpus/locked/seeds --gold corpus/locked/gold``).
"""

import hashlib
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def split(writer: Path) -> tuple[list[str], list[str]]:
    seeds = sorted((writer / "seeds").glob("*.txt"), key=lambda p: hashlib.sha256(p.name.encode()).hexdigest())
    halves: tuple[list[str], list[str]] = ([], [])
    for position, seed in enumerate(seeds):
        half = "dev" if position % 2 == 0 else "locked"
        gold = writer / "gold" / f"{seed.stem}.json"
        for source, folder in ((seed, "seeds"), (gold, "gold")):
            target = HERE / half / folder / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        halves[position % 2].append(seed.name)
    return halves


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        dev, locked = split(Path(folder))
        print(f"{folder}: dev {len(dev)} files {sorted(dev)}; locked {len(locked)} files")
