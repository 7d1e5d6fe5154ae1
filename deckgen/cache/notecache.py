"""Each entry's review, topics, glossary uses, cards and rendered notes: from the notes cache, else worked out and kept.

After extraction (:mod:`deckgen.cache.results`), matching every entry against the
taxonomy and glossary and rendering its cards as note HTML is most of what a
rebuild does; an entry that did not change needs neither again.  The notes
cache keeps them beside the results cache and under its rules (a private
folder, digest-checked pickles, see :mod:`deckgen.cache.resultcache` and
:mod:`deckgen.cache.entrystore`), in ``<cache dir>/notes/<version>.sqlite``.  A row
holds all a build needs of every entry of one seed file, so an unchanged file is
read from here alone; the results cache is read only for the entries this cache
lacks.

A row a file, not an entry: the entries of a file share much (classes, tags,
field names, the repository), which one pickle stores once.  10,000 entries in
200 files decode in 0.38 s this way, and took 0.58 s a row each.  The price is
paid when a file changes: its other entries are matched and rendered again
(about 0.4 ms each), though not extracted again.

The version hashes the extractor version, the source of the modules that match
and render (and everything they import), and the taxonomy and glossary as
loaded: editing ``topics.toml`` matches and renders every entry again, but
extracts none again.  Results come back the same with or without the cache.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from ..curriculum.curriculum import EntryCurriculum
from ..curriculum.glossary import Glossary
from ..curriculum.topics import Taxonomy
from ..deck.lock import BuiltNote
from ..deck.notes import EntryNotes, entry_notes
from ..types import Card, Entry, Review
from .entrystore import EntryStore
from .resultcache import (
    PACKAGE,
    decode_with,
    encode_with,
    extractor_version,
    is_cards,
    source_version,
)
from .results import Companioned, make_result

if TYPE_CHECKING:  # a type only: a cached entry loads no card-making code
    from ..cards.cards import Result

MAX_ENTRIES_PER_ROW = 256
"""A long seed file is stored in rows of this many entries: one edit matches and renders at most this many again,
and no row (its bytes, and its entries' notes held until it is complete) grows with the file."""
RENDER_MODULES = ("cache.notecache",)
"""This module (its file format) and what it imports to match, render and warn: curriculum, package, lint and theirs."""
class NoteMaker:
    """:class:`EntryNotes` of entries, from the notes cache or worked out (and kept), a seed file at a time.

    A stored file is all a build needs of its entries, their reviews and cards
    included: its entries are read from one row, not from the results cache too.
    A row keeps its reviews' facts apart, read only when they are wanted: a deck
    needs the cards, and the warnings and fact counts the row holds (a tenth
    of a second of the 0.45 s that decoding 10,000 entries took).
    With ``--jobs N`` the workers take a file's entries to make together and
    render them too (see :meth:`encoded`): a file they made whole is stored as
    they sent it.  Encoding their notes again here would give every string of the
    notes this process holds a UTF-8 copy (pickle caches one in each string it
    writes), 285 MB more on 100,000 entries.
    """

    def __init__(self, taxonomy: Taxonomy | None, glossary: Glossary | None, *, cache: bool = True,
                 facts: bool = True) -> None:
        self.taxonomy, self.glossary = taxonomy, glossary
        self._facts = facts
        """Whether stored reviews come with their facts (a deck needs only the cards, warnings and fact counts)."""
        self._store = _open_store(cache, taxonomy, glossary)
        self._entries: Sequence[Entry] = ()
        self._file_of: dict[int, tuple[_File, int]] = {}
        """Each entry's file and its place in it, by the entry's id (set by :meth:`missing`)."""
        self._chunk: tuple[Companioned | None, dict[int, EntryNotes]] = (None, {})
        """The worker's chunk whose entries are arriving, and their notes by entry id."""

    def missing(self, entries: Sequence[Entry]) -> list[int]:
        """The indexes of the *entries* with nothing stored (what is stored may still turn out damaged).

        Call it first: it sorts the entries into files.
        """
        stored = self._store.keys()
        files = _files_of(entries)
        self._entries = entries
        self._file_of = {id(entry): (file, place) for file in files for place, entry in enumerate(file.entries)}
        for file in files:
            file.in_row = file.key in stored
            if not file.in_row and self._store.enabled:
                file.expect_all()
        return [i for i, entry in enumerate(entries) if not self._file_of[id(entry)][0].in_row]

    def file_of(self, index: int) -> object:
        """The stored file (a row of the cache) that the entry at *index* belongs to: what workers make together."""
        return self._file_of[id(self._entries[index])][0]

    def stored(self, entries: Sequence[Entry]) -> Iterator[EntryNotes | None]:
        """What is stored of each of *entries* (none of them :meth:`missing`), in their order; None where nothing
        intact is."""
        opened: tuple[_File | None, list[EntryNotes | None]] = (None, [])
        for entry in entries:
            file, place = self._file_of[id(entry)]
            if opened[0] is not file:  # one file at a time: the one before is let go
                opened = (file, self._open(file))
            yield opened[1][place]

    def notes(self, entry: Entry, result: Result | None, made: Companioned | None = None) -> EntryNotes:
        """The notes of the freshly extracted *entry*, whose review and (untagged) cards are *result*; kept.

        *made* is what a worker's :meth:`encoded` made of the chunk of *entry*, when a worker rendered it (*result*
        may then be None).
        """
        if made is not None:
            found = self._from_worker(made).get(id(entry))
            if found is not None:
                return found
        if result is None:  # a worker's bytes that do not decode: only a bug gets here, never lose an entry for it
            result = make_result(entry)
        found = self._make(*result)
        file, place = self._file_of.get(id(entry), (None, 0))
        if file is not None:
            self._arrived(file, place, found)
        return found

    def _from_worker(self, made: Companioned) -> dict[int, EntryNotes]:
        """The notes of the entries of a chunk a worker made and rendered, by entry id, decoded when its first entry
        arrives; a whole file's bytes are its row, stored as they are."""
        if self._chunk[0] is made:
            return self._chunk[1]
        entries = [self._entries[i] for i in made.indexes]
        file = self._file_of[id(entries[0])][0]
        whole = (file.pending is not None and file.waiting == len(file.entries) == len(entries)
                 and all(a is b for a, b in zip(entries, file.entries)))
        # Part of a file gets its row made here, with the facts of each of its entries.
        found = _decoded_row(made.data, entries, facts=self._facts or not whole)
        if whole and None not in found:
            self._store.put(file.key, made.data)
            file.pending = None
        else:  # part of a file (the rest was in the results cache) or not intact: the file's row is made here
            for entry, notes in zip(entries, found):
                if notes is not None:
                    self._arrived(*self._file_of[id(entry)], notes)
        self._chunk = (made, {id(e): n for e, n in zip(entries, found) if n is not None})
        return self._chunk[1]

    def _arrived(self, file: _File, place: int, notes: EntryNotes) -> None:
        # Stored as soon as the file is complete: while a worker makes the next entries, this process has time
        # to spare (kept for the end, encoding was 2.3 s of a cold 10,000-entry build with nothing else running).
        complete = file.arrived(place, notes)
        if complete:
            self._store.put(*complete)

    def _open(self, file: _File) -> list[EntryNotes | None]:
        """The notes of every entry of stored *file*; all None if its row is not intact (they are then made again)."""
        found = _decoded_row(self._store.get(file.key) or b"", file.entries, facts=self._facts)
        if None not in found:
            return found
        file.expect_all()
        return [None] * len(file.entries)

    def close(self) -> None:
        """Write what is pending to the notes cache; it misses from now on."""
        self._store.close()

    def __enter__(self) -> NoteMaker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def encoded(self, entries: Sequence[Entry], results: Sequence[Result]) -> bytes:
        """The notes of a chunk of entries new to the cache, worked out (in a worker) and encoded together for
        :meth:`notes`: the bytes of a file's row when the chunk is the whole file."""
        return _encoded_row(entries, [self._make(*result) for result in results])

    def _make(self, review: Review, cards: Sequence[Card]) -> EntryNotes:
        return entry_notes(review, cards, self.taxonomy, self.glossary)


class _File:
    """The entries of one seed file, in order, and what a build has of them so far."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        keys = "\n".join(e.content_key for e in entries)
        self.key = "file:" + hashlib.sha256(keys.encode()).hexdigest()
        """Every entry's key (which holds its file and lines) in order: any change to the file is another row."""
        self.in_row = False
        """Whether the store had the file's row when the build began."""
        self.pending: list[EntryNotes | None] | None = None
        """The notes of its entries so far, while the file's row is still to be stored."""
        self.waiting = 0
        """How many of them are still None."""

    def expect_all(self) -> None:
        """Store the file's row once every one of its entries has arrived."""
        self.pending = [None] * len(self.entries)
        self.waiting = len(self.entries)

    def arrived(self, place: int, notes: EntryNotes) -> tuple[str, bytes] | None:
        """Take the notes of the entry at *place*; once every entry has arrived, the file's key and bytes to store."""
        if self.pending is None or self.pending[place] is not None:
            return None
        self.pending[place] = notes
        self.waiting -= 1
        if self.waiting:
            return None
        complete = [n for n in self.pending if n is not None]
        self.pending = None
        return self.key, _encoded_row(self.entries, complete)


def _files_of(entries: Sequence[Entry]) -> list[_File]:
    """*entries* as runs of entries from one file, each of at most :data:`MAX_ENTRIES_PER_ROW`."""
    runs: list[list[Entry]] = []
    for entry in entries:
        if not runs or runs[-1][0].path != entry.path or len(runs[-1]) == MAX_ENTRIES_PER_ROW:
            runs.append([])
        runs[-1].append(entry)
    return [_File(run) for run in runs]


def _encoded_row(entries: Sequence[Entry], notes: Sequence[EntryNotes]) -> bytes:
    """The notes of *entries* (all of their facts too) as one row of the store: see :func:`_decoded_row`."""
    values = []
    for made in notes:
        for note in made.notes:
            note.hash  # noqa: B018 -- computed now, so it is stored with the note and the lock need not redo it
        review = made.review
        values.append((review.entry.content_key, replace(review, facts=()), made.curriculum, made.cards,
                       made.notes, made.warnings, made.fact_count))
    facts = pickle.dumps(tuple(n.review.facts for n in notes), protocol=pickle.HIGHEST_PROTOCOL)
    return encode_with(entries, (tuple(values), facts))


def _decoded_row(data: bytes, entries: Sequence[Entry], *, facts: bool) -> list[EntryNotes | None]:
    """The notes of each of *entries* in a row (from :func:`_encoded_row`), their reviews with their facts if *facts*
    (else without them); all None for a row that is not intact or not theirs."""
    loaded = decode_with(data, entries)
    none: list[EntryNotes | None] = [None] * len(entries)
    if not (isinstance(loaded, tuple) and len(loaded) == 2 and isinstance(loaded[0], tuple)
            and len(loaded[0]) == len(entries) and isinstance(loaded[1], bytes)):
        return none
    found = [_checked(values, entry) for values, entry in zip(loaded[0], entries)]
    if not facts or None in found:
        return found
    try:
        kept = pickle.loads(loaded[1])  # part of the payload whose digest was checked
    except Exception:  # a payload from another deckgen build whose classes changed shape: a miss
        return none
    if not (isinstance(kept, tuple) and len(kept) == len(entries)
            and all(isinstance(f, tuple) and len(f) == n.fact_count for f, n in zip(kept, found) if n is not None)):
        return none
    return [replace(n, review=replace(n.review, facts=f)) if n is not None else None for n, f in zip(found, kept)]


def _checked(loaded: object, entry: Entry) -> EntryNotes | None:
    """The notes of *entry* in *loaded* (its values in a row, see :func:`_encoded_row`), or None for anything not
    intact or not its own."""
    if not (isinstance(loaded, tuple) and len(loaded) == 7):
        return None
    key, review, curriculum, cards, notes, warnings, fact_count = loaded
    # The key: another entry's intact row (a damaged store) must not pass for this one's.
    if not (key == entry.content_key and isinstance(review, Review) and review.entry is entry
            and isinstance(curriculum, EntryCurriculum) and is_cards(cards) and isinstance(notes, tuple)
            and len(notes) == len(cards) and all(isinstance(n, BuiltNote) and n.key == c.key for n, c in zip(notes, cards))
            and isinstance(warnings, tuple) and all(isinstance(w, str) for w in warnings) and isinstance(fact_count, int)):
        return None
    return EntryNotes(review, curriculum, cards, notes, warnings, fact_count)


@lru_cache(maxsize=1)
def render_version() -> str | None:
    """A digest of the extractor version and of the matching and rendering code."""
    extractor = extractor_version()
    render = source_version(PACKAGE, RENDER_MODULES)
    return None if extractor is None or render is None else hashlib.sha256(f"{extractor} {render}".encode()).hexdigest()


def _open_store(enabled: bool, taxonomy: Taxonomy | None, glossary: Glossary | None) -> EntryStore:
    code = render_version() if enabled else None
    if code is None:
        return EntryStore(None)
    # The data files as loaded (every field, the file's path too): a change to either is a new version.
    data = repr((taxonomy, glossary)).encode("utf-8", "surrogatepass")
    return EntryStore.open("notes", hashlib.sha256(code.encode() + b"\0" + data).hexdigest()[:20])
