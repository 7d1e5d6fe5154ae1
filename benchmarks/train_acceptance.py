"""Train the acceptance model (deckgen/cards/accept.py) on blind reviewers' verdicts of every candidate card of the
development reviews, choose its thresholds, and compare it with the card model (issue #30, item 2).

    python benchmarks/train_acceptance.py corpus/dev corpus/dev2             # cross-validate, write rules/acceptance.json
    python benchmarks/train_acceptance.py corpus/dev corpus/dev2 --no-write

The verdicts are ``corpus/verdicts/*/ratings/*.jsonl`` (format: corpus/verdicts/README.md).  A candidate made
now is matched to its verdicts by its id (benchmarks/candidates.py: the PR and the card's text), so a card
reworded since it was rated has none and is left out.  A candidate rated by two reviewers counts once per rating,
each with half the weight.  Positive: rated KEEP.  Folds are seed files.  Reported, cross-validated: the area
under the ROC curve of the acceptance model and of the card model for KEEP (and for DROP), and, for each
threshold pair tried, the cards selected for the held-out PRs: how many were rated, their KEEP / FIX / DROP
shares, and the gold decisions they test.  The thresholds written are the ones that test the most gold decisions
with at most MAX_DROP of the rated selected cards rated DROP; when none reach that, of those within
DROP_TOLERANCE of the least DROP (two points: runs of the same selection on other folds differ by about that much),
the ones that test the most.  Only development folders may be given.
Needs the ``train`` extra (scikit-learn).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from candidates import candidate_id, development_reviews, shown  # noqa: E402
from deckgen.cards import accept  # noqa: E402
from deckgen.cards.cards import make_candidates  # noqa: E402
from deckgen.cards.gate import warnings_unless_rejected  # noqa: E402
from deckgen.cards.rank import features as card_features  # noqa: E402
from deckgen.cards.rank import probability as card_probability  # noqa: E402
from deckgen.cards.select import Thresholds, select_cards  # noqa: E402
from deckgen.report.quality import score_pr  # noqa: E402
from deckgen.text.segment import get_segmenter  # noqa: E402
from learn import FOLDS, auc, fit, fold_of, general_features  # noqa: E402

VERDICTS = ROOT / "corpus" / "verdicts"
MIN_FILES = 5
C_VALUES = (0.03, 0.1, 0.3)
UNIT = (0.0, 0.1, 0.2, 0.3, 0.4)
SECOND = (0.5, 0.6, 0.7)
HEADLINE = (0.0,)
PHRASE = (0.3, 0.4, 0.5, 0.6)
MAX_DROP = 0.05
DROP_TOLERANCE = 0.02


def read_verdicts(folder: Path) -> dict[str, list[dict]]:
    """Every rating of every candidate id, from ``*/ratings/*.jsonl`` under *folder*."""
    found: dict[str, list[dict]] = defaultdict(list)
    for path in sorted(folder.glob("*/ratings/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rating = json.loads(line)
                found[rating["id"]].append({**rating, "rater": path.stem})
    return found


def load(folders: list[Path], verdicts: dict[str, list[dict]]) -> list[dict]:
    """Per PR: its file, gold, review, candidates, and each rated candidate's index, features and ratings."""
    seg = get_segmenter()
    prs = []
    for file, entry, gold, review in development_reviews(folders):
        candidates = make_candidates(review, seg)
        echo = accept.echoes(candidates)
        rated = []
        for index, candidate in enumerate(candidates):
            findings = warnings_unless_rejected(candidate.card, seg)
            if findings is None:
                continue
            front, answer = shown(candidate.card)
            ratings = verdicts.get(candidate_id(file, entry.title, front, answer), [])
            checks = [f.check for f in findings]
            names = accept.features(candidate, checks, seg, review.clause_scores, echo)
            card = card_probability(card_features(candidate.card, checks, seg, review.clause_scores))
            rated.append({"index": index, "id": candidate_id(file, entry.title, front, answer),
                          "names": names, "ratings": ratings, "card": card})
        prs.append({"file": file, "gold": gold, "review": review, "candidates": candidates, "rated": rated})
    return prs


