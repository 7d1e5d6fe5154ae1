"""Which of a PR's candidate cards a learner gets: fewer, better cards.

After the gate (:mod:`deckgen.cards.gate`) has rejected the broken ones, the
rest are ranked and taken in rounds: first the headline card (the change the
PR summary states), then the best card of every decision unit in review order
(so every decision gets a card before any gets a second, and a tight cap drops
second cards, not later decisions), then at most one more card per decision: of another fact of it, asking the other way (why it was done,
or what), or else the mirror of its fact when that side asks for the decision by name or code; and one
cloze note per decision.  A PR gets at most
:data:`MAX_CARDS_PER_PR` cards, fewer when the review says it is not worth
reading closely; there is no minimum.  No two cards test the same text (an
answer, or a cloze gap: one fact in one direction), ask the same question, or
carry the same key, and no two questions nearly repeat each other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..text.markup import CODE_SPAN
from ..text.segment import Segmenter
from ..types import Card, CardKind, Verdict, norm
from .gate import Candidate, anki_cards, deletions_of, score, warnings_unless_rejected
from .rank import features, model_floor, probability, unit_score, weights

MAX_CARDS_PER_PR = 8
"""Anki cards of one PR at most (a cloze note gives one per deletion number)."""
CARDS_BY_VERDICT = {Verdict.DEEP: MAX_CARDS_PER_PR, Verdict.UNKNOWN: 6, Verdict.SKIM: 5, Verdict.SKIP: 3}
"""Fewer cards for a PR the review calls worth only a skim, fewer still for one not worth reading."""
CARDS_PER_DECISION = 2
"""Cards of one decision (one sentence or enumeration item of the review) at most."""
LAST_RESORT = "headline:last resort"
"""The fact of a summary's last-resort card (its cloze, or 该 PR V了什么？): taken only when no other card of the
summary passes the quality gate."""
NO_OTHER_CARD = "headline:no other card"
"""The fact of the summary's whole-change card (该 PR 做了什么改动？ → the summary): taken only by a PR that would
otherwise get no card at all, so that every PR has one."""
REASON_FLOOR = 0.1
"""The least probability of a card asking why a decision with a card was made (round 3 of :func:`select_cards`)."""
_NEAR_REPEAT = 0.8
"""Character-trigram Jaccard of two questions with different answers above which one is dropped (A11)."""


def select_cards(candidates: list[Candidate], seg: Segmenter, limit: int = MAX_CARDS_PER_PR,
                 verdict: Verdict = Verdict.DEEP, model: dict[str, float] | None = None,
                 scores: Sequence[tuple[str, float]] = (), floor: float | None = None,
                 unit_floor: float | None = None) -> list[Card]:
    """The candidates a learner gets, in candidate order, each with its score.

    *limit* caps the Anki cards; the review's *verdict* may cap them lower (:data:`CARDS_BY_VERDICT`).  Cards
    are ranked by the learned model (:mod:`deckgen.cards.rank`; *model* weights, by default the shipped ones),
    the gate's rank breaking ties; with no weights, by the gate's rank alone.  *scores* are the review's clause
    decision scores (:attr:`deckgen.types.Review.clause_scores`), which the model reads.  A card the model gives
    less than *floor* (by default the shipped one) is not taken as a second card of a unit: it more likely asks
    something that is no key decision than one that is.  Every decision unit gets its best card: a unit whose
    clauses the decision model scores below *unit_floor* is no decision unit.  The headline card is always a
    candidate, and a PR that would get no card gets its best one.
    """
    cap = min(limit, CARDS_BY_VERDICT.get(verdict, MAX_CARDS_PER_PR))
    table = weights() if model is None else model
    floor = model_floor() if floor is None else floor
    unit_floor = model_floor("unit_floor") if unit_floor is None else unit_floor
    ranked: list[tuple[float, int, Candidate]] = []
    firsts: list[tuple[float, int, Candidate]] = []
    reasons: list[tuple[float, int, Candidate]] = []
    fallbacks: list[tuple[int, Candidate]] = []

    def assess(index: int, candidate: Candidate) -> tuple[float, float, bool] | None:
        """The candidate's value and probability, and whether it may be a unit's first card; None: rejected."""
        findings = warnings_unless_rejected(candidate.card, seg)
        if findings is None:
            return None
        value = score(candidate, findings)
        chance = 1.0
        if table:
            chance = probability(features(candidate.card, [f.check for f in findings], seg, scores), table)
            value = round(10 * chance + 0.01 * value, 4)
        first = candidate.card.kind == CardKind.HEADLINE or not table or unit_score(candidate.card, scores) >= unit_floor
        return value, chance, first

    for index, candidate in enumerate(candidates):
        if candidate.fact in (LAST_RESORT, NO_OTHER_CARD):
            fallbacks.append((index, candidate))  # gated only if needed: most PRs have a better card
            continue
        assessed = assess(index, candidate)
        if assessed is None:
            continue
        value, chance, first = assessed
        if first:
            firsts.append((value, index, candidate))
        if candidate.card.kind == CardKind.HEADLINE or chance >= floor:
            ranked.append((value, index, candidate))
        if candidate.card.kind == CardKind.WHY and chance >= REASON_FLOOR:
            reasons.append((value, index, candidate))
    if not any(c.unit == 0 for _, _, c in firsts):
        for index, candidate in fallbacks:
            if candidate.fact == LAST_RESORT:
                assessed = assess(index, candidate)
                if assessed is not None and assessed[2]:
                    firsts.append((assessed[0], index, candidate))
    if not firsts and not ranked and candidates:
        passing = [(0.0, i, c) for i, c in enumerate(candidates) if warnings_unless_rejected(c.card, seg) is not None]
        firsts = passing[:1]  # every PR gets a card: its first that passes the gate
    ranked.sort(key=lambda item: (-item[0], item[1]))
    reasons.sort(key=lambda item: (-item[0], item[1]))
    chosen = _Chosen(cap)
    # Round 1, in review order: the headline (the change the summary states), then the best card of each
    # decision unit, so a tight cap drops second cards, never a later decision.
    clozes = {(c.card.sentence, c.card.answer): (v, i, c) for v, i, c in firsts if c.card.kind == CardKind.CLOZE}
    for value, index, candidate in sorted(firsts, key=lambda item: (item[2].unit, -item[0], item[1])):
        card = candidate.card
        if card.sentence not in chosen.units and chosen.fits(card):
            # A name of code asked in its own sentence is the same fact as a cloze, and a deck of one format
            # teaches the template (card-quality §1.6): the cloze is taken instead.
            twin = clozes.get((card.sentence, card.answer)) if CODE_SPAN.fullmatch(card.answer) else None
            if twin and chosen.fits(twin[2].card):
                value, index, candidate = twin
            chosen.take(index, replace(candidate.card, score=value), candidate.fact)
    # Round 2, best first: the best card of each other clause of a unit (and of the summary, but not its
    # "具体怎么做" card, whose answer is only the rest of the summary: seeds/ review), since one long sentence may state
    # several decisions ("…改为 X，Y 默认关闭，Z 保留原行为"), but not a fact already asked the other way.
    # Round 3: why a decision with a card was made, of another fact (…，确保了 CUDA 图捕获和重放的安全性): learners
    # missed the reasons most (blind reviews r1, r2, seeds), and the card model, trained on gold keys that name
    # mechanisms, scores them low, so the bar is lower.
    # Round 4: a card of another fact of a decision; round 5: the mirror of a fact, only when it asks for the
    # decision by its name or code ("为避免静默丢 embedding，该 PR 怎么做？→ “能力标志 + 启动期拒绝”的快速失败
    # 设计").  Other mirrors are not taken: learners found the second side mostly restated the first ("为什么要尽早
    # 校验？→ 尽早暴露错误").  The summary gets a second card only for another of its clauses.  No cloze is taken to make up the mix: a cloze of what a
    # question card already asks was rated a duplicate (blind review r1).
    for round_ in ("clause", "reason", "fact", "mirror"):
        for value, index, candidate in (reasons if round_ == "reason" else ranked):
            card = candidate.card
            taken = chosen.per_decision(card)
            if taken >= CARDS_PER_DECISION or (round_ == "clause" and taken):
                continue
            if card.kind == CardKind.HEADLINE and (round_ != "clause" or value < 10 * floor or ":then:" in card.key):
                continue  # a second headline card only asks another clause of the summary (…，涵盖 AVX512/AMX 内核移植)
            if round_ in ("clause", "fact", "reason") and candidate.fact in chosen.facts:
                continue
            if round_ == "reason" and (card.kind != CardKind.WHY or card.sentence not in chosen.units):
                continue
            if round_ == "mirror" and (card.kind == CardKind.CLOZE or not _NAMED.search(card.answer)):
                continue
            weaker = chosen.weaker(card)
            if weaker:  # the same decision asked the same way, with more of its answer: the fuller card stays
                chosen.drop(weaker)
                if not chosen.fits(card):
                    chosen.take(*weaker)
                    continue
            if chosen.fits(card):
                chosen.take(index, replace(card, score=value), candidate.fact)
    for index, candidate in fallbacks if not chosen.cards else ():
        assessed = assess(index, candidate) if candidate.fact == NO_OTHER_CARD else None
        if assessed is not None and assessed[2]:
            chosen.take(index, replace(candidate.card, score=assessed[0]), candidate.fact)
            break
    return chosen.in_candidate_order()


_NAMED = re.compile(r"[“「`]")
"""An answer that names the decision: a quoted name or a code span."""


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
