"""Each entry's topics, glossary uses and rendered notes: from the notes cache, else worked out and kept.

After extraction (:mod:`deckgen.results`), matching every entry against the
taxonomy and glossary and rendering its cards as note HTML is most of what a
rebuild does; an entry that did not change needs neither again.  The notes
cache keeps them per entry beside the results cache and under its rules (a
private folder, digest-checked pickles, see :mod:`deckgen.resultcache` and
:mod:`deckgen.entrystore`), in ``<cache dir>/notes/<version>.sqlite``.

The version hashes the extractor version, the source of the modules that match
and render (and everything they import), and the taxonomy and glossary as
loaded: editing ``topics.toml`` matches and renders every entry again, but
extracts none again.  Results come back the same with or without the cache.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .curriculum import EntryCurriculum, entry_curriculum, tag_cards
from .glossary import Glossary
from .lock import BuiltNote
from .package import built_note
from .entrystore import EntryStore
from .resultcache import encode_payload, extractor_version, intact_payload, source_version
from .topics import Taxonomy
from .types import Card, Review

RENDER_MODULES = ("notecache",)
"""This module (its file format) and what it imports to match and render: curriculum, package and theirs."""


@dataclass(frozen=True)
class EntryNotes:
    """One entry after the taxonomy and glossary: its curriculum, its topic-tagged cards and their notes."""

    curriculum: EntryCurriculum
    cards: tuple[Card, ...]
    notes: tuple[BuiltNote, ...]
    """:func:`~deckgen.package.built_note` of each card, in card order."""


class NoteMaker:
    """:class:`EntryNotes` of one entry at a time, from the notes cache or worked out (and kept)."""

    def __init__(self, taxonomy: Taxonomy | None, glossary: Glossary | None, *, cache: bool = True) -> None:
        self.taxonomy, self.glossary = taxonomy, glossary
        self._store = _NoteCache.open(cache, taxonomy, glossary)

    def notes(self, review: Review, cards: Sequence[Card], made: bytes | None = None) -> EntryNotes:
        """The notes of *review*, whose (untagged) cards are *cards*.

        *made* is :meth:`encoded` of them by a worker process, when one made them.
        """
        stored = self._store.decode(made, cards) if made else self._store.get(review, cards)
        if stored is None:
            stored = self._make(review, cards)
            self._store.put(review, _payload(stored))
        elif made:
            self._store.put(review, made)
        return stored

    def close(self) -> None:
        """Write what is pending to the notes cache; it misses from now on."""
        self._store.close()

    def __enter__(self) -> NoteMaker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def encoded(self, review: Review, cards: Sequence[Card]) -> bytes:
        """The notes of an entry new to the cache, worked out (in a worker) and encoded for :meth:`notes`."""
        return _payload(self._make(review, cards))

    def _make(self, review: Review, cards: Sequence[Card]) -> EntryNotes:
        curriculum = entry_curriculum(review, self.taxonomy, self.glossary)
        tagged = tuple(tag_cards(cards, curriculum.topics))
        return EntryNotes(curriculum, tagged, tuple(built_note(c) for c in tagged))


def _payload(stored: EntryNotes) -> bytes:
    """*stored* as notes-cache file bytes (not its cards: they are in the results cache, tagged again on reading)."""
    for note in stored.notes:
        note.hash  # noqa: B018 -- computed now, so it is stored with the note and the lock need not redo it
    payload = pickle.dumps((stored.curriculum, stored.notes), protocol=pickle.HIGHEST_PROTOCOL)
    return encode_payload(payload)


@lru_cache(maxsize=1)
def render_version() -> str | None:
    """A digest of the extractor version and of the matching and rendering code."""
    extractor = extractor_version()
    render = source_version(Path(__file__).resolve().parent, RENDER_MODULES)
    return None if extractor is None or render is None else hashlib.sha256(f"{extractor} {render}".encode()).hexdigest()


class _NoteCache:
    def __init__(self, store: EntryStore) -> None:
        self.store = store

    @classmethod
    def open(cls, enabled: bool, taxonomy: Taxonomy | None, glossary: Glossary | None) -> _NoteCache:
        code = render_version() if enabled else None
        if code is None:
            return cls(EntryStore(None))
        # The data files as loaded (every field, the file's path too): a change to either is a new version.
        data = repr((taxonomy, glossary)).encode("utf-8", "surrogatepass")
        return cls(EntryStore.open("notes", hashlib.sha256(code.encode() + b"\0" + data).hexdigest()[:20]))

    def get(self, review: Review, cards: Sequence[Card]) -> EntryNotes | None:
        """The stored notes of *review*, when they were made from exactly *cards*."""
        data = self.store.get(review.entry.content_key)
        return None if data is None else self.decode(data, cards)

    @staticmethod
    def decode(data: bytes, cards: Sequence[Card]) -> EntryNotes | None:
        """The notes in *data* (from :func:`_payload`), when they were made from exactly *cards*."""
        payload = intact_payload(data)
        if payload is None:
            return None
        try:
            curriculum, notes = pickle.load(io.BytesIO(payload))
        except Exception:  # written by another deckgen whose classes changed shape: a miss
            return None
        if not (isinstance(curriculum, EntryCurriculum) and isinstance(notes, tuple) and len(notes) == len(cards)
                and all(isinstance(n, BuiltNote) and n.key == c.key for n, c in zip(notes, cards))):
            return None
        # The cards themselves come from the results cache: tagged here as when they were stored.
        return EntryNotes(curriculum, tuple(tag_cards(cards, curriculum.topics)), notes)

    def put(self, review: Review, data: bytes) -> None:
        self.store.put(review.entry.content_key, data)

    def close(self) -> None:
        self.store.close()
