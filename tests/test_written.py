"""Reviews written for testing, by a writer who never saw deckgen's rules (tests/fixtures/written: twelve reviews of
transformers, PyTorch and FlashAttention PRs, with the decisions and non-decision parts the writer listed in gold.json).

They were used for one round of fixes, so they are no longer unseen; they stay as a regression check in styles the
seeds do not have: no card comes from a part the writer marked as no decision, and the decisions tested do not fall.
"""

from __future__ import annotations

import json

import pytest

from deckgen import BuildOptions, build_corpus
from deckgen.cards.gate import REJECT, review_card
from deckgen.text.markup import deletions, strip_markdown
from deckgen.text.segment import get_segmenter
from deckgen.types import Card, CardKind
from tests.conftest import FIXTURES

WRITTEN = FIXTURES / "written"
GOLD = json.loads((WRITTEN / "gold.json").read_text(encoding="utf-8"))
TESTED_AT_LEAST = 17
"""Decisions of gold.json some card tests (of 40) when this file was written: fewer fails."""


@pytest.fixture(scope="module", name="cards")
def _cards() -> tuple[Card, ...]:
    return build_corpus([WRITTEN / "seeds"], BuildOptions(cache=False)).cards


def _plain(text: str) -> str:
    return strip_markdown(text).replace("`", "")


def _tested(card: Card) -> list[str]:
    if card.kind == CardKind.CLOZE:
        return [_plain(body) for _, body in deletions(card.prompt)]
    return [_plain(card.answer)]


def _of(cards: tuple[Card, ...], pr: dict) -> list[Card]:  # type: ignore[type-arg]
    return [c for c in cards if c.entry.title == pr["title"] and c.entry.path.name == pr["file"]]


def test_no_card_comes_from_a_part_that_is_not_a_decision(cards: tuple[Card, ...]) -> None:
    off = []
    for pr in GOLD:
        mine = _of(cards, pr)
        if not mine:
            continue
        review = _plain(mine[0].entry.review)
        spans = [(i, i + len(_plain(part))) for part in pr["not_decisions"]
                 for i in range(len(review)) if review.startswith(_plain(part), i)]
        for card in mine:
            for text in _tested(card):
                found = [i for i in range(len(review)) if text and review.startswith(text, i)]
                if found and all(any(a <= i and i + len(text) <= b for a, b in spans) for i in found):
                    off.append(f"{card.prompt} → {text}")
    assert off == []


def test_decisions_tested_do_not_fall(cards: tuple[Card, ...]) -> None:
    tested = 0
    for pr in GOLD:
        texts = [t for c in _of(cards, pr) for t in _tested(c)]
        for decision in pr["decisions"]:
            keys = [_plain(k) for k in [decision["key"], *decision["alt_keys"]]]
            tested += any(k in t for k in keys for t in texts)
    assert tested >= TESTED_AT_LEAST


def test_no_card_fails_a_hard_check(cards: tuple[Card, ...]) -> None:
    seg = get_segmenter()
    assert [(c.prompt, f.message) for c in cards for f in review_card(c, seg) if f.severity == REJECT] == []
