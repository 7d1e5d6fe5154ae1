"""Bytes by entry key, in one SQLite file per cache kind and version: the storage of the per-entry caches.

``<cache dir>/<kind>/<version>.sqlite`` (the cache dir is
:func:`deckgen.files.cachedir.private_cache_dir`).  One file rather than a file per
entry: a cold build of 10,000 entries wrote 20,000 small files, a second of
CPU per 10,000, and a rebuild opened all of them again; SQLite stores and finds
them in a tenth of that, and a hundred thousand entries are not 200,000 inodes.

* **Privacy**: callers unpickle what they read, so only this user may ever have
  written it.  The kind's folder must be ``0700`` and this user's (it is created
  so), else there is no store this run.
* **Never in the way**: a store is a cache.  Any SQLite error turns it off for
  the rest of the run (a miss for every read, no writes); a file that is not a
  database, or a damaged one, is replaced by an empty one.  Writes are batched
  in transactions without fsync: a power cut loses at most the last batch, and
  what the callers store carries its own digest.
* **Several builds at once**: write-ahead logging lets them read while one
  writes; a writer waits for another up to a few seconds, then skips.
* **Read-only**: a store this user may read but not write (a read-only cache
  folder) is read as it is, and nothing is stored.
* **Stale versions**: files of other versions no build used for a day are removed.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..files.cachedir import private_cache_dir

SUFFIX = ".sqlite"
_STALE_SECONDS = 24 * 3600
_BATCH = 512
"""Writes per transaction: an interrupted cold build keeps all but its last batch."""
_BATCH_BYTES = 8 << 20
"""Or fewer, when they are big (the notes of a whole file): what waits to be written is never much memory."""
_WAIT_SECONDS = 5.0
"""How long a writer waits for another build's write to end before it goes without the store."""
_KEYS_PER_QUERY = 500
"""Under SQLite's oldest limit on a statement's parameters (999)."""
_SCHEMA = "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, data BLOB NOT NULL)"


class EntryStore:
    """Bytes by key in one SQLite file; a store opened on ``None`` misses every time and stores nothing."""

    def __init__(self, path: Path | None) -> None:
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[str, bytes]] = []
        self._pending_bytes = 0
        self._writable = False
        if path is not None:
            self._db, self._writable = _connect(path)

    @classmethod
    def open(cls, kind: str, version: str | None) -> EntryStore:
        """The store of *kind* and *version* in this user's cache folder (an off one when there is none)."""
        return cls(_store_path(kind, version))

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def get(self, key: str) -> bytes | None:
        return self._select([key]).get(key)

    def get_many(self, keys: Sequence[str]) -> Iterator[bytes | None]:
        """:meth:`get` of each of *keys*, in their order: a query per few hundred keys, not one each."""
        for start in range(0, len(keys), _KEYS_PER_QUERY):
            chunk = keys[start:start + _KEYS_PER_QUERY]
            found = self._select(chunk)
            yield from map(found.get, chunk)

    def _select(self, keys: Sequence[str]) -> dict[str, bytes]:
        if self._db is None:
            return {}
        try:
            return dict(self._db.execute(f"SELECT key, data FROM entries WHERE key IN ({','.join('?' * len(keys))})",
                                         keys))
        except sqlite3.Error:
            self._off()
            return {}

    def missing(self, keys: Sequence[str]) -> list[int]:
        """The positions in *keys* of those not stored (one query for every stored key)."""
        stored = self.keys()
        return [i for i, key in enumerate(keys) if key not in stored]

    def keys(self) -> frozenset[str]:
        """Every stored key, in one query (a build asks about each of its entries)."""
        if self._db is None:
            return frozenset()
        try:
            return frozenset(key for (key,) in self._db.execute("SELECT key FROM entries"))
        except sqlite3.Error:
            self._off()
            return frozenset()

    def discard(self, keys: Iterable[str]) -> None:
        """Remove *keys* (and what is pending for them) now."""
        keys = set(keys)
        self._pending = [(key, data) for key, data in self._pending if key not in keys]
        self._pending_bytes = sum(len(data) for _, data in self._pending)
        if self._db is None or not self._writable or not keys:
            return
        try:
            with self._db:
                self._db.executemany("DELETE FROM entries WHERE key = ?", [(key,) for key in sorted(keys)])
        except sqlite3.Error:
            self._off()

    def put(self, key: str, data: bytes) -> None:
        """Store *data* under *key* (written in batches, and by :meth:`close`)."""
        if self._db is None or not self._writable:
            return
        self._pending.append((key, data))
        self._pending_bytes += len(data)
        if len(self._pending) >= _BATCH or self._pending_bytes >= _BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self._db is None or not self._pending:
            return
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        try:
            with self._db:  # one transaction
                self._db.executemany("INSERT OR REPLACE INTO entries (key, data) VALUES (?, ?)", pending)
        except sqlite3.Error:
            self._off()

    def close(self) -> None:
        """Write what is pending and let go of the file; the store misses from now on."""
        self.flush()
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> EntryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _off(self) -> None:
        if self._db is not None:
            self._db.close()
        self._db, self._pending, self._pending_bytes = None, [], 0


