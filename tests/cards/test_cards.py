"""Cards: context cue, phrasing rotation, spacing, and what the seeds deck contains."""

from __future__ import annotations

from collections import Counter

from deckgen.cards.cards import TEMPLATES, cue_for, fill, make_cards
from deckgen.cards.gate import anki_cards
from deckgen.extract.extract import extract_review
from deckgen.source.parse import parse_seed_file
from deckgen.types import CardKind
from tests.conftest import FIXTURES, SEEDS

FIXTURE = FIXTURES / "good.txt"


def test_fill_spaces_english_from_chinese_at_slot_edges() -> None:
    assert fill("用什么{y}？", y="`lru_cache` 复用") == "用什么 `lru_cache` 复用？"
    assert fill("{x}的目的是什么？", x="采用 torch.empty") == "采用 torch.empty 的目的是什么？"
    assert fill("{x}是为了什么？", x="「预分配」") == "预分配是为了什么？"


def test_every_relation_has_several_phrasings() -> None:
    assert all(len(options) >= 2 for options in TEMPLATES.values())


def test_cue_is_repository_and_first_clause() -> None:
    review = extract_review(parse_seed_file(FIXTURE)[0])
    assert cue_for(review) == "widget · 为调度器引入预分配工作区"


def test_cards_of_a_small_fixture() -> None:
    """The fixture's three numbered decisions each give a card; every card carries the cue."""
    review = extract_review(parse_seed_file(FIXTURE)[0])
    cards = make_cards(review)
    answers = {c.answer for c in cards}
    assert "`torch.empty`" in answers or any("`torch.empty`" in c.answer for c in cards)
    assert any("尽早暴露错误" == c.answer or "参数校验" in c.answer for c in cards)
    assert any("`workspace`" in c.answer for c in cards)
    assert all(c.cue == "widget · 为调度器引入预分配工作区" for c in cards)
    assert 3 <= sum(anki_cards(c) for c in cards) <= 10


def test_phrasing_is_deterministic() -> None:
    review = extract_review(parse_seed_file(FIXTURE)[0])
    assert [c.prompt for c in make_cards(review)] == [c.prompt for c in make_cards(review)]


def test_no_template_dominates_the_seeds_deck() -> None:
    """A12: the most common question frame produces at most 40% of the Q/A cards."""
    from deckgen.pipeline import build_corpus

    cards = [c for c in build_corpus([SEEDS]).cards
             if c.kind not in (CardKind.CLOZE, CardKind.GLOSSARY)]  # glossary cards share one frame by design
    frames = Counter(c.key.split(":")[1] for c in cards)
    assert frames.most_common(1)[0][1] <= 0.4 * len(cards)