def examples(prs: list[dict]) -> tuple[list[list[str]], list[int], list[float], list[str]]:
    """(features, label, weight, seed file) of every rating: KEEP is kept (1), DROP is not (0), and FIX is half of
    each, since a learner keeps such a card only after editing it."""
    rows, labels, weights, files = [], [], [], []
    for pr in prs:
        for item in pr["rated"]:
            for rating in item["ratings"]:
                share = 1.0 / len(item["ratings"])
                kept = {"KEEP": ((1, share),), "FIX": ((1, share / 2), (0, share / 2)), "DROP": ((0, share),)}
                for label, weight in kept[rating["verdict"]]:
                    rows.append(item["names"])
                    labels.append(label)
                    weights.append(weight)
                    files.append(pr["file"])
    return rows, labels, weights, files


def selected(prs: list[dict], table: dict[str, float], bars: Thresholds) -> tuple[Counter[str], int, int, int]:
    """Verdicts of the cards selected for *prs* (``unrated`` for those with none), gold decisions tested, gold
    decisions, and selected cards."""
    seg = get_segmenter()
    verdicts: Counter[str] = Counter()
    tested = total = cards = 0
    for pr in prs:
        chosen = select_cards(pr["candidates"], seg, verdict=pr["review"].verdict, scores=pr["review"].clause_scores,
                              acceptance=table, thresholds=bars)
        by_text = {(c.card.key, c.card.prompt, c.card.answer): item for item in pr["rated"]
                   for c in [pr["candidates"][item["index"]]]}
        for card in chosen:
            cards += 1
            item = by_text.get((card.key, card.prompt, card.answer))
            ratings = item["ratings"] if item else []
            if not ratings:
                verdicts["unrated"] += 1
            for rating in ratings:
                verdicts[rating["verdict"]] += 1 / len(ratings)
        score = score_pr(pr["gold"], chosen, pr["review"].entry.review)
        tested, total = tested + len(score.tested), total + score.decisions
    return verdicts, tested, total, cards


def share(verdicts: Counter[str]) -> str:
    rated = sum(v for k, v in verdicts.items() if k != "unrated")
    return " / ".join(f"{k} {verdicts[k] / max(rated, 1):.1%}" for k in ("KEEP", "FIX", "DROP")) + \
        f" of {rated:.0f} rated ({verdicts['unrated']:.0f} unrated)"


