"""Which candidates a PR keeps: every decision first, at most two cards each, fewer for skims, one fact one way."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from deckgen.cards.gate import Candidate, anki_cards
from deckgen.cards.select import CARDS_BY_VERDICT, MAX_CARDS_PER_PR, Thresholds, select_cards
from deckgen.text.markup import deletion
from deckgen.text.segment import get_segmenter
from deckgen.types import Card, CardKind, Entry, Verdict
from tests.cards.test_gate import BASE, CLOZE

DECISIONS = "值得精读。" + "".join(f"第 {n} 个做法用环形缓冲区避免第 {n} 种分配抖动，而非逐次分配。" for n in range(10))
MANY = Entry("o/r", "重构调度器的内存管理", DECISIONS, Path("s.txt"), 3, 5)


def chosen(*cards: Card, rank: float = 2.0, limit: int = MAX_CARDS_PER_PR, verdict: Verdict = Verdict.DEEP,
           facts: dict[str, str] | None = None) -> list[Card]:
    """What select_cards keeps of *cards*, ranked by hand (no model, no threshold); each card asks a fact of its own
    unless *facts* (key → fact) says otherwise."""
    facts = facts or {}
    return select_cards([Candidate(c, rank, c.entry.review, facts.get(c.key, c.key), unit=_unit(c)) for c in cards],
                        get_segmenter(), limit=limit, verdict=verdict, model={}, acceptance={}, thresholds=Thresholds())


def _unit(card: Card) -> int:
    """The decision unit of a card of :func:`decision` (its number, from 1), or 1."""
    digits = [int(part) for part in card.sentence.split() if part.isdigit()]
    return digits[0] + 1 if digits else 1


def decision(n: int, kind: CardKind = CardKind.WHY) -> Card:
    """A card of the n-th decision of a review: its own sentence; a why card asks the effect, any other the means."""
    sentence = f"第 {n} 个做法用环形缓冲区避免第 {n} 种分配抖动，而非逐次分配"
    if kind == CardKind.WHY:
        prompt, answer = f"第 {n} 个做法用环形缓冲区，是为了避免什么？", f"第 {n} 种分配抖动"
    else:
        prompt, answer = f"为避免第 {n} 种分配抖动，第 {n} 个做法用了什么？", "环形缓冲区"
    return replace(BASE, entry=MANY, kind=kind, key=f"{kind.value}:{n}", sentence=sentence, prompt=prompt,
                   answer=answer, cue="r · 重构调度器的内存管理")


def test_rejected_cards_and_duplicate_questions_are_dropped() -> None:
    bad = replace(BASE, key="why:y", answer="性能")
    dup = replace(BASE, key="why:z")
    kept = chosen(BASE, bad, dup)
    assert [c.key for c in kept] == ["why:x"] and kept[0].score > 0


def test_a_cloze_counts_each_gap_against_the_limit() -> None:
    two = replace(CLOZE, prompt="通过预分配 " + deletion(1, "`workspace`") + " 来避免在捕获期间分配显存，从而消除了"
                  + deletion(2, "图重放时的非法内存访问"))
    assert anki_cards(two) == 2
    assert chosen(two, limit=1) == []


def test_one_fact_is_asked_one_way_once() -> None:
    """将 X and X are the same answer, and a cloze gap that is a Q/A card's answer tests the same thing."""
    first = replace(BASE, key="a", answer="预分配 `workspace`")
    second = replace(BASE, key="b", prompt="靠什么避免在捕获期间分配显存？", answer="通过预分配 `workspace`")
    assert len(chosen(first, second)) == 1
    gap = replace(CLOZE, key="cloze:w", prompt="采用 `torch.empty` 而非 `torch.zeros`，以" + deletion(1, "减少初始化开销"))
    assert [c.key for c in chosen(BASE, gap)] == ["why:x"]


def test_every_decision_gets_a_card_before_any_gets_a_second() -> None:
    cards = [decision(n, kind) for n in range(6) for kind in (CardKind.WHY, CardKind.HOW)]
    kept = chosen(*cards, limit=6)
    assert sorted(c.sentence for c in kept) == sorted(decision(n).sentence for n in range(6))


