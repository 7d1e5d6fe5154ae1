"""Every card built from seeds/, as text: a change to extraction shows up as a reviewable diff."""

from __future__ import annotations

import os
from pathlib import Path

from deckgen.pipeline import build_corpus
from tests.golden.render import render_cards

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "seeds.txt"


def test_seeds_cards_match_golden_dump() -> None:
    text = render_cards(build_corpus([HERE.parent / "seeds"]).cards)
    if os.environ.get("DECKGEN_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert GOLDEN.read_text(encoding="utf-8") == text, (
        "cards changed: review `git diff tests/golden/seeds.txt` after regenerating with "
        "DECKGEN_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py")
