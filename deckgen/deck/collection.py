"""The SQLite collection inside an .apkg: genanki's schema, decks and note types; the note rows written here.

genanki makes a ``Note`` object per note and checks and renders each on the
way in (tag lists, HTML warnings, cached card lists): for half a million
notes that is most of the packaging time and a gigabyte of objects held until
the end.  Here each note becomes its rows as it comes, with the values and ids
(taken in the same order) genanki's ``Note.write_to_db`` gives them, so the
collection holds the same rows; they go in a batch at a time, so where they lie
in the file differs.  genanki still writes the schema and the ``col`` row with
the decks and note types.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import NamedTuple

from .thirdparty import genanki

_CLOZE_NUMBER_RE = re.compile(r"{{c(\d+)::.+?}}", re.DOTALL)


class NoteRow(NamedTuple):
    """One note as the package stores it.

    A named tuple, not a frozen dataclass: one is made per note, and a frozen dataclass takes 1.1 µs to make
    where a named tuple takes 0.3 µs (51,816 notes in a deck of 10,000 PRs).
    """

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


# Rows go to SQLite a batch at a time through ``executemany`` (one ``execute`` per note and per card was
# 112,000 calls for a deck of 10,000 PRs), with genanki's indexes dropped until every row is in and then made
# again from their own SQL: building an index once over the finished table costs a quarter fewer instructions
# than updating five of them row by row (callgrind, the rows of a 10,000-PR deck: 4.07 G instructions for
# execute per row with the indexes, 3.76 G for executemany with them, 3.06 G for executemany without).
# A batch is big enough that the per-call cost vanishes and small enough that a deck of half a million
# notes never holds more than this many notes' rows at once.
_NOTES_PER_BATCH = 2000
# The columns genanki always writes the same value to (usn -1, csum, flags, data; a new card's queue,
# interval, factor, reps, lapses, ...) are literals in the statement: the same stored values, fewer
# parameters bound per row.
_NOTE_SQL = "INSERT INTO notes VALUES(?,?,?,?,-1,?,?,?,0,0,'');"
_CARD_SQL = "INSERT INTO cards VALUES(?,?,?,?,?,-1,0,0,?,0,0,0,0,0,0,0,0,'');"


def write_collection(cursor: sqlite3.Cursor, decks: Iterable[PackageDeck], timestamp: int,
                     id_gen: Iterator[int]) -> None:
    """The schema, then each deck (its entry in ``col`` and its notes' rows), in the order given.

    Ids are taken from *id_gen* note by note, as genanki takes them (a note's id, then its cards' ids).
    """
    genanki.Package([]).write_to_db(cursor, timestamp, id_gen)  # schema and the col row only
    indexes = cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
                             "ORDER BY rowid").fetchall()
    for name, _ in indexes:
        cursor.execute(f'DROP INDEX "{name}"')
    for package_deck in decks:
        deck = package_deck.deck
        for model in package_deck.models:
            deck.add_model(model)
        deck.write_to_db(cursor, timestamp, id_gen)  # the deck has no Note objects: only its col entry
        rows = iter(package_deck.rows())
        while batch := list(islice(rows, _NOTES_PER_BATCH)):
            notes, cards = _batch_rows(batch, deck.deck_id, id_gen)
            cursor.executemany(_NOTE_SQL, notes)
            cursor.executemany(_CARD_SQL, cards)
    for _, sql in indexes:  # the same names and SQL, in the same order, as genanki's schema made them
        cursor.execute(sql)


_NoteValues = tuple[int, str, int, int, str, str, str]
_CardValues = tuple[int, int, int, int, int, int]


def _batch_rows(batch: Iterable[NoteRow], deck_id: int,
                id_gen: Iterator[int]) -> tuple[list[_NoteValues], list[_CardValues]]:
    """The ``notes`` and ``cards`` values of *batch* (the columns :data:`_NOTE_SQL` and :data:`_CARD_SQL` bind)."""
    notes: list[_NoteValues] = []
    cards: list[_CardValues] = []
    for row in batch:
        model = row.model
        fields = row.fields
        if len(fields) != len(model.fields):
            raise ValueError(f"note {row.guid}: {len(fields)} fields for note type {model.name!r} with {len(model.fields)}")
        if " " in "".join(row.tags):
            raise ValueError(f"note {row.guid}: a tag contains a space: {row.tags!r}")
        ords = _card_ords(model, fields)
        mod = row.mod
        # A note id from the lock fixes its card ids too (note id + ordinal); otherwise both come from the sequence.
        if row.nid is None:
            note_id = next(id_gen)
            for card_ord in ords:
                cards.append((next(id_gen), note_id, deck_id, card_ord, mod, row.due))
        else:
            note_id = row.nid
            for card_ord in ords:
                cards.append((note_id + card_ord, note_id, deck_id, card_ord, mod, row.due))
        notes.append((note_id, row.guid, model.model_id, mod, " " + " ".join(row.tags) + " ",
                      "\x1f".join(fields), fields[model.sort_field_index]))
    return notes, cards


def _card_ords(model: genanki.Model, fields: tuple[str, ...]) -> list[int]:
    """The card ordinals genanki's ``Note.cards`` gives, in its order."""
    if model.model_type == model.CLOZE:
        # As genanki: every {{cN::…}} in the cloze fields of the front template, gathered in a set.
        ords: set[int] = set()
        for index in _cloze_field_indexes(model):
            value = fields[index] if index >= 0 else ""
            ords.update(int(m) - 1 for m in _CLOZE_NUMBER_RE.findall(value) if int(m) > 0)
        return list(ords)
    return [card_ord for card_ord, needs_any, required in _requirements(model)
            if (any if needs_any else all)(map(fields.__getitem__, required))]


@lru_cache(maxsize=8)  # per note type, not per note: genanki's _req is a list of lists naming "any" or "all"
def _requirements(model: genanki.Model) -> list[tuple[int, bool, tuple[int, ...]]]:
    return [(card_ord, any_or_all == "any", tuple(required)) for card_ord, any_or_all, required in model._req]


@lru_cache(maxsize=8)  # per note type, not per note
def _cloze_field_indexes(model: genanki.Model) -> list[int]:
    qfmt = model.templates[0]["qfmt"]
    names = set(re.findall(r"{{[^}]*?cloze:(?:[^}]?:)*(.+?)}}", qfmt) + re.findall("<%cloze:(.+?)%>", qfmt))
    return [next((i for i, f in enumerate(model.fields) if f["name"] == name), -1) for name in names]
