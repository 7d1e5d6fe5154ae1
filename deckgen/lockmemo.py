"""What a build wrote of its lock file, so that the next build need not parse that file again.

A lock file holds every note ever shipped, fields and tags included (a corpus
of 10,000 entries: 52,000 notes, 49 MB of JSON).  Parsing it took 0.5-1.0 s
and 300 MB in a rebuild, which then reads the fields and tags of only the
notes that changed or went.  So when a build writes a lock file, it keeps here
the file's digest and every note but its fields and tags.  The next build that
finds that very file (the same digest) takes the notes from here and each
note's line from the file: a note reads its fields and tags from its line when
asked (see :func:`deckgen.lock.recalled_note`), and an unchanged note is written
back as the same line, not encoded again.  Any other file (edited by hand,
merged, written by another deckgen) is parsed as before.

Stored by :mod:`deckgen.entrystore` in ``<cache dir>/locks/<version>.sqlite``,
keyed by the lock file's absolute path, under the rules of the other caches
(a private folder, digest-checked pickles; ``--no-cache`` turns it off).  The
version hashes the source of :mod:`deckgen.lock` (its line format) and of this
module.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

from .entrystore import EntryStore
from .lock import LOCK_FORMAT, Lock, NoteTypeState, recalled_note
from .resultcache import encode_payload, intact_payload, source_version

MEMO_MODULES = ("lockmemo",)
"""This module and what it imports (the lock module's line format above all)."""
KEPT = 8
"""Lock files remembered: a user's few decks, not every output a test or benchmark ever built."""
_HEAD = (b"{", f'"format": {LOCK_FORMAT},'.encode(), b'"notes": [')
"""The lines before the first note's, as :meth:`~deckgen.lock.Lock.text_chunks` writes them."""


def lock_hasher() -> hashlib._Hash:
    """What a lock file's digest is made with: give it the bytes as they are written, then :meth:`LockMemo.remember`."""
    return hashlib.sha256()


def lock_digest(data: bytes) -> str:
    hasher = lock_hasher()
    hasher.update(data)
    return hasher.hexdigest()


class LockMemo:
    """Lock files by path, as the builds that wrote them knew them; a memo opened off recalls nothing."""

    def __init__(self, store: EntryStore) -> None:
        self._store = store

    @classmethod
    def open(cls, enabled: bool = True) -> LockMemo:
        """The memo in this user's cache folder (an off one when that is off, unsafe or unusable)."""
        version = source_version(Path(__file__).resolve().parent, MEMO_MODULES) if enabled else None
        return cls(EntryStore.open("locks", version))

    def recall(self, path: Path, data: bytes) -> Lock | None:
        """The lock whose file at *path* holds *data*, if this memo has it (else None: parse the file)."""
        stored = self._store.get(_key(path)) if self._store.enabled else None
        payload = intact_payload(stored) if stored else None
        if payload is None:
            return None
        try:
            digest, version, schema, notetypes, rows = pickle.loads(payload)
        except Exception:  # written by a deckgen whose classes had another shape: a miss
            return None
        if digest != lock_digest(data) or not rows:
            return None
        # The file is the very text that build wrote (the digest says so): its lines are where it put them.
        lines = data.split(b"\n", len(rows) + len(_HEAD))
        last = len(_HEAD) + len(rows) - 1
        if tuple(lines[:len(_HEAD)]) != _HEAD or not lines[last + 1].startswith(b"]"):
            return None
        notes = [recalled_note(row, line[:-1]) for row, line in zip(rows, lines[len(_HEAD):last])]
        notes.append(recalled_note(rows[-1], lines[last]))
        lock = Lock(version, schema, tuple(notes),
                    {mid: NoteTypeState(hash_, shape, changed) for mid, hash_, shape, changed in notetypes},
                    in_lock_order=True)
        # A lock with a GUID or note id twice is refused when parsed, which says where: never taken from here.
        return lock if lock.has_no_repeats() else None

    def remember(self, path: Path, lock: Lock, digest: str) -> None:
        """Keep *lock*, which was just written to *path* as the bytes of *digest* (:func:`lock_digest`)."""
        if not self._store.enabled:
            return
        rows = [note.memo_row() for note in lock.notes_in_file_order()]
        notetypes = [(mid, s.hash, s.shape, s.changed) for mid, s in sorted(lock.notetypes.items())]
        key = _key(path)
        self._store.put(key, encode_payload(pickle.dumps((digest, lock.version, lock.schema, notetypes, rows),
                                                         protocol=pickle.HIGHEST_PROTOCOL)))
        self._store.flush()
        others = self._store.keys() - {key}
        if len(others) >= KEPT:
            self._store.discard(others)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> LockMemo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _key(path: Path) -> str:
    return str(Path(path).resolve())
