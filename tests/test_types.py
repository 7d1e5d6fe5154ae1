"""The values passed between stages."""

from __future__ import annotations

from dataclasses import replace

from deckgen.cards.cards import make_result
from deckgen.source.parse import read_corpus
from tests.conftest import SEEDS


def test_with_tags_is_replace_with_the_tags_appended() -> None:
    entries = read_corpus([SEEDS]).entries[:3]
    cards = [replace(c, score=0.25, tags=("kind::x",)) for e in entries for c in make_result(e)[1]]
    assert cards
    for card in cards:
        tagged = card.with_tags(("topic::a", "topic::b"))
        assert tagged == replace(card, tags=("kind::x", "topic::a", "topic::b"))
        assert card.tags == ("kind::x",)  # the card itself is unchanged
