"""Which of a PR's candidate cards a learner gets: fewer, better cards.

After the gate (:mod:`deckgen.cards.gate`) has rejected the broken ones, every candidate gets the probability
that a learner keeps it (:mod:`deckgen.cards.accept`, trained on blind reviewers' verdicts; without that model,
the card model of :mod:`deckgen.cards.rank`), and cards are taken in this order while the cap allows: the
headline card (the change the PR summary states); for each decision unit, in review order, its candidate most
likely kept, if that clears the threshold (so every decision gets a card before any gets a second, and a tight
cap drops second cards, not later decisions); then second cards, the likeliest first, above their own threshold.
A key phrase's card (:func:`is_phrase_card`) is taken for a unit only when no other card of it clears the bar,
and never as a second card.
A unit with no candidate above the threshold gets no card: coverage comes from better candidates, not a lower
bar.  A PR gets at most :data:`MAX_CARDS_PER_PR` cards, fewer when the review says it is not worth reading closely;
a PR that would get none gets its likeliest card that passes the gate.  No two cards test the same text (an
answer, or a cloze gap: one fact in one direction), ask the same question, or carry the same key, and no two
questions nearly repeat each other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..text.markup import CODE_SPAN
from ..text.segment import Segmenter
from ..types import Card, CardKind, Verdict, norm
from . import accept
from .gate import Candidate, anki_cards, deletions_of, score, warnings_unless_rejected
from .rank import features, model_floor, probability, weights

MAX_CARDS_PER_PR = 8
"""Anki cards of one PR at most (a cloze note gives one per deletion number)."""
CARDS_BY_VERDICT = {Verdict.DEEP: MAX_CARDS_PER_PR, Verdict.UNKNOWN: 6, Verdict.SKIM: 5, Verdict.SKIP: 3}
"""Fewer cards for a PR the review calls worth only a skim, fewer still for one not worth reading."""
CARDS_PER_DECISION = 2
"""Cards of one decision (one sentence or enumeration item of the review) at most."""
_NEAR_REPEAT = 0.8
"""Character-trigram Jaccard of two questions with different answers above which one is dropped (A11)."""


@dataclass(frozen=True)
class Thresholds:
    """The least probability of a card a decision unit gets (``unit``), of a second card (``second``), of the
    headline card (``headline``), and of a key phrase's card (``phrase``, see :func:`is_phrase_card`)."""

    unit: float = 0.0
    second: float = 0.0
    headline: float = 0.0
    phrase: float = 0.0

    @classmethod
    def shipped(cls) -> Thresholds:
        """The acceptance model's thresholds, or, without it, the card model's floor for second cards."""
        if accept.weights():
            return cls(*(accept.threshold(name) for name in ("threshold", "second", "headline", "phrase")))
        return cls(second=model_floor())


def is_phrase_card(candidate: Candidate) -> bool:
    """Whether *candidate* asks a key phrase the span model found (a gap or an in-place question), or is a gap in
    the summary: such a card is taken only for a unit (or the headline) no other card of clears its threshold,
    never as a second card.  Blind raters kept fewer of them (46% of gaps against 60–74% of
    questions read from the review's relations and the summary's forms: corpus/verdicts, round 1), and a deck of
    gaps teaches the template."""
    return candidate.marker == "span" or (candidate.card.kind == CardKind.CLOZE and candidate.marker == "headline")


