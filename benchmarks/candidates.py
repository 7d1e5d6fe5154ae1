"""Every candidate card of a development corpus, written out for blind raters (issue #30, item 1).

    python benchmarks/candidates.py corpus/dev --out /work/verdicts/kit --batch-size 300

Writes ``candidates.jsonl`` (one candidate per line: ``id``, the seed ``file`` and PR ``title``, ``kind``, ``cue``,
the ``front`` and ``answer`` as a learner sees them, the card ``key``) and, for each batch of whole PRs, a
``batch-NN.md`` to give one rater: each PR's summary and review as written, then its candidates, shuffled, as a
learner would meet them (a cloze with ``[……]`` where its gap is).  Nothing in a batch says which rule made a
card or how deckgen scored it.  A candidate is every card deckgen offers that passes the quality gate, selected
or not.  Its ``id`` is a hash of the PR and the card's text: verdicts stay attached to the text they judged, so a
card reworded later is a new candidate.

Only development folders may be given: ``seeds/``, ``../shared/dev``, the locked half and the first-sight sets
stay measures, and their cards are never rated for training.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deckgen.cards.cards import make_candidates  # noqa: E402
from deckgen.cards.gate import warnings_unless_rejected  # noqa: E402
from deckgen.extract.extract import extract_review  # noqa: E402
from deckgen.report.quality import labelled_entries  # noqa: E402
from deckgen.text.markup import cloze_plain, deletions  # noqa: E402
from deckgen.text.segment import get_segmenter  # noqa: E402
from deckgen.types import Card, CardKind, Entry, Review  # noqa: E402

MEASURES = ("locked", "firstsight", "shared", "seeds", "golden")
"""Folder names that are measures: refused."""
GAP = "[……]"


def shown(card: Card) -> tuple[str, str]:
    """(front, answer) of *card* as a learner sees them: a cloze's first gap blanked, its other gaps filled in."""
    if card.kind != CardKind.CLOZE:
        return f"【{card.cue}】{card.prompt}", card.answer
    gaps = deletions(card.prompt)
    first = min(n for n, _ in gaps)
    text = card.prompt
    for number, body in gaps:
        marked = cloze_plain(text)  # {{cN::body}} form, to replace one gap at a time
        text = marked.replace(f"{{{{c{number}::{body}}}}}", GAP if number == first else body, 1)
    return f"【{card.cue}】{cloze_plain(text)}", " / ".join(body for n, body in gaps if n == first)


def candidate_id(file: str, title: str, front: str, answer: str) -> str:
    return "c" + hashlib.sha256("\0".join((file, title, front, answer)).encode()).hexdigest()[:10]


def development_reviews(folders: list[Path]) -> Iterator[tuple[str, Entry, dict, Review]]:
    """(``folder/seed file``, entry, gold, review) of every labelled PR of *folders*; exits when one of them is a
    measure."""
    seg = get_segmenter()
    for folder in folders:
        if any(part in MEASURES for part in folder.resolve().parts[-3:]):
            sys.exit(f"benchmarks: {folder} is a measure, not development data")
        for entry, gold in labelled_entries(folder):
            yield f"{folder.name}/{entry.path.name}", entry, gold, extract_review(entry, seg)


def collect(folders: list[Path]) -> list[dict]:
    """Per PR: its file, summary, review and every candidate that passes the gate, in candidate order."""
    seg = get_segmenter()
    prs = []
    for file, entry, _, review in development_reviews(folders):
        seen: set[str] = set()
        cards = []
        for candidate in make_candidates(review, seg):
            if warnings_unless_rejected(candidate.card, seg) is None:
                continue
            front, answer = shown(candidate.card)
            cid = candidate_id(file, entry.title, front, answer)
            if cid in seen:
                continue
            seen.add(cid)
            cards.append({"id": cid, "file": file, "title": entry.title, "kind": candidate.card.kind.value,
                          "cue": candidate.card.cue, "front": front, "answer": answer, "key": candidate.card.key})
        prs.append({"file": file, "title": entry.title, "review": entry.review, "cards": cards})
    return prs


def batch_text(prs: list[dict], name: str) -> str:
    lines = [f"# {name}", ""]
    for number, pr in enumerate(prs, start=1):
        lines += [f"## PR {number}", "", f"**Summary:** {pr['title']}", "", "**Review:**", "", pr["review"], ""]
        cards = list(pr["cards"])
        random.Random(pr["file"] + pr["title"]).shuffle(cards)
        for card in cards:
            lines.append(f"- `{card['id']}` Q: {card['front']}")
            lines.append(f"  A: {card['answer']}")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+", help="development folders, each with seeds/ and gold/")
    parser.add_argument("--out", type=Path, required=True, help="folder for candidates.jsonl and the batches")
    parser.add_argument("--batch-size", type=int, default=300, help="candidates per batch, about (whole PRs)")
    parser.add_argument("--skip", type=Path, help="a candidates.jsonl whose candidates are rated already")
    args = parser.parse_args()
    prs = collect(args.folders)
    done = set()
    if args.skip:
        done = {json.loads(line)["id"] for line in args.skip.read_text(encoding="utf-8").splitlines() if line}
    for pr in prs:
        pr["cards"] = [c for c in pr["cards"] if c["id"] not in done]
    prs = [pr for pr in prs if pr["cards"]]
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "candidates.jsonl").open("w", encoding="utf-8") as out:
        for pr in prs:
            for card in pr["cards"]:
                out.write(json.dumps(card, ensure_ascii=False) + "\n")
    batches: list[list[dict]] = [[]]
    for pr in prs:
        if sum(len(p["cards"]) for p in batches[-1]) >= args.batch_size:
            batches.append([])
        batches[-1].append(pr)
    for number, batch in enumerate(batches, start=1):
        name = f"batch-{number:02d}"
        (args.out / f"{name}.md").write_text(batch_text(batch, name), encoding="utf-8")
        print(f"{name}: {len(batch)} PRs, {sum(len(p['cards']) for p in batch)} candidates")
    print(f"{sum(len(p['cards']) for p in prs)} candidates of {len(prs)} PRs")


if __name__ == "__main__":
    main()
