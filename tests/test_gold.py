"""The seeds deck against the gold decisions a person listed for each PR (tests/golden/seeds-gold.json).

The gold file measures coverage; the extractor never reads it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from deckgen.cards.gate import REJECT, anki_cards, review_card
from deckgen.pipeline import build_corpus
from deckgen.text.markup import deletions, strip_markdown
from deckgen.text.segment import get_segmenter
from deckgen.types import Card, CardKind, norm

HERE = Path(__file__).parent
GOLD = json.loads((HERE / "golden" / "seeds-gold.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module", name="cards")
def _cards() -> tuple[Card, ...]:
    return build_corpus([HERE.parent / "seeds"]).cards


def _plain(text: str) -> str:
    return strip_markdown(text).replace("`", "")


def _texts_tested(card: Card) -> list[str]:
    """Where a card tests knowledge: its answer, or its cloze deletions."""
    if card.kind == CardKind.CLOZE:
        return [_plain(body) for _, body in deletions(card.prompt)]
    return [_plain(card.answer)]


def test_every_gold_decision_is_tested(cards: tuple[Card, ...]) -> None:
    missing = []
    for pr in GOLD:
        texts = [t for c in cards if c.entry.title == pr["title"] and c.entry.path.name == pr["file"]
                 for t in _texts_tested(c)]
        for decision in pr["decisions"]:
            keys = [_plain(k) for k in [decision["key"], *decision["alt_keys"]]]
            if not any(k in t for k in keys for t in texts):
                missing.append(f"{pr['title'][:24]}…: {decision['key']}")
    total = sum(len(pr["decisions"]) for pr in GOLD)
    assert not missing, f"{len(missing)}/{total} gold decisions untested:\n" + "\n".join(missing)


def test_no_selected_card_fails_a_hard_check(cards: tuple[Card, ...]) -> None:
    seg = get_segmenter()
    failures = [(c.prompt, f.message) for c in cards for f in review_card(c, seg) if f.severity == REJECT]
    assert failures == []


def test_no_duplicate_questions(cards: tuple[Card, ...]) -> None:
    counts = Counter((c.entry.pr_key, norm(c.cue + c.prompt)) for c in cards)
    assert [q for q, n in counts.items() if n > 1] == []


def test_every_pr_has_three_to_ten_cards(cards: tuple[Card, ...]) -> None:
    per_pr = Counter()
    for card in cards:
        if card.kind != CardKind.GLOSSARY:  # glossary cards belong to no single PR
            per_pr[card.entry.title] += anki_cards(card)
    assert len(per_pr) == len(GOLD)
    assert all(3 <= n <= 10 for n in per_pr.values()), per_pr


def test_answers_are_short(cards: tuple[Card, ...]) -> None:
    """Answers ≤ 35 units each, median ≤ 20 (card-quality A1)."""
    from statistics import median

    from deckgen.text.segment import units

    lengths = [units(c.answer) for c in cards if c.kind != CardKind.CLOZE]
    assert max(lengths) <= 35 and median(lengths) <= 20
