"""Each entry's review, topics, glossary uses, cards and rendered notes: from the notes cache, else worked out and kept.

After extraction (:mod:`deckgen.results`), matching every entry against the
taxonomy and glossary and rendering its cards as note HTML is most of what a
rebuild does; an entry that did not change needs neither again.  The notes
cache keeps them per entry beside the results cache and under its rules (a
private folder, digest-checked pickles, see :mod:`deckgen.resultcache` and
:mod:`deckgen.entrystore`), in ``<cache dir>/notes/<version>.sqlite``.  A row
holds all a build needs of its entry, so an unchanged entry is read from here
alone; the results cache is read only for the entries this cache lacks.

The version hashes the extractor version, the source of the modules that match
and render (and everything they import), and the taxonomy and glossary as
loaded: editing ``topics.toml`` matches and renders every entry again, but
extracts none again.  Results come back the same with or without the cache.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .curriculum import EntryCurriculum, entry_curriculum, tag_cards
from .glossary import Glossary
from .lock import BuiltNote
from .package import built_note
from .entrystore import EntryStore
from .resultcache import decode_tuple, encode_without, extractor_version, is_cards, source_version
from .topics import Taxonomy
from .types import Card, Entry, Review

RENDER_MODULES = ("notecache",)
"""This module (its file format) and what it imports to match and render: curriculum, package and theirs."""


@dataclass(frozen=True)
class EntryNotes:
    """One entry after the taxonomy and glossary: its review, curriculum, topic-tagged cards and their notes."""

    review: Review
    curriculum: EntryCurriculum
    cards: tuple[Card, ...]
    notes: tuple[BuiltNote, ...]
    """:func:`~deckgen.package.built_note` of each card, in card order."""


class NoteMaker:
    """:class:`EntryNotes` of entries, from the notes cache or worked out (and kept).

    A stored entry is all a build needs of it, its review and cards included:
    an unchanged entry is one row read, not a row of the results cache too
    (10,000 entries: 0.58 s of CPU where the two took 0.77 s).
    """

    def __init__(self, taxonomy: Taxonomy | None, glossary: Glossary | None, *, cache: bool = True) -> None:
        self.taxonomy, self.glossary = taxonomy, glossary
        self._store = _open_store(cache, taxonomy, glossary)

    def missing(self, entries: Sequence[Entry]) -> list[int]:
        """The indexes of the *entries* with nothing stored (what is stored may still turn out damaged)."""
        return self._store.missing([e.content_key for e in entries])

    def stored(self, entries: Sequence[Entry]) -> Iterator[EntryNotes | None]:
        """What is stored of each of *entries*, in their order; None where nothing intact is."""
        for data, entry in zip(self._store.get_many([e.content_key for e in entries]), entries):
            yield None if data is None else _decode(data, entry)

    def notes(self, review: Review, cards: Sequence[Card], made: bytes | None = None) -> EntryNotes:
        """The notes of a freshly extracted *review*, whose (untagged) cards are *cards*; kept in the cache.

        *made* is :meth:`encoded` of them by a worker process, when one made them.
        """
        found = _decode(made, review.entry) if made else None
        if found is not None and made is not None:
            self._store.put(review.entry.content_key, made)
        else:
            found = self._make(review, cards)
            if self._store.enabled:
                # Encoded now, while a worker makes the next entries and this process has time to spare: kept for
                # the end, it was 2.3 s of a cold 10,000-entry build with nothing else running.  The price is memory
                # while the worker lives (the notes' hashes, the pickling's leftovers): 38 MB more at that build's peak.
                self._store.put(review.entry.content_key, _encode(found))
        return found

    def close(self) -> None:
        """Write what is pending to the notes cache; it misses from now on."""
        self._store.close()

    def __enter__(self) -> NoteMaker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def encoded(self, review: Review, cards: Sequence[Card]) -> bytes:
        """The notes of an entry new to the cache, worked out (in a worker) and encoded for :meth:`notes`."""
        return _encode(self._make(review, cards))

    def _make(self, review: Review, cards: Sequence[Card]) -> EntryNotes:
        curriculum = entry_curriculum(review, self.taxonomy, self.glossary)
        tagged = tuple(tag_cards(cards, curriculum.topics))
        return EntryNotes(review, curriculum, tagged, tuple(built_note(c) for c in tagged))


def _encode(notes: EntryNotes) -> bytes:
    """*notes* as notes-cache bytes, with the key of their entry (whose fields are left out)."""
    for note in notes.notes:
        note.hash  # noqa: B018 -- computed now, so it is stored with the note and the lock need not redo it
    entry = notes.review.entry
    return encode_without(entry, (entry.content_key, notes.review, notes.curriculum, notes.cards, notes.notes))


def _decode(data: bytes, entry: Entry) -> EntryNotes | None:
    """The notes of *entry* in *data* (from :func:`_encode`), or None for anything not intact or not its own."""
    loaded = decode_tuple(data, entry, 5)
    if loaded is None:
        return None
    key, review, curriculum, cards, notes = loaded
    # The key: another entry's intact row (a damaged store) must not pass for this one's.
    if not (key == entry.content_key and isinstance(review, Review) and isinstance(curriculum, EntryCurriculum)
            and is_cards(cards) and isinstance(notes, tuple) and len(notes) == len(cards)
            and all(isinstance(n, BuiltNote) and n.key == c.key for n, c in zip(notes, cards))):
        return None
    return EntryNotes(review, curriculum, cards, notes)


@lru_cache(maxsize=1)
def render_version() -> str | None:
    """A digest of the extractor version and of the matching and rendering code."""
    extractor = extractor_version()
    render = source_version(Path(__file__).resolve().parent, RENDER_MODULES)
    return None if extractor is None or render is None else hashlib.sha256(f"{extractor} {render}".encode()).hexdigest()


def _open_store(enabled: bool, taxonomy: Taxonomy | None, glossary: Glossary | None) -> EntryStore:
    code = render_version() if enabled else None
    if code is None:
        return EntryStore(None)
    # The data files as loaded (every field, the file's path too): a change to either is a new version.
    data = repr((taxonomy, glossary)).encode("utf-8", "surrogatepass")
    return EntryStore.open("notes", hashlib.sha256(code.encode() + b"\0" + data).hexdigest()[:20])
