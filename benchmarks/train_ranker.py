"""Train the card ranker (deckgen/cards/rank.py) on the development half of the labelled corpus, and compare it
with the hand-written ranking by cross-validation.

    python benchmarks/train_ranker.py corpus/dev            # cross-validate, then write rules/ranker.json
    python benchmarks/train_ranker.py corpus/dev --no-write # only the comparison

Every candidate card that passes the quality gate is an example: positive when its answer (or cloze gap) holds
a key of one of its PR's gold decisions, negative otherwise.  Folds are seed files (5 groups by the SHA-256 of
the file name), so no fold sees another fold's reviews.  The comparison is end to end: for the held-out files,
cards are selected with the model's scores and with the hand-written ranking, and both decks are scored
against the gold (decisions tested, off-target cards).  Only the development half may be given: seeds/,
../shared/dev and the locked half stay measures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from deckgen.cards.cards import make_candidates  # noqa: E402
from deckgen.cards.gate import warnings_unless_rejected  # noqa: E402
from deckgen.cards.rank import RANKER_FILE, features  # noqa: E402
from deckgen.cards.select import Thresholds, select_cards  # noqa: E402
from deckgen.extract.extract import extract_review  # noqa: E402
from deckgen.report.quality import anki_cards, decision_keys, labelled_entries, score_pr  # noqa: E402

from deckgen.text.segment import get_segmenter  # noqa: E402
from logistic import FOLDS, fold_of, train  # noqa: E402  (benchmarks/logistic.py)

FLOORS = ((0.0, 0.0), (0.2, 0.0), (0.2, 0.3), (0.2, 0.4), (0.2, 0.5), (0.3, 0.3), (0.1, 0.3))
"""The thresholds compared: (second, unit), see deckgen.cards.select.Thresholds."""
L2 = 1.0
EPOCHS = 300
RATE = 0.5


def learn(data: list[tuple[list[str], int]]) -> dict[str, float]:
    return train(data, l2=L2, epochs=EPOCHS, rate=RATE)


def load(folder: Path) -> list[dict]:
    """Per PR: its file, gold, candidates, and each passing candidate's features and label."""
    seg = get_segmenter()
    prs = []
    for entry, pr in labelled_entries(folder):
        review = extract_review(entry, seg)
        candidates = make_candidates(review, seg)
        keys = [k for d in pr["decisions"] for k in decision_keys(d)]
        examples = []
        for candidate in candidates:
            findings = warnings_unless_rejected(candidate.card, seg)
            if findings is None:
                continue
            tested = [t for a in anki_cards(candidate.card) for t in a.tested]
            label = int(any(k in t for k in keys for t in tested))
            examples.append((features(candidate.card, [f.check for f in findings], seg, review.clause_scores), label))
        prs.append({"file": entry.path.name, "gold": pr, "review": review, "candidates": candidates, "examples": examples})
    return prs




def deck_score(prs: list[dict], model: dict[str, float], floor: float = 0.0,
               unit_floor: float = 0.0) -> tuple[int, int, int, int, int]:
    """Decisions tested, decisions, off-target cards, cards, PRs with no card, selecting with *model*."""
    seg = get_segmenter()
    tested = total = off = cards = empty = 0
    for pr in prs:
        chosen = select_cards(pr["candidates"], seg, verdict=pr["review"].verdict, model=model,
                              scores=pr["review"].clause_scores, acceptance={},
                              thresholds=Thresholds(unit=unit_floor, second=floor))
        s = score_pr(pr["gold"], chosen, pr["review"].entry.review)
        tested, total = tested + len(s.tested), total + s.decisions
        off, cards, empty = off + len(s.off), cards + len(s.cards), empty + (not s.cards)
    return tested, total, off, cards, empty


def line(label: str, result: tuple[int, int, int, int, int]) -> str:
    tested, total, off, cards, empty = result
    return (f"{label:14} tested {tested}/{total} ({tested / max(total, 1):.3f})  off-target {off}/{cards} "
            f"({off / max(cards, 1):.1%})  PRs with no card {empty}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="the development half: a folder with seeds/ and gold/")
    parser.add_argument("--no-write", action="store_true", help="only cross-validate")
    parser.add_argument("--floor", type=float, default=0.0, help="the floor to ship (chosen by the comparison)")
    args = parser.parse_args()
    if args.corpus.resolve().name != "dev":
        sys.exit("train only on the development half (a folder named dev)")
    prs = load(args.corpus)
    print(f"{len(prs)} PRs, {sum(len(p['examples']) for p in prs)} candidate cards, "
          f"{sum(l for p in prs for _, l in p['examples'])} positive")
    rules_total = [0] * 5
    model_totals = {floors: [0] * 5 for floors in FLOORS}
    for k in range(FOLDS):
        held = [p for p in prs if fold_of(p["file"]) == k]
        model = learn([e for p in prs if fold_of(p["file"]) != k for e in p["examples"]])
        for i, value in enumerate(deck_score(held, {})):
            rules_total[i] += value
        for (floor, unit_floor), total in model_totals.items():
            for i, value in enumerate(deck_score(held, model, floor, unit_floor)):
                total[i] += value
    print("cross-validated over seed files (the same held-out PRs for each):")
    print(line("hand ranking", tuple(rules_total)))
    for (floor, unit_floor), total in model_totals.items():
        print(line(f"model {floor}/{unit_floor}", tuple(total)))
    if not args.no_write:
        model = learn([e for p in prs for e in p["examples"]])
        out = ROOT / "rules" / RANKER_FILE
        out.write_text(json.dumps({
            "about": "Weights of the card ranker (deckgen/cards/rank.py), trained by benchmarks/train_ranker.py on the "
                     "development half of the labelled corpus (corpus/dev); feature names are documented there.",
            "trained_on": sorted({p["file"] for p in prs}),
            "floor": args.floor,
            "weights": model}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out.relative_to(ROOT)}: {len(model)} weights")


if __name__ == "__main__":
    main()
