"""A candidate card in; how likely it asks a key decision of its PR out: a small linear model.

Many candidates of one decision pass the quality gate (a contrast, a purpose, an in-place question, a cloze);
which one a learner gets decides whether the card asks what the review says matters.  The choice is a
logistic model over features of the card that hold for any review (its kind and relation, the shape and
length of its answer and question, the gate's warnings, where in its decision it comes from), never words of
particular PRs.  Its weights are data (``rules/ranker.json``), trained by ``benchmarks/train_ranker.py`` on the
development half of the labelled corpus only; the same card always gets the same score.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any

from ..files.datadir import data_dir, model_weights, read_model
from ..text.markup import CODE_SPAN
from ..text.segment import Segmenter, Token, units
from ..types import Card, CardKind

RANKER_FILE = "ranker.json"
_ASCII = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/+-]*")
_DIGIT = re.compile(r"\d")
_CUES = tomllib.loads((data_dir("rules") / "ranker.toml").read_text(encoding="utf-8"))
_CONTRAST, _REASON, _PROBLEM = (re.compile("|".join(_CUES[name])) for name in ("contrast", "reason", "problem"))


def _bucket(n: int, edges: Iterable[int]) -> str:
    for edge in edges:
        if n <= edge:
            return f"<={edge}"
    return "more"


@lru_cache(maxsize=4096)  # a PR's candidates share answers
def _edge_shapes(seg: Segmenter, answer: str) -> tuple[str, str]:
    """The shapes of *answer*'s first and last words (see :func:`_edge_shape`)."""
    return _edge_shape(seg, seg.first_tokens(answer)), _edge_shape(seg, seg.last_tokens(answer))


def _edge_shape(seg: Segmenter, tokens: Iterator[Token]) -> str:
    """The first of *tokens* that is not blank (an answer's first or last word, read from that end): ``P`` for code
    or English, else the first letter of its part of speech; empty when there is none."""
    token = next((t for t in tokens if t.text.strip()), None)
    if token is None:
        return ""
    return "P" if token.protected else seg.pos(token.text)[:1]


def clause_score(card: Card, scores: Sequence[tuple[str, float]]) -> float | None:
    """How likely the clause *card* asks about states a decision: the best-scored clause of its decision that holds
    its answer (or gap), else of its decision at all; None for a card from the summary line or with no scores."""
    tested = [t.replace("`", "") for t in card.answer.split("；")] if card.kind == CardKind.CLOZE else [card.answer.replace("`", "")]
    mine = _clauses_of(tuple(scores), card.sentence)
    holding = [p for c, p in mine if any(t and t in c for t in tested)]
    if holding:
        return max(holding)
    return max((p for _, p in mine), default=None)


@lru_cache(maxsize=256)  # a PR's candidates come from a few sentences
def _clauses_of(scores: tuple[tuple[str, float], ...], sentence: str) -> tuple[tuple[str, float], ...]:
    """The clauses of *scores* (without backticks) that are in *sentence*'s decision, with their scores."""
    sentence = sentence.replace("`", "")
    return tuple((c, p) for c, p in _without_backticks(scores) if c in sentence or sentence in c)


@lru_cache(maxsize=64)  # every candidate of a review reads its clauses' scores
def _without_backticks(scores: tuple[tuple[str, float], ...]) -> tuple[tuple[str, float], ...]:
    return tuple((c.replace("`", ""), p) for c, p in scores)


def features(card: Card, warnings: Iterable[str], seg: Segmenter,
             scores: Sequence[tuple[str, float]] = ()) -> list[str]:
    """The features of *card* (with the gate's warning checks *warnings*, and the decision scores of its review's
    clauses *scores*): names, each with value 1."""
    answer = card.answer if card.kind != CardKind.CLOZE else card.answer.split("；")[0]
    family = card.key.split(":")[1] if card.key.count(":") >= 2 else card.key.split(":")[0]
    plain = answer.replace("`", "")
    first, last = _edge_shapes(seg, plain)
    sentence = card.sentence
    where = sentence.find(plain) if answer else -1
    found = [
        "bias",
        f"kind={card.kind.value}",
        f"rel={card.relation.value}",
        f"family={card.kind.value}:{family}",
        f"answer_units{_bucket(units(answer), (1, 2, 4, 8, 12, 16, 24, 35))}",
        f"question_units{_bucket(units(card.prompt), (8, 14, 20, 30, 45))}",
        f"first_pos={first or '-'}",
        f"last_pos={last or '-'}",
        f"sentence_units{_bucket(units(sentence), (15, 30, 60, 100))}",
    ]
    if CODE_SPAN.search(card.answer):
        found.append("answer_code")
    if _ASCII.search(answer):
        found.append("answer_latin")
    if answer.replace("`", "").isascii():
        found.append("answer_all_latin")
    if _DIGIT.search(answer):
        found.append("answer_digit")
    if "的" in answer:
        found.append("answer_de")
    if "、" in answer or "和" in answer or "与" in answer:
        found.append("answer_and")
    if "，" in answer or "," in answer:
        found.append("answer_comma")
    if _CONTRAST.search(sentence):
        found.append("sentence_contrast")
    if _REASON.search(sentence):
        found.append("sentence_reason")
    if _PROBLEM.search(answer):
        found.append("answer_problem")
    if sentence.startswith(("「", "“")) or "：" in sentence[:24] or ":" in sentence[:24]:
        found.append("sentence_named")
    if where >= 0:
        found.append(f"answer_at{_bucket(int(10 * where / max(len(sentence), 1)), (0, 2, 5, 9))}")
    if card.kind == CardKind.HEADLINE or card.sentence == card.entry.title:
        found.append("from_title")
    found.extend(f"warn={w}" for w in sorted(set(warnings)))
    chance = clause_score(card, scores)
    if chance is not None:
        found.append(f"decision{_bucket(int(10 * chance), (1, 3, 5, 7, 8, 9))}")
    return found


@lru_cache(maxsize=1)
def _model() -> dict[str, Any]:
    return read_model(RANKER_FILE)


@lru_cache(maxsize=1)
def weights() -> dict[str, float]:
    """The model's weights (``rules/ranker.json``); none, and every card scores the same, when there is no file."""
    return model_weights(_model())


def model_floor(name: str = "floor") -> float:
    """A threshold of ``rules/ranker.json``: ``floor``, the least probability a second card of a decision may have
    when no acceptance model is shipped (:mod:`.accept`)."""
    return float(_model().get(name, 0.0))


def probability(names: Iterable[str], table: dict[str, float] | None = None) -> float:
    """The model's probability that a card with these features asks a key decision."""
    table = weights() if table is None else table
    z = sum(table.get(name, 0.0) for name in names)
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))
