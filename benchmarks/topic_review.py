"""The blind check of topic assignment (issue #31): write the kit for reviewers, and score their ratings.

``kit`` samples PRs of a seed folder with a fixed random seed, matches them with the taxonomy a build
of that folder uses (with no taxonomy file: the built-in one), and writes to the output folder:

- ``prs.md``: for the reviewers — each PR's repository, summary, review and assigned topics (Chinese and
  English names and the id); never the words that matched, nor the rules;
- ``key.json``: for us — each item's seed file, line, PR key and topic ids;
- ``README.md`` is written by hand (the reviewers' instructions) and left as it is.

``score`` reads the reviewers' JSON files and prints, per reviewer and together, the share of assignments
judged to fit, the share of PRs with an obvious topic missing, and how often two reviewers agree.

    python benchmarks/topic_review.py kit corpus/firstsight/seeds reviews/topics-firstsight --sample 100 --seed 31
    python benchmarks/topic_review.py score reviews/topics-firstsight/ratings-*.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def write_kit(folder: Path, out: Path, sample: int, seed: int) -> None:
    from deckgen.pipeline import list_topics

    report = list_topics([folder], explain=True)
    taxonomy_topics = {t.topic.id: t.topic for t in report.topics}
    chosen = random.Random(seed).sample(list(report.evidence), sample)
    lines = [f"# Topics of {sample} pull requests", "",
             "Each item: a PR's repository, its one-line summary, its review, and the topics it was assigned. "
             "Rate every assigned topic; see README.md.", ""]
    key = []
    for n, (entry, found) in enumerate(chosen, start=1):
        ids = [m.topic for m in found]
        lines += [f"## {n}", "", f"**Repository:** {entry.repo}", "", f"**Summary:** {entry.title}", "", "**Review:**", "",
                  *(f"> {line}" if line else ">" for line in entry.review.split("\n")), "", "**Assigned topics:**", ""]
        if ids == [report.catch_all]:
            lines.append(f"- (none: the PR got the catch-all topic {taxonomy_topics[ids[0]].title}, `{ids[0]}`)")
        else:
            lines += [f"- {taxonomy_topics[i].title} (`{i}`)" for i in ids]
        lines.append("")
        key.append({"n": n, "file": str(entry.path), "line": entry.title_line, "repo": entry.repo,
                    "pr_key": entry.pr_key, "title": entry.title, "topics": ids,
                    "catch_all": ids == [report.catch_all]})
    out.mkdir(parents=True, exist_ok=True)
    (out / "prs.md").write_text("\n".join(lines), encoding="utf-8")
    meta = {"folder": str(folder), "sample": sample, "random_seed": seed, "taxonomy": report.taxonomy,
            "prs_in_folder": report.entries, "items": key}
    (out / "key.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out / 'prs.md'} and {out / 'key.json'}: {sample} of {report.entries} PRs, "
          f"{sum(len(k['topics']) for k in key if not k['catch_all'])} assignments, "
          f"{sum(k['catch_all'] for k in key)} with the catch-all")


def score(files: list[Path]) -> None:
    ratings = {path.name: {item["n"]: item for item in json.loads(path.read_text("utf-8"))["items"]} for path in files}
    for name, items in ratings.items():
        verdicts = [v for item in items.values() for v in item.get("topics", {}).values()]
        fits = sum(v == "fits" for v in verdicts)
        missing = sum(bool(item.get("missing")) for item in items.values())
        print(f"{name}: {fits}/{len(verdicts)} assignments fit ({fits / max(len(verdicts), 1):.1%}); "
              f"{missing}/{len(items)} PRs miss an obvious topic ({missing / max(len(items), 1):.1%})")
    if len(ratings) == 2:
        (_, a), (_, b) = ratings.items()
        pairs = [(a[n]["topics"][t], b[n]["topics"].get(t)) for n in a if n in b for t in a[n].get("topics", {})]
        agree = sum(x == y for x, y in pairs)
        print(f"agreement on assignments: {agree}/{len(pairs)} ({agree / max(len(pairs), 1):.1%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    kit = commands.add_parser("kit", help="write prs.md and key.json")
    kit.add_argument("folder", type=Path)
    kit.add_argument("out", type=Path)
    kit.add_argument("--sample", type=int, default=100)
    kit.add_argument("--seed", type=int, default=31, help="the random seed (default 31, the issue's number)")
    rated = commands.add_parser("score", help="score the reviewers' JSON files")
    rated.add_argument("files", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "kit":
        write_kit(args.folder, args.out, args.sample, args.seed)
    else:
        score(args.files)


if __name__ == "__main__":
    main()
