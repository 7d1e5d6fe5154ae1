"""Does a deck built by an older deckgen carry its users through a rebuild with this checkout? (benchmarks only)

Builds the seeds with deckgen at *--from* (a git commit, checked out in a temporary worktree), imports the deck
into a fresh collection with Anki's own backend, answers every card once, then rebuilds with this checkout and
the same lock file, prints ``deckgen plan``, imports the new deck and checks Anki's rules: no note conflicting,
every note that keeps its GUID keeps its scheduling and review log, no note lost.  Exit 1 if any fails.

    python benchmarks/regen.py                      # from 8720d97 (before issue #25), seeds/
    python benchmarks/regen.py --from HEAD~3 seeds tests/fixtures/dev
    python benchmarks/regen.py --from c48fc35 --old-seeds     # the old deck of seeds/ as they were at c48fc35

With ``--old-seeds`` the older deckgen builds the seed folders as they were at that commit (the same paths in
its checkout), which is what its users studied; without it, both build this checkout's seed files, which an
older deckgen may not read (a data file with a key it does not know).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest

ROOT = Path(__file__).resolve().parent.parent
BUILD = """
import sys
from pathlib import Path
import deckgen
assert deckgen.__file__.startswith(sys.argv[1]), deckgen.__file__
from deckgen import BuildOptions, build_deck
report = build_deck([Path(p) for p in sys.argv[4:]], Path(sys.argv[2]), BuildOptions(timestamp=int(sys.argv[3])))
print(report.cards, "cards;", getattr(report, "changes", ""))
"""


def build(checkout: Path, deck: Path, stamp: int, seeds: list[Path], env: dict[str, str]) -> str:
    """Build *seeds* into *deck* with the deckgen of *checkout* (first on the path); its summary line."""
    run = subprocess.run([sys.executable, "-c", BUILD, str(checkout), str(deck), str(stamp), *map(str, seeds)],
                         env={**env, "PYTHONPATH": str(checkout)}, capture_output=True, text=True, cwd=checkout)
    if run.returncode:
        sys.exit(f"build with {checkout} failed:\n{run.stderr[-2000:]}")
    return run.stdout.strip()


def imported(col: Collection, deck: Path) -> dict[str, int]:
    """Import *deck* with Anki's default options; how many notes were new, updated, duplicate, conflicting."""
    log = col.import_anki_package(ImportAnkiPackageRequest(package_path=str(deck),
                                                           options=ImportAnkiPackageOptions())).log
    return {name: len(getattr(log, name)) for name in ("new", "updated", "duplicate", "conflicting")}


def scheduling(col: Collection) -> dict[str, tuple]:
    """Each note's GUID and the scheduling of its cards."""
    return {note.guid: tuple(sorted((c.ivl, c.due, c.reps, c.lapses, c.queue, c.type) for c in note.cards()))
            for note in map(col.get_note, col.find_notes(""))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seeds", type=Path, nargs="*", default=[ROOT / "seeds"])
    parser.add_argument("--from", dest="commit", default="8720d97", help="the older deckgen (a git commit)")
    parser.add_argument("--old-seeds", action="store_true", help="the older deckgen builds the seeds of its own commit")
    args = parser.parse_args()
    seeds = [p.resolve() for p in args.seeds]
    with tempfile.TemporaryDirectory(prefix="deckgen-regen-") as tmp:
        work = Path(tmp)
        old = work / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(old), args.commit], check=True)
        try:
            env = {**os.environ, "DECKGEN_CACHE_DIR": str(work / "cache")}
            deck = work / "decks" / "deckgen.apkg"
            deck.parent.mkdir()
            old_seeds = [old / p.relative_to(ROOT) for p in seeds] if args.old_seeds else seeds
            print(f"{args.commit}:", build(old, deck, 1_760_000_000, old_seeds, env))
            col = Collection(str(work / "collection.anki2"))
            print("first import:", imported(col, deck))
            for card_id in col.find_cards(""):
                card = col.get_card(card_id)
                card.start_timer()
                col.sched.answerCard(card, 3)
            before, reviews = scheduling(col), col.db.scalar("select count() from revlog")
            plan = subprocess.run([sys.executable, "-m", "deckgen", "plan", *map(str, seeds), "-o", str(deck)],
                                  env={**env, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, cwd=ROOT)
            print(plan.stdout.split("Import advice:")[0].rstrip())
            print("this checkout:", build(ROOT, deck, 1_770_000_000, seeds, env))
            second = imported(col, deck)
            after = scheduling(col)
            kept = [guid for guid in before if guid in after]
            moved = [guid for guid in kept if before[guid] != after[guid]]
            lost = len(before) - len(kept)
            now = col.db.scalar("select count() from revlog")
            col.close()
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=True)
    print("second import:", second)
    print(f"notes kept by GUID {len(kept)} of {len(before)}; scheduling changed on {len(moved)}; notes lost {lost}; "
          f"review log {now} entries (was {reviews})")
    ok = second["conflicting"] == 0 and not moved and not lost and now == reviews
    print("passes" if ok else "FAILS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
