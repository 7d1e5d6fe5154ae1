"""How many PRs the taxonomy places: per folder of seeds, the share of PRs with a topic other than the catch-all.

Uses the taxonomy a build of each folder would (``topics.toml`` beside the seeds over the
built-in one, else the built-in one alone), or ``--taxonomy FILE``.  Prints, per folder, the
PRs matched, the topics per PR and each topic's PR count; ``--unmatched`` also lists the PRs
that only got the catch-all (leave it off for a corpus that is only measured, never tuned on).

    python benchmarks/topics.py corpus/dev/seeds ../shared/dev/seeds --unmatched
    python benchmarks/topics.py corpus/locked/seeds corpus/firstsight/seeds
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    from deckgen import BuildOptions
    from deckgen.pipeline import list_topics

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="seed folders, each measured on its own")
    parser.add_argument("--taxonomy", type=Path, help="a taxonomy file (as deckgen build --taxonomy)")
    parser.add_argument("--unmatched", action="store_true", help="list the PRs that match no topic")
    args = parser.parse_args()

    total = matched = 0
    for folder in args.folders:
        report = list_topics([folder], BuildOptions(taxonomy=args.taxonomy), explain=True)
        placed = report.entries - len(report.unmatched)
        total, matched = total + report.entries, matched + placed
        per_pr = sum(len([m for m in found if m.topic != report.catch_all]) for _, found in report.evidence)
        print(f"{folder}: {placed}/{report.entries} PRs match a topic ({placed / report.entries:.1%}), "
              f"{per_pr / report.entries:.2f} topics per PR; {report.taxonomy}")
        print("  " + ", ".join(f"{t.topic.id} {len(t.prs)}" for t in report.topics))
        if args.unmatched:
            print("".join(f"  no topic: {e.path}:{e.title_line}  {e.title}\n" for e in report.unmatched), end="")
    if len(args.folders) > 1:
        print(f"all: {matched}/{total} ({matched / total:.1%})")


if __name__ == "__main__":
    main()
