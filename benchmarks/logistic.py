"""The learning both of deckgen's models share (benchmarks/train_decisions.py, benchmarks/train_ranker.py).

L2-regularised logistic regression over named binary features, by full-batch AdaGrad: deterministic (no
randomness, a fixed order), and no dependency beyond Python.  Folds for cross-validation are seed files, by the
SHA-256 of their names, so no fold sees another's reviews.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Sequence

FOLDS = 5


def fold_of(name: str) -> int:
    """The cross-validation fold of the seed file *name*."""
    return int(hashlib.sha256(name.encode()).hexdigest(), 16) % FOLDS


def train(data: Sequence[tuple[Sequence[str], int]], *, l2: float, epochs: int, rate: float,
          min_count: int = 1) -> dict[str, float]:
    """Weights of a logistic model of *data* ((feature names, label 0 or 1) pairs); features seen in fewer than
    *min_count* examples are left out, weights smaller than 1e-4 dropped."""
    counts = Counter(f for names, _ in data for f in set(names))
    rows = [([f for f in names if counts[f] >= min_count], label) for names, label in data]
    w: dict[str, float] = defaultdict(float)
    g2: dict[str, float] = defaultdict(lambda: 1e-8)
    n = max(len(rows), 1)
    for _ in range(epochs):
        grad: dict[str, float] = defaultdict(float)
        for names, label in rows:
            z = sum(w[f] for f in names)
            p = 1 / (1 + math.exp(-max(min(z, 30), -30)))
            for f in names:
                grad[f] += (p - label) / n
        for f in set(grad) | set(w):
            gf = grad.get(f, 0.0) + (l2 / n) * w[f] * (f != "bias")
            g2[f] += gf * gf
            w[f] -= rate * gf / math.sqrt(g2[f])
    return {f: round(v, 4) for f, v in sorted(w.items()) if abs(v) >= 1e-4}
