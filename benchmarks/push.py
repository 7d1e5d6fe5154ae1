"""Time ``deckgen push`` into a real Anki desktop running AnkiConnect (benchmarks only; not part of the tests).

Each round starts Anki (aqt under Xvfb, a throw-away profile, the AnkiConnect add-on: the harness of
``tests/desktop/ankiconnect.py``, so it needs what the push tests need) and times, each a fresh
``deckgen push`` process:

* ``first``    the first push of a generated corpus (``make_corpus.py``) into the empty collection, with an
               empty per-user cache, no deck and no lock file: everything a fresh checkout does;
* ``changed``  the push after the summaries of enough entries were corrected (``。`` → ``！``, which keeps
               every GUID) to change ``--changed`` notes: those notes are updated in place.

The time inside Anki (reading what it holds, sending) is the ``-v`` output's ``anki`` and ``push`` stages.
Rounds take turns on one machine; min and median are printed.

    python benchmarks/push.py                          # 10,000 notes, 1,000 changed, 3 rounds
    python benchmarks/push.py --entries 1000 --changed 200 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from make_corpus import write_corpus  # noqa: E402

from tests.desktop.ankiconnect import AnkiDesktop  # noqa: E402

_STAGE_RE = re.compile(r"^(\w+)\s+([\d.]+) s", re.M)


def deckgen() -> list[str]:
    return [str(Path(sys.executable).with_name("deckgen"))]


def timed_push(corpus: Path, out: Path, url: str, cache: Path) -> tuple[float, dict[str, float], str]:
    """Wall seconds, the -v stage times and the summary line of one ``deckgen push``."""
    env = {**os.environ, "DECKGEN_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    done = subprocess.run([*deckgen(), "push", str(corpus), "-o", str(out), "--url", url, "-v"], env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"deckgen push failed:\n{done.stderr[-3000:]}")
    stages = {name: float(seconds) for name, seconds in _STAGE_RE.findall(done.stderr)}
    return wall, stages, done.stdout.strip().splitlines()[-1]


def correct_summaries(corpus: Path, lock: Path, notes: int) -> tuple[int, int]:
    """End the summaries of the first entries with ``！`` until their notes number at least *notes*; how many
    entries, and how many notes."""
    from deckgen.source.parse import parse_seed_file

    per_pr: dict[str, int] = {}
    for note in json.loads(lock.read_text("utf-8"))["notes"]:
        per_pr[note["pr"]] = per_pr.get(note["pr"], 0) + 1
    changed = entries = 0
    for path in sorted(corpus.glob("*.txt")):
        lines = path.read_text("utf-8").split("\n")
        for entry in parse_seed_file(path):
            if changed >= notes:
                break
            line = lines[entry.title_line - 1]
            lines[entry.title_line - 1] = (line[:-1] if line.endswith("。") else line) + "！"
            changed += per_pr.get(entry.pr_key, 0)
            entries += 1
        path.write_text("\n".join(lines), "utf-8")
        if changed >= notes:
            break
    return entries, changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=5650, help="corpus entries (5,650 make about 10,000 notes)")
    parser.add_argument("--changed", type=int, default=1000, help="notes the second push updates")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "deckgen-bench-push")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    pristine = args.work / "corpus"
    write_corpus(args.entries, pristine)
    results: dict[str, list[float]] = {"first": [], "changed": []}
    for round_ in range(1, args.rounds + 1):
        corpus, out, cache = args.work / "round", args.work / "out" / "deck.apkg", args.work / "cache"
        for folder in (corpus, out.parent, cache):
            shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(pristine, corpus)
        with AnkiDesktop("deckgen-bench-anki-") as anki:
            anki.start()
            wall, stages, summary = timed_push(corpus, out, anki.url, cache)
            results["first"].append(wall)
            print(f"round {round_} first:   {wall:6.2f} s  (in Anki {stages.get('anki', 0) + stages.get('push', 0):.2f} s)"
                  f"  {summary}", flush=True)
            entries, notes = correct_summaries(corpus, out.with_name(out.stem + ".lock.json"), args.changed)
            wall, stages, summary = timed_push(corpus, out, anki.url, cache)
            results["changed"].append(wall)
            print(f"round {round_} changed: {wall:6.2f} s  (in Anki {stages.get('anki', 0) + stages.get('push', 0):.2f} s)"
                  f"  {notes} notes of {entries} corrected entries; {summary}", flush=True)
    for name, times in results.items():
        print(f"{name:<8} min {min(times):6.2f} s  median {statistics.median(times):6.2f} s  ({len(times)} rounds)")


if __name__ == "__main__":
    main()