def test_a_decision_gets_two_cards_at_most_of_two_facts_one_each_way_and_one_cloze() -> None:
    why, how = decision(1, CardKind.WHY), decision(1, CardKind.HOW)
    contrast = replace(decision(1, CardKind.CONTRAST), prompt="第 1 个做法没有逐次分配，而是用了什么？", answer="用环形缓冲区避免")
    assert sorted(c.kind for c in chosen(why, how, contrast)) == sorted([CardKind.WHY, CardKind.HOW])
    assert len(chosen(how, contrast)) == 1  # both ask what was done: one way once
    mirror = {why.key: "the fact", how.key: "the fact"}
    assert len(chosen(why, how, facts=mirror)) == 1  # its why after its how mostly restates it
    named = replace(how, answer="“环形缓冲区”")  # even when the other side asks for the decision by its name
    assert len(chosen(why, named, facts={why.key: "the fact", named.key: "the fact"})) == 1
    sentence = decision(1).sentence
    one = replace(CLOZE, key="cloze:a", sentence=sentence)
    other = replace(CLOZE, key="cloze:b", sentence=sentence,
                    prompt="采用 " + deletion(1, "`torch.empty`") + " 而非 `torch.zeros`，以减少初始化开销")
    assert len(chosen(one, other)) == 1


def test_a_skim_gets_fewer_cards_and_a_skip_fewer_still() -> None:
    cards = [decision(n, kind) for n in range(8) for kind in (CardKind.WHY, CardKind.HOW)]
    counts = {v: len(chosen(*cards, verdict=v)) for v in (Verdict.DEEP, Verdict.SKIM, Verdict.SKIP)}
    assert counts == {v: CARDS_BY_VERDICT[v] for v in counts}
    assert counts[Verdict.DEEP] == MAX_CARDS_PER_PR == 8 and counts[Verdict.SKIP] < counts[Verdict.SKIM] < 8


def test_no_minimum_a_thin_review_gets_what_it_has() -> None:
    assert len(chosen(decision(1))) == 1
    assert chosen() == []


def test_a_fuller_answer_replaces_a_weaker_card_of_the_same_decision_asked_the_same_way() -> None:
    """Blind review r2 dropped a card whose answer is part of another's, asked the same way: the fuller one stays,
    once, whichever comes first."""
    short = replace(decision(1, CardKind.HOW), key="how:short", answer="环形缓冲区")
    full = replace(decision(1, CardKind.HOW), key="how:full", prompt="第 1 个做法怎样避免第 1 种分配抖动？",
                   answer="用环形缓冲区")
    for cards in ((short, full), (full, short)):
        kept = chosen(*cards)
        assert [c.key for c in kept] == ["how:full"]


def test_a_key_phrase_card_is_taken_only_when_no_other_card_of_its_unit_clears_the_bar() -> None:
    """Raters kept fewer gaps found by the key-phrase model than questions read from relations (issue #30): such a
    card stands in for a unit with nothing better, and is never a second card."""
    seg = get_segmenter()
    why, how = decision(1, CardKind.WHY), decision(1, CardKind.HOW)
    gap = replace(CLOZE, key="cloze:p", sentence=why.sentence, entry=MANY, answer="环形缓冲区",
                  prompt="第 1 个做法用" + deletion(1, "环形缓冲区") + "避免第 1 种分配抖动，而非逐次分配")

    def pick(*pairs: tuple[Card, str], bars: Thresholds = Thresholds()) -> list[str]:
        candidates = [Candidate(c, 2.0, c.entry.review, c.key, unit=1, marker=m) for c, m in pairs]
        return [c.key for c in select_cards(candidates, seg, model={}, acceptance={}, thresholds=bars)]

    assert pick((gap, "span"), (why, "以")) == ["why:1"]  # the question first, and the gap is no second card
    assert pick((gap, "span")) == ["cloze:p"]  # nothing else: the gap stands in
    assert pick((gap, "span"), bars=Thresholds(phrase=1.01)) == ["cloze:p"]  # a PR with no card gets its best one
    assert pick((gap, "span"), (how, "通过"), bars=Thresholds(unit=1.01, phrase=1.01)) == ["how:1"]
