"""What a build wrote of its lock file, so that the next build need not parse that file again.

A lock file holds every note ever shipped, fields and tags included (a corpus
of 10,000 entries: 52,000 notes, 49 MB of JSON).  Parsing it took 0.5-1.0 s
and 300 MB in a rebuild, which then reads the fields and tags of only the
notes that changed or went.  So when a build writes a lock file, it keeps here
the file's digest and every note but its fields and tags.  The next build that
finds that very file (the same digest) takes the notes from here and each
note's line from the file: a note reads its fields and tags from its line when
asked (see :func:`deckgen.deck.lock.recalled_note`), and an unchanged note is written
back as the same line, not encoded again.  Any other file (edited by hand,
merged, written by another deckgen) is parsed as before.

Stored by :mod:`deckgen.cache.entrystore` in ``<cache dir>/locks/<version>.sqlite``,
keyed by the lock file's absolute path, under the rules of the other caches
(a private folder, digest-checked pickles; ``--no-cache`` turns it off).  The
version hashes the source of :mod:`deckgen.deck.lock` (its line format) and of this
module.
"""

from __future__ import annotations

import pickle
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..deck.lock import Lock, NoteTypeState, lock_digest, note_lines, recalled_note
from .entrystore import EntryStore
from .resultcache import PACKAGE, encode_payload, intact_payload, source_version

MEMO_MODULES = ("cache.lockmemo",)
"""This module and what it imports (the lock module's line format above all)."""
_NOTES_PER_ROW = 8192
_CHUNK_MARK = "\0"
"""Between a lock file's path and the number of a chunk of its notes, in a key (no path holds it)."""
KEPT = 8
"""Lock files remembered: a user's few decks, not every output a test or benchmark ever built."""


@lru_cache(maxsize=1)
def memo_version() -> str | None:
    """A digest of the source of this module and of what it imports (the lock file's line format above all)."""
    return source_version(PACKAGE, MEMO_MODULES)


class LockMemo:
    """Lock files by path, as the builds that wrote them knew them; a memo opened off recalls nothing."""

    def __init__(self, enabled: bool = True) -> None:
        self._enabled = enabled
        self._opened: EntryStore | None = None

    @classmethod
    def open(cls, enabled: bool = True) -> LockMemo:
        """The memo in this user's cache folder (an off one when that is off, unsafe or unusable)."""
        return cls(enabled)

    @property
    def _store(self) -> EntryStore:
        # Opened when first asked: a first build, with no lock file to recall, opens it only to remember one.
        if self._opened is None:
            self._opened = EntryStore.open("locks", memo_version() if self._enabled else None)
        return self._opened

    def recall(self, path: Path, data: bytes) -> Lock | None:
        """The lock whose file at *path* holds *data*, if this memo has it (else None: parse the file)."""
        key = _key(path)
        header = self._load(self._store.get(key)) if self._store.enabled else None
        if not (isinstance(header, tuple) and len(header) == 5):
            return None
        digest, version, schema, notetypes, sizes = header
        if digest != lock_digest(data) or not sizes:
            return None
        rows: list[tuple[Any, ...]] = []
        for index, stored in enumerate(self._store.get_many([_chunk_key(key, i) for i in range(len(sizes))])):
            chunk = self._load(stored)
            if not (isinstance(chunk, tuple) and chunk[:2] == (digest, index) and len(chunk[2]) == sizes[index]):
                return None
            rows.extend(chunk[2])
        # The file is the very text that build wrote (the digest says so): its lines are where that build put them.
        parts = note_lines(data, len(rows))
        if parts is None:
            return None
        notes = list(map(recalled_note, rows, parts))
        lock = Lock(version, schema, tuple(notes),
                    {mid: NoteTypeState(hash_, shape, changed) for mid, hash_, shape, changed in notetypes},
                    in_lock_order=True)
        # A lock with a GUID or note id twice is refused when parsed, which says where: never taken from here.
        return lock if lock.has_no_repeats() else None

    def remember(self, path: Path, lock: Lock, digest: str) -> None:
        """Keep *lock*, which was just written to *path* as the bytes of *digest* (:func:`lock_digest`)."""
        if not self._store.enabled:
            return
        key = _key(path)
        notes = lock.notes_in_file_order()
        sizes = []
        # A chunk of notes a row, each written at once: the rows of 520,000 notes (100,000 PRs) held at once, and
        # their pickle, raised that build's memory peak past its budget.
        for index, start in enumerate(range(0, len(notes), _NOTES_PER_ROW)):
            rows = [note.memo_row() for note in notes[start:start + _NOTES_PER_ROW]]
            self._store.put(_chunk_key(key, index), _dump((digest, index, rows)))
            self._store.flush()
            sizes.append(len(rows))
        notetypes = [(mid, s.hash, s.shape, s.changed) for mid, s in sorted(lock.notetypes.items())]
        self._store.put(key, _dump((digest, lock.version, lock.schema, notetypes, sizes)))
        self._store.flush()
        mine = {key, *(_chunk_key(key, i) for i in range(len(sizes)))}
        by_path: dict[str, set[str]] = {}
        for stored in self._store.keys():
            by_path.setdefault(stored.split(_CHUNK_MARK)[0], set()).add(stored)
        stale = by_path.pop(key, set()) - mine  # chunks of a longer lock this file held before
        if len(by_path) >= KEPT:
            stale.update(*by_path.values())
        self._store.discard(stale)

    @staticmethod
    def _load(stored: bytes | None) -> object:
        payload = intact_payload(stored) if stored else None
        if payload is None:
            return None
        try:
            return pickle.loads(payload)
        except Exception:  # written by a deckgen whose classes had another shape: a miss
            return None

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()

    def __enter__(self) -> LockMemo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _key(path: Path) -> str:
    return str(Path(path).resolve())


def _chunk_key(key: str, index: int) -> str:
    return f"{key}{_CHUNK_MARK}{index}"


def _dump(value: object) -> bytes:
    return encode_payload(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
