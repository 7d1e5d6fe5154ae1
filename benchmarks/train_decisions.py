"""Train the decision-clause model (deckgen/extract/decisions.py) on the development half of the labelled
corpus, and compare it with the role rules (deckgen/extract/roles.py) by cross-validation.

    python benchmarks/train_decisions.py corpus/dev            # cross-validate, then write rules/decisions.json
    python benchmarks/train_decisions.py corpus/dev --no-write # only the comparison

Each clause of a review (as the role rules cut them) is an example when the gold labels it: a decision when it
holds a key of one of its PR's gold decisions, none when it lies inside a gold ``not_decisions`` part; other
clauses are left out.  The clauses are those the runtime scores (:func:`deckgen.extract.extract.unit_clauses`: what
the role rules keep of a unit, after their rewrites, or a unit they cut whole).  Folds are seed files (5 groups by
the SHA-256 of the file name).  The rules predict "decision" for a clause they keep
(:func:`deckgen.extract.roles.decision_text`).  Only the development half may
be given.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from deckgen.extract.decisions import DECISIONS_FILE, clause_features, probability  # noqa: E402
from deckgen.extract.extract import unit_clauses  # noqa: E402
from deckgen.extract.roles import decision_text  # noqa: E402
from deckgen.report.quality import decision_keys, labelled_entries, plain  # noqa: E402

from deckgen.text.markup import without_markers  # noqa: E402
from deckgen.text.segment import get_segmenter  # noqa: E402
from deckgen.text.units import split_units, strip_bold  # noqa: E402
from logistic import FOLDS, fold_of, train  # noqa: E402  (benchmarks/logistic.py)

L2 = 2.0
EPOCHS = 150
RATE = 0.3
MIN_COUNT = 2


def learn(data: list[tuple[list[str], int]]) -> dict[str, float]:
    return train(data, l2=L2, epochs=EPOCHS, rate=RATE, min_count=MIN_COUNT)


def examples(folder: Path) -> list[tuple[str, list[str], int, int]]:
    """(file, features, label, rules' prediction) for every labelled clause of the corpus in *folder*."""
    seg = get_segmenter()
    out = []
    for entry, pr in labelled_entries(folder):
        keys = [k for d in pr["decisions"] for k in decision_keys(d)]
        nots = [plain(p) for p in pr.get("not_decisions", [])]
        text, bold = strip_bold(without_markers(entry.review))
        for number, unit in enumerate(split_units(text, bold)):
            kept = decision_text(unit)
            for clause, is_kept in unit_clauses(unit, kept):
                flat = plain(clause)
                if any(k in flat for k in keys):
                    label = 1
                elif any(flat in p for p in nots):
                    label = 0
                else:
                    continue
                names = clause_features(clause, seg, first=number == 0, item=bool(unit.ordinal),
                                        named=bool(unit.heading), kept=is_kept)
                out.append((entry.path.name, names, label, int(is_kept)))
    return out




def report(label: str, pairs: list[tuple[int, int]]) -> str:
    tp = sum(1 for y, p in pairs if y and p)
    fp = sum(1 for y, p in pairs if not y and p)
    fn = sum(1 for y, p in pairs if y and not p)
    accuracy = sum(1 for y, p in pairs if y == p) / max(len(pairs), 1)
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    return f"{label:12} accuracy {accuracy:.3f}  decisions found {recall:.3f}  of those called decisions {precision:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="the development half: a folder with seeds/ and gold/")
    parser.add_argument("--no-write", action="store_true", help="only cross-validate")
    args = parser.parse_args()
    if args.corpus.resolve().name != "dev":
        sys.exit("train only on the development half (a folder named dev)")
    data = examples(args.corpus)
    positives = sum(label for _, _, label, _ in data)
    print(f"{len(data)} labelled clauses, {positives} decisions; always 'decision' scores "
          f"{max(positives, len(data) - positives) / len(data):.3f}")
    model_pairs, rule_pairs = [], []
    for k in range(FOLDS):
        model = learn([(names, label) for f, names, label, _ in data if fold_of(f) != k])
        for f, names, label, rule in data:
            if fold_of(f) == k:
                model_pairs.append((label, int(probability(names, model) >= 0.5)))
                rule_pairs.append((label, rule))
    print("cross-validated over seed files:")
    print(report("role rules", rule_pairs))
    print(report("model", model_pairs))
    if not args.no_write:
        model = learn([(names, label) for _, names, label, _ in data])
        out = ROOT / "rules" / DECISIONS_FILE
        out.write_text(json.dumps({
            "about": "Weights of the decision-clause model (deckgen/extract/decisions.py), trained by "
                     "benchmarks/train_decisions.py on the development half of the labelled corpus (corpus/dev).",
            "trained_on": sorted({f for f, _, _, _ in data}),
            "weights": model}, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
        print(f"wrote {out.relative_to(ROOT)}: {len(model)} weights")


if __name__ == "__main__":
    main()
