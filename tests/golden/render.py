"""A readable text rendering of every card, for reviewing extraction changes as diffs.

Regenerate tests/golden/seeds.txt with:  DECKGEN_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

from collections.abc import Iterable

from deckgen.deck.notes import card_tags
from deckgen.text.markup import cloze_plain
from deckgen.types import Card, CardKind


def render_cards(cards: Iterable[Card]) -> str:
    lines: list[str] = []
    current = None
    for card in cards:
        if card.entry.pr_key != current:
            current = card.entry.pr_key
            lines += ["", f"## {card.entry.title}", f"   {card.entry.path.name}:{card.entry.title_line} · {card.verdict.value}"]
        if card.kind == CardKind.CLOZE:
            lines.append(f"- [cloze] 【{card.cue}】{cloze_plain(card.prompt)}")
        else:
            lines.append(f"- [{card.kind.value}] 【{card.cue}】{card.prompt}")
            lines.append(f"    → {card.answer}")
        lines.append(f"    tags: {' '.join(card_tags(card))}")
    return "\n".join(lines).lstrip("\n") + "\n"
