"""A clause of a review in; how likely it states a design decision out: a small linear model.

The role cue lists (:mod:`.roles`) say what a clause is when one of their words is in it; most clauses of a
review written in an unfamiliar style hold none.  This model scores any clause: a logistic model over its
character n-grams and jieba words (code spans stand as one symbol, so no identifier is learned), the role cues
it holds, and its place in the review.  Its weights are data (``rules/decisions.json``), trained by
``benchmarks/train_decisions.py`` on the development half of the labelled corpus only: a clause is a decision
when it holds a key of a gold decision, and none when it lies inside a gold ``not_decisions`` part.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import lru_cache

from ..files.datadir import model_weights, read_model
from ..text.segment import Segmenter
from .roles import has_decision_cue, role_of

DECISIONS_FILE = "decisions.json"
_CODE = re.compile(r"`[^`]*`")
_LATIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/+#-]*")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def masked(clause: str) -> str:
    """*clause* with code spans, English words and numbers each standing as one symbol: no name is learned."""
    return _DIGITS.sub("9", _LATIN.sub("A", _CODE.sub("C", clause)))


def clause_features(clause: str, seg: Segmenter, *, first: bool = False, item: bool = False,
                    named: bool = False, kept: bool = False) -> list[str]:
    """The features of one *clause*: where it stands (the review's first sentence, an enumeration item, a named
    decision), whether the role rules keep it (*kept*), the role cues it holds, its words and its character
    n-grams."""
    text = masked(clause)
    found = ["bias", f"role={role_of(clause) or '-'}"]
    if kept:
        found.append("kept_by_rules")
    if has_decision_cue(clause):
        found.append("decision_cue")
    if first:
        found.append("first_sentence")
    if item:
        found.append("item")
    if named:
        found.append("named")
    if _CODE.search(clause):
        found.append("has_code")
    found.extend(f"w={t.text}" for t in seg.tokenize(text) if t.text.strip() and not t.protected)
    padded = f"^{text}$"
    for n in (2, 3):
        found.extend(f"c{n}={padded[i:i + n]}" for i in range(len(padded) - n + 1))
    return found


@lru_cache(maxsize=1)
def weights() -> dict[str, float]:
    """The model's weights (``rules/decisions.json``); empty when there is none."""
    return model_weights(read_model(DECISIONS_FILE))


def probability(names: Iterable[str], table: dict[str, float] | None = None) -> float:
    """The model's probability that a clause with these features states a decision (0.5 with no model)."""
    table = weights() if table is None else table
    z = sum(table.get(name, 0.0) for name in names)
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


@lru_cache(maxsize=1)
def _split_weights() -> tuple[dict[str, float], dict[str, float], dict[str, float], dict[str, float]]:
    """The weights by kind of feature, keyed without their prefix: words, bigrams, trigrams, the rest."""
    words: dict[str, float] = {}
    bigrams: dict[str, float] = {}
    trigrams: dict[str, float] = {}
    rest: dict[str, float] = {}
    for name, weight in weights().items():
        for prefix, table in (("w=", words), ("c2=", bigrams), ("c3=", trigrams)):
            if name.startswith(prefix):
                table[name[len(prefix):]] = weight
                break
        else:
            rest[name] = weight
    return words, bigrams, trigrams, rest


@lru_cache(maxsize=16384)  # a build reads the same clauses in several stages, and corpora repeat phrasings
def decision_score(clause: str, seg: Segmenter, *, first: bool = False, item: bool = False, named: bool = False,
                   kept: bool = False) -> float:
    """:func:`probability` of :func:`clause_features`, without making the feature names: a build scores every
    clause of every review."""
    words, bigrams, trigrams, rest = _split_weights()
    text = masked(clause)
    flags = ["bias", f"role={role_of(clause) or '-'}"]
    flags += [name for name, on in (("kept_by_rules", kept), ("decision_cue", has_decision_cue(clause)),
                                    ("first_sentence", first), ("item", item), ("named", named),
                                    ("has_code", bool(_CODE.search(clause)))) if on]
    z = sum(rest.get(name, 0.0) for name in flags)
    z += sum(words.get(t.text, 0.0) for t in seg.tokenize(text) if t.text.strip() and not t.protected)
    padded = f"^{text}$"
    get2, get3 = bigrams.get, trigrams.get
    z += sum(get2(padded[i:i + 2], 0.0) for i in range(len(padded) - 1))
    z += sum(get3(padded[i:i + 3], 0.0) for i in range(len(padded) - 2))
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))
