"""Train the key-phrase model (deckgen/extract/spans.py) on the development half of the labelled corpus.

    python benchmarks/train_spans.py corpus/dev                 # cross-validate, then write rules/spans.json
    python benchmarks/train_spans.py corpus/dev corpus/dev2 --no-write

Every span the model may score, in every clause deckgen reads (the summary's and each decision unit's), is an
example: positive when it is, compared without markup, a gold decision's key or one of its alt_keys (the gold
keys are verbatim spans: "the shortest phrase any good card teaching this decision must show").  Folds are seed
files.  Reported: the area under the ROC curve, and of the gold keys that are a span of some clause, the share
among the top 1, 2 and 3 spans of their clause.  Only development folders may be given: seeds/, ../shared/dev,
the locked half and the first-sight sets stay measures.  Needs the ``train`` extra (scikit-learn).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from deckgen.extract.extract import span_sites  # noqa: E402
from deckgen.extract.spans import SPANS_FILE, probability, spans  # noqa: E402
from deckgen.report.quality import decision_keys, labelled_entries  # noqa: E402
from deckgen.text.segment import get_segmenter  # noqa: E402
from deckgen.types import norm  # noqa: E402
from learn import FOLDS, auc, fit, fold_of, general_features  # noqa: E402

MIN_FILES = 4
"""A word is a feature only when it occurs in this many seed files."""
C_VALUES = (0.1, 0.3, 1.0)
MEASURED = (1, 2, 3)


def load(folders: list[Path]) -> list[dict]:
    """Per clause: its seed file, its spans (start, end, features, label) and which gold keys it holds."""
    seg = get_segmenter()
    clauses = []
    for folder in folders:
        for entry, pr in labelled_entries(folder):
            keys = {norm(k) for d in pr["decisions"] for k in decision_keys(d) if norm(k)}
            for clause, site in span_sites(entry, seg):
                tokens = [t for t in seg.tokenize(clause) if t.text.strip()]
                rows = []
                for i, j, names in spans(clause, seg, site):
                    text = clause[tokens[i].start:tokens[j - 1].end]
                    rows.append((tokens[i].start, tokens[j - 1].end, names, int(norm(text) in keys)))
                clauses.append({"file": f"{folder.name}/{entry.path.name}", "rows": rows})
    return clauses


def top(rows: list[tuple[int, int, list[str], int]], scores: list[float], k: int) -> list[int]:
    """Indices of the *k* best spans that do not overlap (as deckgen.extract.spans.key_spans takes them)."""
    taken: list[int] = []
    for index in sorted(range(len(rows)), key=lambda n: (-scores[n], rows[n][0])):
        if len(taken) == k:
            break
        a, b = rows[index][:2]
        if all(b <= rows[t][0] or a >= rows[t][1] for t in taken):
            taken.append(index)
    return taken


def evaluate(clauses: list[dict], c: float) -> dict[str, float]:
    """Cross-validated AUC and top-k recall of the gold keys with regularisation *c*."""
    scores_all, labels_all = [], []
    found = {k: 0 for k in MEASURED}
    keys = 0
    for fold in range(FOLDS):
        train = [c_ for c_ in clauses if fold_of(c_["file"]) != fold]
        test = [c_ for c_ in clauses if fold_of(c_["file"]) == fold]
        allowed = general_features([(c_["file"], r[2]) for c_ in train for r in c_["rows"]], MIN_FILES)
        weights = fit([r[2] for c_ in train for r in c_["rows"]], [r[3] for c_ in train for r in c_["rows"]],
                      allowed, c)
        for clause in test:
            rows = clause["rows"]
            scores = [probability(r[2], weights) for r in rows]
            scores_all += scores
            labels_all += [r[3] for r in rows]
            positives = {n for n, r in enumerate(rows) if r[3]}
            keys += len(positives)
            for k in MEASURED:
                found[k] += len(positives & set(top(rows, scores, k)))
    return {"auc": auc(scores_all, labels_all), "keys": keys, **{f"top{k}": found[k] / max(keys, 1) for k in MEASURED}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+", help="development folders, each with seeds/ and gold/")
    parser.add_argument("--no-write", action="store_true", help="only cross-validate")
    args = parser.parse_args()
    clauses = load(args.folders)
    spans_ = sum(len(c["rows"]) for c in clauses)
    positives = sum(r[3] for c in clauses for r in c["rows"])
    print(f"{len(clauses)} clauses, {spans_} spans, {positives} of them gold keys")
    results = {c: evaluate(clauses, c) for c in C_VALUES}
    for c, r in results.items():
        print(f"C={c}: AUC {r['auc']:.3f}; of {r['keys']} keys, top 1 {r['top1']:.3f}, top 2 {r['top2']:.3f}, "
              f"top 3 {r['top3']:.3f}")
    best = max(C_VALUES, key=lambda c: (results[c]["top2"], results[c]["auc"]))
    if args.no_write:
        return
    rows = [r for c in clauses for r in c["rows"]]
    allowed = general_features([(c["file"], r[2]) for c in clauses for r in c["rows"]], MIN_FILES)
    weights = fit([r[2] for r in rows], [r[3] for r in rows], allowed, best)
    out = {"about": "deckgen/extract/spans.py: weights of the key-phrase model, trained by benchmarks/train_spans.py",
           "trained_on": [str(f) for f in args.folders], "C": best,
           "cross_validated": {k: round(v, 4) for k, v in results[best].items()}, "weights": weights}
    path = ROOT / "rules" / SPANS_FILE
    path.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}: {len(weights)} weights, C={best}")


if __name__ == "__main__":
    main()