def agreement(verdicts: dict[str, list[dict]]) -> str:
    twice = [r for r in verdicts.values() if len({x["rater"] for x in r}) >= 2]
    same = sum(1 for r in twice if r[0]["verdict"] == r[1]["verdict"])
    drop = sum(1 for r in twice if (r[0]["verdict"] == "DROP") == (r[1]["verdict"] == "DROP"))
    return f"{len(twice)} candidates rated twice: same verdict {same} ({same / max(len(twice), 1):.1%}), " \
           f"same DROP or not {drop} ({drop / max(len(twice), 1):.1%})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+", help="development folders, each with seeds/ and gold/")
    parser.add_argument("--verdicts", type=Path, default=VERDICTS, help="folder of the rating rounds")
    parser.add_argument("--no-write", action="store_true", help="only cross-validate")
    args = parser.parse_args()
    verdicts = read_verdicts(args.verdicts)
    prs = load(args.folders, verdicts)
    rows, labels, weights, files = examples(prs)
    counts = Counter(r["verdict"] for item in verdicts.values() for r in item)
    print(f"{len(verdicts)} candidates rated ({sum(counts.values())} ratings: {dict(counts)}); "
          f"{sum(1 for p in prs for i in p['rated'] if i['ratings'])} of {sum(len(p['rated']) for p in prs)} "
          f"candidates made now have a rating")
    print(agreement(verdicts))
    ratings = [(p["file"], item, r["verdict"]) for p in prs for item in p["rated"] for r in item["ratings"]]
    keeps = [int(v == "KEEP") for _, _, v in ratings]
    drops = [int(v == "DROP") for _, _, v in ratings]
    card_scores = [item["card"] for _, item, _ in ratings]
    results = {}
    for c in C_VALUES:
        models = {}
        for k in range(FOLDS):
            train = [n for n, f in enumerate(files) if fold_of(f) != k]
            allowed = general_features([(files[n], rows[n]) for n in train], MIN_FILES)
            models[k] = fit([rows[n] for n in train], [labels[n] for n in train], allowed, c,
                            [weights[n] for n in train])
        scores = [accept.probability(item["names"], models[fold_of(f)]) for f, item, _ in ratings]
        results[c] = (auc(scores, keeps), 1 - auc(scores, drops), models)
        print(f"C={c}: acceptance model AUC for KEEP {results[c][0]:.3f}, for DROP {results[c][1]:.3f}")
    print(f"card model (gold keys): AUC for KEEP {auc(card_scores, keeps):.3f}, for DROP {1 - auc(card_scores, drops):.3f}")
    best = max(C_VALUES, key=lambda c: results[c][1])
    models = results[best][2]
    print("selection, cross-validated (cards selected for held-out PRs):")
    card_model = [selected([p for p in prs if fold_of(p["file"]) == k], {}, Thresholds(second=0.2))
                  for k in range(FOLDS)]
    print(f"  card model: {summary(card_model)}")
    trials = {}
    for bars in (Thresholds(u, s, h, p) for h in HEADLINE for u in UNIT for s in SECOND for p in PHRASE if s >= u):
        trials[bars] = [selected([p for p in prs if fold_of(p["file"]) == k], models[k], bars) for k in range(FOLDS)]
        print(f"  acceptance {bars.unit}/{bars.second}/{bars.headline}/{bars.phrase}: {summary(trials[bars])}")
    fine = [b for b, r in trials.items() if drop_share(r) <= MAX_DROP]
    if fine:
        chosen = max(fine, key=lambda b: (sum(x[1] for x in trials[b]), -drop_share(trials[b])))
    else:  # no set is that precise: within a point of the least DROP, the one that tests the most
        least = min(drop_share(r) for r in trials.values())
        near = [b for b, r in trials.items() if drop_share(r) <= least + DROP_TOLERANCE]
        chosen = max(near, key=lambda b: (sum(x[1] for x in trials[b]), -drop_share(trials[b])))
        print(f"no thresholds give DROP <= {MAX_DROP:.0%}; of those within {DROP_TOLERANCE:.0%} of the least DROP "
              f"({least:.1%}), the one that tests the most gold decisions:")
    print(f"chosen thresholds: unit {chosen.unit}, second {chosen.second}, headline {chosen.headline}, "
          f"phrase {chosen.phrase}: "
          f"{summary(trials[chosen])}")
    if args.no_write:
        return
    allowed = general_features(list(zip(files, rows)), MIN_FILES)
    table = fit(rows, labels, allowed, best, weights)
    out = {"about": "deckgen/cards/accept.py: weights of the acceptance model and its thresholds, trained by "
                    "benchmarks/train_acceptance.py on blind verdicts of the development reviews' candidates",
           "trained_on": [str(f) for f in args.folders], "verdicts": sum(counts.values()), "C": best,
           "cross_validated": {"auc_keep": round(results[best][0], 4), "auc_drop": round(results[best][1], 4),
                               "selected": summary(trials[chosen])},
           "threshold": chosen.unit, "second": chosen.second, "headline": chosen.headline, "phrase": chosen.phrase,
           "weights": table}
    path = ROOT / "rules" / accept.ACCEPTANCE_FILE
    path.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}: {len(table)} weights")


def drop_share(results: list[tuple[Counter[str], int, int, int]]) -> float:
    verdicts = sum((r[0] for r in results), Counter())
    rated = sum(v for k, v in verdicts.items() if k != "unrated")
    return verdicts["DROP"] / max(rated, 1)


def summary(results: list[tuple[Counter[str], int, int, int]]) -> str:
    verdicts = sum((r[0] for r in results), Counter())
    tested, total, cards = (sum(r[i] for r in results) for i in (1, 2, 3))
    return f"{cards} cards, {share(verdicts)}; gold tested {tested}/{total} ({tested / max(total, 1):.3f})"


if __name__ == "__main__":
    main()
