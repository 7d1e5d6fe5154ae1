"""What the models trained on reviewers' data share (benchmarks/train_spans.py, benchmarks/train_acceptance.py):
L2-regularised logistic regression over named binary features, by scikit-learn (``pip install -e '.[train]'``),
folds by seed file, and the area under the ROC curve.

Deterministic: lbfgs has no randomness, and examples come in a fixed order.  A word-valued feature (``pw=采用``)
is kept only when it occurs in at least ``min_files`` seed files, so no weight names a word of one review.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from logistic import FOLDS, fold_of  # noqa: F401  (benchmarks/logistic.py: the same folds as the older models)

LEXICAL = ("pw=", "xw=", "fw=", "lw=", "w=", "qw=", "aw=", "c2=", "c3=")
"""Prefixes of features whose value is a word or characters of the text."""


def general_features(rows: Sequence[tuple[str, Sequence[str]]], min_files: int) -> set[str]:
    """The features of *rows* ((seed file, features) pairs) that may be learned: every feature that is not
    lexical, and each lexical one seen in at least *min_files* seed files."""
    files: dict[str, set[str]] = defaultdict(set)
    for name, features in rows:
        for feature in features:
            if feature.startswith(LEXICAL):
                files[feature].add(name)
    allowed = {f for f, names in files.items() if len(names) >= min_files}
    return {f for _, features in rows for f in features if not f.startswith(LEXICAL) or f in allowed}


def fit(rows: Sequence[Sequence[str]], labels: Sequence[int], allowed: set[str], c: float,
        sample_weight: Sequence[float] | None = None) -> dict[str, float]:
    """Weights of a logistic model (``bias`` the intercept) of the examples, over the *allowed* features."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = DictVectorizer()
    x = vectorizer.fit_transform([{f: 1 for f in names if f in allowed and f != "bias"} for names in rows])
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(x, list(labels), sample_weight=sample_weight)
    found = {name: round(float(w), 4) for name, w in zip(vectorizer.get_feature_names_out(), model.coef_[0])
             if abs(w) >= 1e-3}
    found["bias"] = round(float(model.intercept_[0]), 4)
    return dict(sorted(found.items()))


def auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """The area under the ROC curve: how often a positive example outscores a negative one."""
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(list(labels), list(scores))) if len(set(labels)) == 2 else float("nan")