def select_cards(candidates: list[Candidate], seg: Segmenter, limit: int = MAX_CARDS_PER_PR,
                 verdict: Verdict = Verdict.DEEP, model: dict[str, float] | None = None,
                 scores: Sequence[tuple[str, float]] = (), acceptance: dict[str, float] | None = None,
                 thresholds: Thresholds | None = None) -> list[Card]:
    """The candidates a learner gets, in candidate order, each with its probability as its score.

    *limit* caps the Anki cards; the review's *verdict* may cap them lower (:data:`CARDS_BY_VERDICT`).  Cards are
    scored by the acceptance model (*acceptance* weights, by default the shipped ones), or without one by the card
    model (*model* weights, by default the shipped ones), the gate's rank breaking ties; with neither, by the
    gate's rank alone.  *scores* are the review's clause decision scores (:attr:`deckgen.types.Review.clause_scores`),
    which the models read.  *thresholds* default to the shipped ones (:meth:`Thresholds.shipped`).
    """
    cap = min(limit, CARDS_BY_VERDICT.get(verdict, MAX_CARDS_PER_PR))
    acceptance = accept.weights() if acceptance is None else acceptance
    table = weights() if model is None else model
    bars = thresholds or Thresholds.shipped()
    echo = accept.echoes(candidates) if acceptance else None
    assessed: list[tuple[float, float, int, Candidate]] = []
    for index, candidate in enumerate(candidates):
        findings = warnings_unless_rejected(candidate.card, seg)
        if findings is None:
            continue
        checks = [f.check for f in findings]
        if acceptance and echo is not None:
            chance = accept.probability(accept.features(candidate, checks, seg, scores, echo), acceptance)
        elif table:
            chance = probability(features(candidate.card, checks, seg, scores), table)
        else:
            chance = 1.0
        assessed.append((round(10 * chance + 0.01 * score(candidate, findings), 4), chance, index, candidate))
    best_first = sorted(assessed, key=lambda item: (-item[0], item[2]))
    chosen = _Chosen(cap)
    # A name of code asked in its own sentence is the same fact as a cloze, and a deck of one format teaches the
    # template (card-quality §1.6): the cloze is taken instead.
    clozes = {(c.card.sentence, c.card.answer): (p, i, c) for _, p, i, c in assessed if c.card.kind == CardKind.CLOZE}

    def first_card(unit: int, bar: float, sentence: str | None = None) -> bool:
        """Take the likeliest card of *unit* (of its *sentence*, when given) that clears *bar* (a key phrase's card:
        the phrase bar, and only when no other card does); whether one was taken."""
        mine = [item for item in best_first if item[3].unit == unit and sentence in (None, item[3].card.sentence)]
        for phrases in (False, True):
            for _, chance, index, candidate in mine:
                card = candidate.card
                if is_phrase_card(candidate) != phrases or chance < (bars.phrase if phrases else bar) \
                        or card.sentence in chosen.units or not chosen.fits(card):
                    continue
                twin = clozes.get((card.sentence, card.answer)) if CODE_SPAN.fullmatch(card.answer) else None
                if twin and chosen.fits(twin[2].card):
                    chance, index, candidate = twin
                chosen.take(index, replace(candidate.card, score=round(chance, 3)), candidate.fact)
                return True
        return False

    first_card(0, bars.headline)  # the headline card, then each decision unit's, in review order
    for unit in sorted({c.unit for *_, c in assessed if c.unit}):
        # The members of a list of practices ("做法：A 实现 B、C 作为 D、E 校验 F") are decisions of their own, each
        # shown in its own sentence; the whole unit is asked only when none of them is.
        sentences = list(dict.fromkeys(c.card.sentence for *_, c in assessed if c.unit == unit))
        whole = max(sentences, key=len)
        taken = [first_card(unit, bars.unit, member) for member in sentences if member != whole]
        if not any(taken):
            first_card(unit, bars.unit, whole)
    # Second cards, the likeliest first: another clause or fact of a decision, or its why after its what.
    for _, chance, index, candidate in best_first:
        card = candidate.card
        if chance < bars.second or is_phrase_card(candidate) or chosen.has(index) \
                or chosen.per_decision(card) >= CARDS_PER_DECISION or candidate.fact in chosen.facts:
            continue
        weaker = chosen.weaker(card)
        if weaker:  # the same decision asked the same way, with more of its answer: the fuller card stays
            chosen.drop(weaker)
            if not chosen.fits(card):
                chosen.take(*weaker)
                continue
        if chosen.fits(card):
            chosen.take(index, replace(card, score=round(chance, 3)), candidate.fact)
    if not chosen.cards:  # every PR gets a card: its likeliest one that passes the gate and the cap
        for _, chance, index, candidate in best_first:
            if chosen.fits(candidate.card):
                chosen.take(index, replace(candidate.card, score=round(chance, 3)), candidate.fact)
                break
    return chosen.in_candidate_order()


