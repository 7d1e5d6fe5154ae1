"""The deck is written through a scratch file beside it, not built in memory: same bytes, nothing left behind."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from deckgen import BuildOptions
from deckgen.deck import package
from deckgen.deck.lock import lock_path_for
from deckgen.deck.package import apkg_bytes
from deckgen.pipeline import build_deck, prepare_build
from tests.conftest import SEEDS

T0 = 1_700_000_000


def test_written_deck_is_the_in_memory_deck_byte_for_byte(tmp_path: Path) -> None:
    """``build --check`` compares a deck made in memory with the file: the two ways must agree exactly."""
    seeds = Path(shutil.copytree(SEEDS, tmp_path / "seeds"))
    deck = tmp_path / "out" / "deck.apkg"
    first = prepare_build([seeds], deck, options=BuildOptions(timestamp=T0))
    build_deck([seeds], deck, options=BuildOptions(timestamp=T0))
    assert deck.read_bytes() == apkg_bytes(first.plan)
    assert lock_path_for(deck).read_bytes() == first.update.lock.to_text().encode("utf-8")
    assert sorted(p.name for p in deck.parent.iterdir()) == ["deck.apkg", "deck.lock.json"]


def test_interrupted_packaging_keeps_the_old_deck_and_leaves_no_scratch_file(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    seeds = Path(shutil.copytree(SEEDS, tmp_path / "seeds"))
    deck = tmp_path / "out" / "deck.apkg"
    build_deck([seeds], deck, options=BuildOptions(timestamp=T0))
    before = {p.name: p.read_bytes() for p in deck.parent.iterdir()}
    real = package._fill_collection

    def interrupted(plan: package.DeckPlan, connection: sqlite3.Connection) -> None:
        real(plan, connection)  # the scratch collection is complete on disk …
        assert any(p.suffix == ".anki2" for p in deck.parent.iterdir())
        raise KeyboardInterrupt  # … when Ctrl-C arrives

    monkeypatch.setattr(package, "_fill_collection", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_deck([seeds], deck, options=BuildOptions(timestamp=T0 + 1, prune=True))
    assert {p.name: p.read_bytes() for p in deck.parent.iterdir()} == before
