"""What a running Anki holds of a deck: its notes by GUID, with their dates and tags, and deckgen's note types.

Takes an :class:`~deckgen.push.client.AnkiConnect` and the deck's name; gives a :class:`CollectionState`.
AnkiConnect's ``notesInfo`` tells neither a note's GUID nor when it last changed, and both decide a push
(notes are matched by GUID, as an import matches them; a note is updated only if it is older than the
deck's change, as an import updates it).  ``exportPackage`` does tell: Anki writes the decks that hold
deckgen's cards to a package in *folder*, and the notes are read back from its collection.
"""

from __future__ import annotations

import json
import sqlite3
import zipfile
from collections.abc import Collection, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import DeckgenError

if TYPE_CHECKING:
    from .client import AnkiConnect


@dataclass(frozen=True)
class AnkiNote:
    """A note as the collection holds it."""

    nid: int
    guid: str
    model: int
    mod: int
    """When it last changed in the collection (whole seconds): an edit, an import, a push."""
    tags: tuple[str, ...]
    fields: tuple[str, ...]
    cards: tuple[int, ...]


@dataclass(frozen=True)
class NoteType:
    """One of deckgen's note types, as a deck ships it or as the collection holds it."""

    id: int
    name: str
    fields: tuple[str, ...]
    templates: Mapping[str, tuple[str, str]]
    """Template name → (front, back)."""
    css: str
    mod: int
    """When its templates or styling last changed: the lock file's date for the deck's, Anki's for the
    collection's (0 when no exported note uses it)."""


@dataclass(frozen=True)
class CollectionState:
    """The notes of the decks holding deckgen's cards, by GUID, and deckgen's note types, by id."""

    notes: Mapping[str, AnkiNote]
    notetypes: Mapping[int, NoteType]


def read_collection(anki: AnkiConnect, deck_name: str, model_ids: Collection[int], folder: Path) -> CollectionState:
    """Everything a push decides from: the notes of *deck_name* and of any deck holding cards of *model_ids*.

    A learner may move cards to decks of their own; those decks are read too, so that every note of
    deckgen's note types is found by its GUID.  Nothing in the collection changes.
    """
    models, decks = anki.multi([("modelNamesAndIds", {}), ("deckNames", {})])
    ours = {mid: name for name, mid in models.items() if mid in model_ids}
    # Anki matches deck names without regard to case, as an import does.
    wanted = [d for d in decks if d.casefold() == deck_name.casefold()][:1]
    if ours:
        query = " OR ".join(f"mid:{mid}" for mid in sorted(ours))
        outside = anki.call("findCards", query=f"({query}) -{deck_search(deck_name)}")
        if outside:
            wanted += sorted(set(anki.call("getDecks", cards=outside)) - set(wanted))
    notes: dict[str, AnkiNote] = {}
    dates: dict[int, int] = {}
    for index, deck in enumerate(wanted):
        path = folder / f"state-{index}.apkg"
        # With scheduling: without it Anki leaves the tags "marked" and "leech" out of the package.
        if not anki.call("exportPackage", deck=deck, path=str(path), includeSched=True):
            continue  # gone since deckNames
        exported, exported_dates = _read_export(path)
        path.unlink()
        for guid, note in exported.items():
            known = notes.get(guid)
            notes[guid] = note if known is None else _with_cards(known, note.cards)
        dates.update(exported_dates)
    return CollectionState(notes, _notetypes(anki, ours, dates))


def deck_search(name: str) -> str:
    """An Anki search for the cards of deck *name* and its subdecks (``\\``, ``"``, ``*`` and ``_`` taken literally)."""
    escaped = "".join(f"\\{c}" if c in '\\"*_' else c for c in name)
    return f'"deck:{escaped}"'


def _notetypes(anki: AnkiConnect, ours: Mapping[int, str], dates: Mapping[int, int]) -> dict[int, NoteType]:
    names = sorted(ours.items())
    answers = anki.multi([(action, {"modelName": name}) for _, name in names
                          for action in ("modelFieldNames", "modelTemplates", "modelStyling")])
    found = {}
    for index, (mid, name) in enumerate(names):
        fields, templates, styling = answers[3 * index:3 * index + 3]
        found[mid] = NoteType(mid, name, tuple(fields), {t: (s["Front"], s["Back"]) for t, s in templates.items()},
                              styling["css"], dates.get(mid, 0))
    return found


def _read_export(path: Path) -> tuple[dict[str, AnkiNote], dict[int, int]]:
    """The notes of a package Anki exported, by GUID, and each note type's date."""
    try:
        return _read_package(path)
    except FileNotFoundError:
        raise DeckgenError(f"Anki said it exported the deck to {path}, but nothing is there: AnkiConnect must run "
                           "on this machine, with access to its temporary folder (--url names it)") from None
    except (OSError, zipfile.BadZipFile, sqlite3.DatabaseError, KeyError, TypeError, ValueError) as exc:
        raise DeckgenError(f"cannot read the package Anki exported to {path} ({exc}): push again; if it fails "
                           "again, update AnkiConnect (Tools → Add-ons → Check for Updates)") from None


def _read_package(path: Path) -> tuple[dict[str, AnkiNote], dict[int, int]]:
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        # A package for Anki 2.1.50 and newer holds collection.anki21, and collection.anki2 only to tell older
        # versions to update; one made for older versions holds collection.anki2 alone.
        inner = next((n for n in ("collection.anki21", "collection.anki2") if n in names), None)
        if inner is None:
            raise DeckgenError(f"AnkiConnect exported a package deckgen cannot read ({', '.join(sorted(names))}): "
                               "update AnkiConnect (Tools → Add-ons → Check for Updates)")
        data = archive.read(inner)
    with closing(sqlite3.connect(":memory:")) as db:
        db.deserialize(data)
        cards: dict[int, list[int]] = {}
        for cid, nid in db.execute("select id, nid from cards order by id"):
            cards.setdefault(nid, []).append(cid)
        notes = {guid: AnkiNote(nid, guid, mid, mod, tuple(tags.split()), tuple(fields.split("\x1f")),
                                tuple(cards.get(nid, ())))
                 for nid, guid, mid, mod, tags, fields in db.execute("select id, guid, mid, mod, tags, flds from notes")}
        (models,) = db.execute("select models from col").fetchone()
    return notes, {int(mid): int(model.get("mod", 0)) for mid, model in json.loads(models).items()}


def _with_cards(note: AnkiNote, cards: Sequence[int]) -> AnkiNote:
    """*note* with *cards* too (a note whose cards lie in two exported decks)."""
    merged = tuple(sorted({*note.cards, *cards}))
    return note if merged == note.cards else AnkiNote(note.nid, note.guid, note.model, note.mod, note.tags,
                                                      note.fields, merged)