def _store_path(kind: str, version: str | None) -> Path | None:
    """``<cache dir>/<kind>/<version>.sqlite``; None without a version or a private folder for it."""
    if version is None:
        return None
    base = private_cache_dir()
    if base is None:
        return None
    folder = base / kind
    try:
        folder.mkdir(exist_ok=True, mode=0o700)
        info = folder.stat()
    except OSError:
        return None
    if info.st_mode & 0o077 or (hasattr(os, "geteuid") and info.st_uid != os.geteuid()):
        return None
    path = folder / f"{version}{SUFFIX}"
    if not path.exists():
        _remove_stale(folder)
    return path


def _connect(path: Path) -> tuple[sqlite3.Connection | None, bool]:
    """An open store at *path*, made if missing, and whether it can be written; a damaged file is replaced.

    (None, False) when SQLite cannot open it.
    """
    for attempt in range(2):
        try:
            # Created private before SQLite opens it (its journal files take the same mode).
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            os.utime(path)  # marks the version as in use (see _remove_stale)
        except PermissionError:
            return _read_only(path), False
        except OSError:
            return None, False
        try:
            db = sqlite3.connect(path, timeout=_WAIT_SECONDS, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            return None, False
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = OFF")
            db.execute(_SCHEMA)
            db.execute("SELECT 1 FROM entries LIMIT 1").fetchall()
            return db, True
        except sqlite3.OperationalError:  # locked, read-only, out of space: no store this run
            db.close()
            return None, False
        except sqlite3.DatabaseError:  # not a database, or a damaged one: start it again, once
            db.close()
            if attempt == 0:
                _remove_files(path)
    return None, False


def _read_only(path: Path) -> sqlite3.Connection | None:
    """The store at *path* opened for reading only, as it is (no journal: nothing may be written next to it)."""
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        db.execute("SELECT 1 FROM entries LIMIT 1").fetchall()
        return db
    except sqlite3.Error:
        return None


def _remove_files(path: Path) -> None:
    for extra in ("", "-wal", "-shm"):
        try:
            Path(f"{path}{extra}").unlink()
        except FileNotFoundError:
            pass
        except OSError:
            return


def _remove_stale(folder: Path) -> None:
    """Drop the stores of other versions that no build has used for a day (and folders of the old layout)."""
    cutoff = time.time() - _STALE_SECONDS
    try:
        found = [p for p in folder.iterdir() if not p.is_symlink() and (p.is_dir() or p.name.endswith(SUFFIX))]
    except OSError:
        return
    for path in found:
        try:
            if path.stat().st_mtime >= cutoff:
                continue
        except OSError:
            continue
        if path.is_dir():  # <version>/<xx>/<key> files of deckgen before the SQLite stores
            shutil.rmtree(path, ignore_errors=True)
        else:
            _remove_files(path)
