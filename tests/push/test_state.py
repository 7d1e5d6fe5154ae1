"""Reading what a collection holds from the package Anki exports (Anki's own backend makes the package here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deckgen.push.state import _read_export, deck_search
from tests.conftest import AnkiCollection


@pytest.mark.parametrize("name", ["PR 设计决策", "a_b*c", 'quote"d', "back\\slash", "x:y", "(paren) -dash"])
def test_deck_search_finds_that_deck_and_no_other(anki: AnkiCollection, name: str) -> None:
    col = anki.col
    basic = col.models.by_name("Basic")
    made = {}
    for deck in (name, f"{name}::child", f"{name}x", "abc"):
        note = col.new_note(basic)
        note["Front"] = deck
        col.add_note(note, col.decks.id(deck))
        made[deck] = note.id
    assert sorted(col.find_notes(deck_search(name))) == sorted([made[name], made[f"{name}::child"]])


def test_an_export_gives_each_notes_guid_date_tags_fields_and_cards(seeds_deck: Path, anki: AnkiCollection,
                                                                    tmp_path: Path) -> None:
    from anki.collection import DeckIdLimit, ExportAnkiPackageOptions

    col = anki.col
    anki.import_apkg(seeds_deck)
    nid = col.find_notes("")[0]
    note = col.get_note(nid)
    note.add_tag("marked")
    col.update_note(note)
    exported = tmp_path / "export.apkg"
    # As AnkiConnect's exportPackage(includeSched=True) calls it.
    col.export_anki_package(out_path=str(exported), limit=DeckIdLimit(deck_id=col.decks.id("PR 设计决策")),
                            options=ExportAnkiPackageOptions(with_scheduling=True, with_deck_configs=True,
                                                             with_media=True, legacy=True))
    notes, dates = _read_export(exported)
    assert len(notes) == col.note_count()
    held = notes[note.guid]
    after = col.get_note(nid)
    assert (held.nid, held.model, held.mod, held.fields) == (nid, after.mid, after.mod, tuple(after.fields))
    assert set(held.tags) == set(after.tags) and "marked" in held.tags
    assert held.cards == tuple(sorted(col.card_ids_of_note(nid)))
    assert dates[after.mid] == col.models.get(after.mid)["mod"]


def test_an_export_that_is_not_there_or_not_a_package_is_said_so(tmp_path: Path) -> None:
    """AnkiConnect on another machine writes its export there; a damaged file is no package."""
    from deckgen.errors import DeckgenError

    with pytest.raises(DeckgenError, match="nothing is there: AnkiConnect must run on this machine"):
        _read_export(tmp_path / "missing.apkg")
    (tmp_path / "bad.apkg").write_bytes(b"not a zip")
    with pytest.raises(DeckgenError, match=r"^cannot read the package Anki exported to .*bad\.apkg"):
        _read_export(tmp_path / "bad.apkg")
