"""The collection writer gives exactly the rows genanki's own Note objects would."""

from __future__ import annotations

import sqlite3

import genanki
import pytest

from deckgen.deck import collection
from deckgen.deck.collection import NoteRow, PackageDeck, write_collection
from deckgen.deck.notetypes import cloze_model, qa_model

QA = ("问：为什么？", "答", "vllm · 缓存", "标题", "句子", "src", "精读", "")
CLOZE = ("{{c1::甲}} 与 {{c2::乙}} 和 {{c1::丙}}", "vllm · 缓存", "标题", "句子", "src", "精读", "")


def _rows(model: genanki.Model) -> list[NoteRow]:
    fields = QA if model.model_id == qa_model().model_id else CLOZE
    return [NoteRow(model, fields, ("deckgen", "topic::a"), "guid-a", due=0, mod=1_700_000_000, nid=1_600_000_000_000),
            NoteRow(model, fields, ("deckgen",), "guid-b", due=1, mod=1_700_000_100, nid=None)]


def _genanki_way(deck: genanki.Deck, rows: list[NoteRow], cursor: sqlite3.Cursor) -> None:
    for row in rows:
        note = genanki.Note(model=row.model, fields=list(row.fields), tags=list(row.tags), guid=row.guid, due=row.due)
        deck.add_note(note)
    id_gen = iter(range(10**12, 10**12 + 1000))
    genanki.Package([deck]).write_to_db(cursor, 1_700_000_000, id_gen)


def _deck(rows: list[NoteRow]) -> PackageDeck:
    return PackageDeck(genanki.Deck(1 << 30, "d"), list(dict.fromkeys(r.model for r in rows)), lambda: iter(rows))


def _dump(connection: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    rows = {table: connection.execute(f"select * from {table} order by id").fetchall() for table in ("notes", "cards")}
    # The schema as genanki made it: the indexes dropped while the rows go in come back with the same rowid,
    # name and SQL (their root pages move, which nothing reads).
    rows["schema"] = connection.execute("select rowid, type, name, tbl_name, sql from sqlite_master order by rowid").fetchall()
    return rows


@pytest.mark.parametrize("model", [qa_model(), cloze_model()], ids=["qa", "cloze"])
def test_rows_match_genanki_notes(model: genanki.Model) -> None:
    rows = [NoteRow(r.model, r.fields, r.tags, r.guid, r.due, 1_700_000_000, None) for r in _rows(model)]
    ours, theirs = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
    write_collection(ours.cursor(), [_deck(rows)], 1_700_000_000,
                     iter(range(10**12, 10**12 + 1000)))
    _genanki_way(genanki.Deck(1 << 30, "d"), rows, theirs.cursor())
    assert _dump(ours) == _dump(theirs)
    assert ours.execute("select decks, models from col").fetchone() == theirs.execute("select decks, models from col").fetchone()
    assert len(_dump(ours)["cards"]) == (2 if model.model_id == qa_model().model_id else 4)  # c1 and c2 per cloze note


def test_rows_in_many_batches_and_decks_match_genanki(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches cut between a note and the next, across decks, of both note types: genanki's rows and id order."""
    monkeypatch.setattr(collection, "_NOTES_PER_BATCH", 3)
    models = [qa_model(), cloze_model()]
    rows = [NoteRow(model, QA if model is models[0] else CLOZE, ("deckgen", f"n{i}"), f"guid-{i}", due=i, mod=1_700_000_000)
            for i, model in enumerate(models[i % 3 == 0] for i in range(11))]
    ours, theirs = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
    decks = [(genanki.Deck(1 << 30, "a"), rows[:7]), (genanki.Deck((1 << 30) + 1, "b"), rows[7:])]
    write_collection(ours.cursor(), [PackageDeck(d, list(dict.fromkeys(r.model for r in rs)), lambda rs=rs: iter(rs))
                                     for d, rs in decks], 1_700_000_000, iter(range(10**12, 10**12 + 1000)))
    for deck, deck_rows in decks:
        for row in deck_rows:
            deck.add_note(genanki.Note(model=row.model, fields=list(row.fields), tags=list(row.tags), guid=row.guid,
                                       due=row.due))
    genanki.Package([d for d, _ in decks]).write_to_db(theirs.cursor(), 1_700_000_000, iter(range(10**12, 10**12 + 1000)))
    assert _dump(ours) == _dump(theirs)
    assert len(_dump(ours)["cards"]) == 7 + 2 * 4  # the cloze notes have two deletions each


def test_note_id_from_the_lock_fixes_card_ids_and_mtime() -> None:
    connection = sqlite3.connect(":memory:")
    write_collection(connection.cursor(), [_deck(_rows(cloze_model()))], 1_700_000_000,
                     iter(range(10**12, 10**12 + 1000)))
    cards = connection.execute("select id, nid, ord, mod from cards order by id desc").fetchall()
    assert cards[:2] == [(1_600_000_000_001, 1_600_000_000_000, 1, 1_700_000_000),
                         (1_600_000_000_000, 1_600_000_000_000, 0, 1_700_000_000)]
    assert [c[3] for c in cards[2:]] == [1_700_000_100] * 2  # the other note: ids from the sequence


def test_a_tag_with_a_space_or_a_wrong_field_count_is_refused() -> None:
    cursor = sqlite3.connect(":memory:").cursor()
    bad_tag = NoteRow(qa_model(), QA, ("two words",), "g", 0, 1)
    with pytest.raises(ValueError, match="space"):
        write_collection(cursor, [_deck([bad_tag])], 1, iter(range(10, 20)))
    short = NoteRow(qa_model(), QA[:3], (), "g", 0, 1)
    with pytest.raises(ValueError, match="fields"):
        write_collection(sqlite3.connect(":memory:").cursor(), [_deck([short])], 1,
                         iter(range(10, 20)))