class _Chosen:
    """The cards taken so far and what they already test."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.cards: list[tuple[int, Card]] = []
        self.taken: list[tuple[int, Card, str]] = []
        self.total = 0
        self.marks: set[str] = set()
        self.decisions: dict[tuple[str, int], int] = {}
        """Cards taken per decision: a clause of a unit (see :func:`_decision`)."""
        self.units: set[str] = set()
        """Units (their sentences) with a card."""
        self.clozed: set[str] = set()
        """Decisions that have a cloze note: one each."""
        self.facts: set[str] = set()
        self.directions: set[tuple[tuple[str, int], str]] = set()
        """(decision, direction) of the cards taken: see :func:`_direction`."""
        self.questions: list[tuple[set[str], str]] = []
        self.answers: list[tuple[str, str, str]] = []
        """(sentence, direction, answer) of the question cards taken."""

    def has(self, index: int) -> bool:
        return any(taken == index for taken, _ in self.cards)

    def per_decision(self, card: Card) -> int:
        return self.decisions.get(_decision(card), 0)

    def fits(self, card: Card) -> bool:
        if self.total + anki_cards(card) > self.cap or _marks(card) & self.marks:
            return False
        if (_decision(card), _direction(card)) in self.directions:
            return False  # a decision is asked what was done once, and why once
        if card.kind == CardKind.CLOZE:
            return card.sentence not in self.clozed
        grams, answer = _trigrams(card.prompt), norm(card.answer)
        if any(sentence == card.sentence and direction == _direction(card) and (answer in other or other in answer)
               for sentence, direction, other in self.answers):
            return False  # a subset of a card of the same decision asked the same way: one is weaker (review r2)
        return not any(_jaccard(grams, other) >= _NEAR_REPEAT and other_answer != answer or _same(answer, other_answer)
                       for other, other_answer in self.questions)

    def weaker(self, card: Card) -> tuple[int, Card, str] | None:
        """A question card taken that asks *card*'s decision the same way with part of its answer: the weaker."""
        answer = norm(card.answer)
        return next((t for t in self.taken if t[1].kind != CardKind.CLOZE and card.kind != CardKind.CLOZE
                     and t[1].sentence == card.sentence and _direction(t[1]) == _direction(card)
                     and norm(t[1].answer) != answer and norm(t[1].answer) in answer), None)

    def drop(self, entry: tuple[int, Card, str]) -> None:
        """Forget a taken card: what the others take stays as it was."""
        kept = [t for t in self.taken if t is not entry]
        self.__init__(self.cap)  # type: ignore[misc]
        for index, card, fact in kept:
            self.take(index, card, fact)

    def take(self, index: int, card: Card, fact: str = "") -> None:
        self.taken.append((index, card, fact))
        self.cards.append((index, card))
        self.facts.add(fact)
        self.total += anki_cards(card)
        self.marks |= _marks(card)
        self.decisions[_decision(card)] = self.per_decision(card) + 1
        self.units.add(card.sentence)
        self.directions.add((_decision(card), _direction(card)))
        if card.kind == CardKind.CLOZE:
            self.clozed.add(card.sentence)
        else:
            self.questions.append((_trigrams(card.prompt), norm(card.answer)))
            self.answers.append((card.sentence, _direction(card), norm(card.answer)))

    def in_candidate_order(self) -> list[Card]:
        return [card for _, card in sorted(self.cards, key=lambda item: item[0])]


_CLAUSE_BREAK = re.compile(r"[，,；;。]")


def _decision(card: Card) -> tuple[str, int]:
    """The decision a card asks about: the clause of its unit that holds its answer (or first gap), or the unit
    as a whole (-1) when the answer is not its own words."""
    tested = deletions_of(card)[0][1] if card.kind == CardKind.CLOZE and deletions_of(card) else card.answer
    at = card.sentence.find(tested)
    return (card.sentence, len(_CLAUSE_BREAK.findall(card.sentence, 0, at)) if at >= 0 else -1)


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
