"""Which of a PR's candidate cards a learner gets: fewer, better cards.

After the gate (:mod:`deckgen.cards.gate`) has rejected the broken ones, the
rest are ranked and taken in two rounds: first the best card of every decision
the review states (so every decision gets a card before any gets a second),
then at most one more card per decision: of another fact of it, asking the other way (why it was done,
or what), or else the mirror of its fact when that side asks for the decision by name or code; and one
cloze note per decision.  A PR gets at most
:data:`MAX_CARDS_PER_PR` cards, fewer when the review says it is not worth
reading closely; there is no minimum.  No two cards test the same text (an
answer, or a cloze gap: one fact in one direction), ask the same question, or
carry the same key, and no two questions nearly repeat each other.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..text.segment import Segmenter
from ..types import Card, CardKind, Verdict, norm
from .gate import Candidate, anki_cards, deletions_of, score, warnings_unless_rejected

MAX_CARDS_PER_PR = 8
"""Anki cards of one PR at most (a cloze note gives one per deletion number)."""
CARDS_BY_VERDICT = {Verdict.DEEP: MAX_CARDS_PER_PR, Verdict.UNKNOWN: 6, Verdict.SKIM: 5, Verdict.SKIP: 3}
"""Fewer cards for a PR the review calls worth only a skim, fewer still for one not worth reading."""
CARDS_PER_DECISION = 2
"""Cards of one decision (one sentence or enumeration item of the review) at most."""
_NEAR_REPEAT = 0.8
"""Character-trigram Jaccard of two questions with different answers above which one is dropped (A11)."""


def select_cards(candidates: list[Candidate], seg: Segmenter, limit: int = MAX_CARDS_PER_PR,
                 verdict: Verdict = Verdict.DEEP) -> list[Card]:
    """The candidates a learner gets, in candidate order, each with its score.

    *limit* caps the Anki cards; the review's *verdict* may cap them lower (:data:`CARDS_BY_VERDICT`).
    """
    cap = min(limit, CARDS_BY_VERDICT.get(verdict, MAX_CARDS_PER_PR))
    ranked: list[tuple[float, int, Candidate]] = []
    for index, candidate in enumerate(candidates):
        findings = warnings_unless_rejected(candidate.card, seg)
        if findings is not None:
            ranked.append((score(candidate, findings), index, candidate))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    chosen = _Chosen(cap)
    # Round 1: each decision's best card; round 2: a card of another fact of it; round 3: the mirror of a fact,
    # only when it asks for the decision by its name or code ("为避免静默丢 embedding，该 PR 怎么做？→ “能力标志 +
    # 启动期拒绝”的快速失败设计").  Other mirrors are not taken: learners found the second side mostly restated
    # the first ("为什么要尽早校验？→ 尽早暴露错误").
    for round_ in (1, 2, 3):
        for value, index, candidate in ranked:
            card = candidate.card
            taken = chosen.per_decision(card)
            if taken >= min(round_, CARDS_PER_DECISION):
                continue
            if round_ == 2 and candidate.fact in chosen.facts:
                continue
            if round_ == 3 and (card.kind == CardKind.CLOZE or not _NAMED.search(card.answer)):
                continue
            if chosen.fits(card):
                chosen.take(index, replace(card, score=value), candidate.fact)
    return chosen.in_candidate_order()


_NAMED = re.compile(r"[“「`]")
"""An answer that names the decision: a quoted name or a code span."""


class _Chosen:
    """The cards taken so far and what they already test."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.cards: list[tuple[int, Card]] = []
        self.total = 0
        self.marks: set[str] = set()
        self.decisions: dict[str, int] = {}
        self.clozed: set[str] = set()
        """Decisions that have a cloze note: one each."""
        self.facts: set[str] = set()
        self.directions: set[tuple[str, str]] = set()
        """(decision, direction) of the cards taken: see :func:`_direction`."""
        self.questions: list[tuple[set[str], str]] = []

    def per_decision(self, card: Card) -> int:
        return self.decisions.get(card.sentence, 0)

    def fits(self, card: Card) -> bool:
        if self.total + anki_cards(card) > self.cap or _marks(card) & self.marks:
            return False
        if (card.sentence, _direction(card)) in self.directions:
            return False  # a decision is asked what was done once, and why once
        if card.kind == CardKind.CLOZE:
            return card.sentence not in self.clozed
        grams, answer = _trigrams(card.prompt), norm(card.answer)
        return not any(_jaccard(grams, other) >= _NEAR_REPEAT and other_answer != answer or _same(answer, other_answer)
                       for other, other_answer in self.questions)

    def take(self, index: int, card: Card, fact: str = "") -> None:
        self.cards.append((index, card))
        self.facts.add(fact)
        self.total += anki_cards(card)
        self.marks |= _marks(card)
        self.decisions[card.sentence] = self.per_decision(card) + 1
        self.directions.add((card.sentence, _direction(card)))
        if card.kind == CardKind.CLOZE:
            self.clozed.add(card.sentence)
        else:
            self.questions.append((_trigrams(card.prompt), norm(card.answer)))

    def in_candidate_order(self) -> list[Card]:
        return [card for _, card in sorted(self.cards, key=lambda item: item[0])]


def _direction(card: Card) -> str:
    """What a card asks of its decision: why (a reason, purpose or effect), or what was done (everything else).

    Two cards of one decision that both ask what was done test one fact one way: learners rated the second a
    weaker duplicate.  A why card and a what card of one decision are a mirror pair, which is fine.
    """
    return "why" if card.kind == CardKind.WHY else "what"


def _marks(card: Card) -> set[str]:
    """What *card* tests and asks: its question, its key, and each text it hides (answer or gap)."""
    marks = {"q:" + norm(card.prompt), "k:" + card.key}
    if card.kind == CardKind.CLOZE:
        return marks | {"t:" + norm(body) for _, body in deletions_of(card)}
    return marks | {"t:" + norm(card.answer)}


def _same(mine: str, theirs: str) -> bool:
    """Two answers that differ by a leading word at most (将 X / X, 通过 X / X): one fact in one direction."""
    short, long_ = sorted((mine, theirs), key=len)
    return bool(short) and short in long_ and len(short) >= 0.8 * len(long_)


def _trigrams(text: str) -> set[str]:
    text = norm(text)
    return {text[i : i + 3] for i in range(max(len(text) - 2, 1))}


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(len(a | b), 1)
