"""The SQLite collection inside an .apkg: genanki's schema, decks and note types; the note rows written here.

genanki makes a ``Note`` object per note and checks and renders each on the
way in (tag lists, HTML warnings, cached card lists): for half a million
notes that is most of the packaging time and a gigabyte of objects held until
the end.  Here each note becomes its rows as it comes, written in the order
and with the values genanki's ``Note.write_to_db`` gives them, so the file is
the same byte for byte.  genanki still writes the schema and the ``col`` row
with the decks and note types.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import genanki

_CLOZE_NUMBER_RE = re.compile(r"{{c(\d+)::.+?}}", re.DOTALL)


@dataclass(frozen=True, slots=True)
class NoteRow:
    """One note as the package stores it."""

    model: genanki.Model
    fields: tuple[str, ...]
    tags: tuple[str, ...]
    guid: str
    due: int
    mod: int
    nid: int | None = None
    """The note id from the lock file; None takes the next id of the package's sequence."""


@dataclass(frozen=True)
class PackageDeck:
    """A deck of the package: its ``col`` entry, its note types in order of first use, and its notes' rows."""

    deck: genanki.Deck
    models: list[genanki.Model]
    rows: Callable[[], Iterable[NoteRow]]
    """Made when the deck is written, so only one deck's rows are ever made at a time, one by one."""


def write_collection(cursor: sqlite3.Cursor, decks: Iterable[PackageDeck], timestamp: int,
                     id_gen: Iterator[int]) -> None:
    """The schema, then each deck (its entry in ``col`` and its notes' rows), in the order given."""
    genanki.Package([]).write_to_db(cursor, timestamp, id_gen)  # schema and the col row only
    for package_deck in decks:
        deck = package_deck.deck
        for model in package_deck.models:
            deck.add_model(model)
        deck.write_to_db(cursor, timestamp, id_gen)  # the deck has no Note objects: only its col entry
        for row in package_deck.rows():
            _write_note(cursor, row, deck.deck_id, id_gen)


def _write_note(cursor: sqlite3.Cursor, row: NoteRow, deck_id: int, id_gen: Iterator[int]) -> None:
    model = row.model
    fields = row.fields
    if len(fields) != len(model.fields):
        raise ValueError(f"note {row.guid}: {len(fields)} fields for note type {model.name!r} with {len(model.fields)}")
    if any(" " in tag for tag in row.tags):
        raise ValueError(f"note {row.guid}: a tag contains a space: {row.tags!r}")
    ords = _card_ords(model, fields)
    # A note id from the lock fixes its card ids too (note id + ordinal); otherwise both come from the sequence.
    ids = iter([row.nid, *(row.nid + o for o in ords)]) if row.nid is not None else id_gen
    note_id = next(ids)
    cursor.execute("INSERT INTO notes VALUES(?,?,?,?,?,?,?,?,?,?,?);", (
        note_id, row.guid, model.model_id, row.mod, -1, " " + " ".join(row.tags) + " ", "\x1f".join(fields),
        fields[model.sort_field_index], 0, 0, ""))
    for card_ord in ords:
        cursor.execute("INSERT INTO cards VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?);", (
            next(ids), note_id, deck_id, card_ord, row.mod, -1, 0, 0, row.due, 0, 0, 0, 0, 0, 0, 0, 0, ""))


def _card_ords(model: genanki.Model, fields: tuple[str, ...]) -> list[int]:
    """The card ordinals genanki's ``Note.cards`` gives, in its order."""
    if model.model_type == model.CLOZE:
        # As genanki: every {{cN::…}} in the cloze fields of the front template, gathered in a set.
        ords: set[int] = set()
        for index in _cloze_field_indexes(model):
            value = fields[index] if index >= 0 else ""
            ords.update(int(m) - 1 for m in _CLOZE_NUMBER_RE.findall(value) if int(m) > 0)
        return list(ords)
    return [card_ord for card_ord, any_or_all, required in model._req
            if (any if any_or_all == "any" else all)(fields[i] for i in required)]


@lru_cache(maxsize=8)  # per note type, not per note
def _cloze_field_indexes(model: genanki.Model) -> list[int]:
    qfmt = model.templates[0]["qfmt"]
    names = set(re.findall(r"{{[^}]*?cloze:(?:[^}]?:)*(.+?)}}", qfmt) + re.findall("<%cloze:(.+?)%>", qfmt))
    return [next((i for i, f in enumerate(model.fields) if f["name"] == name), -1) for name in names]
