"""The results cache: each entry's review and cards, so an unchanged entry is never segmented again.

One file per entry in ``<cache dir>/results/<extractor version>/<xx>/<key>``
(the cache dir is :func:`deckgen.cache.private_cache_dir`: ``$DECKGEN_CACHE_DIR``,
else ``$XDG_CACHE_HOME/deckgen``, else ``~/.cache/deckgen``, and only if it is private).

* **Key**: a hash of everything the extract and card stages see of the entry
  (repository, summary, review, file and line numbers: cards carry the lines).
* **Extractor version**: a hash of the source of the extraction-stage modules
  and every deckgen module they import, plus jieba's and Python's versions.  Any
  edit to that code starts a new, empty version folder by itself; nobody has to
  remember to bump a constant.  Folders of other versions unused for a day are
  removed.
* **Format**: a magic line, a SHA-256 digest of the payload, then the payload, a
  pickle of ``(review, cards)`` whose :class:`~deckgen.types.Entry` is left out
  (the entry being built is put back in when loading).  The digest is checked
  before anything is unpickled, so a truncated, zeroed or edited file is a miss,
  never a crash and never code run; any error reading or loading is a miss too.
* **Privacy**: pickle must only ever read files this user wrote.  The cache dir
  must belong to the user and not be writable by anyone else, and the results
  folder must be ``0700`` (it is created so); otherwise the cache is off for this run.
* **Writes** go to a temporary file in the same folder, renamed into place, so a
  reader sees a whole file or none.  They are not fsynced: a file cut short by a
  power cut fails its digest and is computed again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import pickle
import re
import shutil
import sys
import time
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from .atomic import write_cache_file
from .cache import private_cache_dir
from .types import Card, Entry, Review

FORMAT = b"deckgen-results 1\n"
EXTRACTION_MODULES = ("units", "segment", "relations", "extract", "cards", "gate")
"""The modules whose output is cached; the modules they import count too (found by reading the source)."""
_STALE_SECONDS = 24 * 3600
_IMPORT_RE = re.compile(r"^\s*from \.(\w*) import ([\w, ()]+)", re.MULTILINE)
_ENTRY = "entry"

Result = tuple[Review, tuple[Card, ...]]


def _module_closure(package: Path, roots: Sequence[str]) -> dict[str, bytes]:
    """Source bytes of the *roots* modules of *package* and every sibling module they import."""
    sources: dict[str, bytes] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in sources:
            continue
        sources[name] = (package / f"{name}.py").read_bytes()
        for module, names in _IMPORT_RE.findall(sources[name].decode("utf-8")):
            # ``from .x import y`` names module x; ``from . import y`` names module y.
            found = [module] if module else [n.strip(" ()") for n in names.split(",")]
            todo.extend(n for n in found if n and (package / f"{n}.py").is_file())
    return sources


@lru_cache(maxsize=1)
def extractor_version() -> str | None:
    """A digest that changes whenever the code (or jieba, or Python) behind a cached result may have changed.

    ``None`` when the sources cannot be read (then nothing is cached).
    """
    return source_version(Path(__file__).resolve().parent)


def source_version(package: Path, roots: Sequence[str] = EXTRACTION_MODULES) -> str | None:
    """:func:`extractor_version` of the deckgen package in folder *package* (or of its *roots* modules)."""
    try:
        sources = _module_closure(package, roots)
        spec = importlib.util.find_spec("jieba")  # finds jieba without importing it (0.4 s)
        jieba_init = Path(spec.origin).read_bytes() if spec and spec.origin else b""
    except (OSError, UnicodeDecodeError, ImportError, ValueError):
        return None
    digest = hashlib.sha256(FORMAT)
    digest.update(f"{sys.version_info[:2]} {unicodedata.unidata_version} {pickle.HIGHEST_PROTOCOL}".encode())
    digest.update(hashlib.sha256(jieba_init).digest())
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + hashlib.sha256(sources[name]).digest())
    return digest.hexdigest()[:20]


def entry_key(entry: Entry) -> str:
    """Everything the extract and card stages read of *entry*, hashed (:attr:`~deckgen.types.Entry.content_key`)."""
    return entry.content_key


class ResultCache:
    """Reviews and cards by entry; a disabled cache (``folder=None``) misses every time and stores nothing."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    @classmethod
    def open(cls, enabled: bool = True) -> ResultCache:
        """The cache in this user's cache folder, or a disabled one when that is off, unsafe or unusable."""
        return cls(entry_files_folder("results", extractor_version() if enabled else None))

    def has(self, entry: Entry) -> bool:
        """Whether *entry* has a file in the cache (which :meth:`get` may still find damaged)."""
        return self.folder is not None and os.path.exists(entry_file(self.folder, entry))

    def get(self, entry: Entry) -> Result | None:
        """The cached review and cards of *entry* (with *entry* itself in them), or ``None``."""
        if self.folder is None:
            return None
        data = read_entry_file(self.folder, entry)
        result = None if data is None else decode(data, entry)
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
        return result

    def put(self, entry: Entry, data: bytes) -> None:
        """Store *data* (:func:`encode` of the entry's result); a failure to write only costs a later build time."""
        if self.folder is not None:
            put_entry_file(self.folder, entry, data)


def entry_file(folder: Path, entry: Entry) -> str:
    """The file of *entry* in the per-entry cache folder *folder*: ``xx/<key>``."""
    # A str, not a Path: made twice per entry per build, where pathlib's parsing was a tenth of reading the caches.
    key = entry.content_key
    return os.path.join(folder, key[:2], key)


def read_entry_file(folder: Path, entry: Entry) -> bytes | None:
    """The bytes of *entry*'s file in *folder*, or None when there is none (or it cannot be read)."""
    try:
        with open(entry_file(folder, entry), "rb") as file:
            return file.read()
    except OSError:
        return None


def put_entry_file(folder: Path, entry: Entry, data: bytes) -> None:
    """Write *entry*'s file in *folder* (its ``xx/`` folder made private if new); a failure costs only time later."""
    path = entry_file(folder, entry)
    try:
        os.mkdir(os.path.dirname(path), mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return
    write_cache_file(path, data)


def entry_files_folder(kind: str, version: str | None) -> Path | None:
    """``<cache dir>/<kind>/<version>``, made private if new; None when there is no version or it is unsafe.

    Folders of other versions of *kind* unused for a day are removed.
    """
    if version is None:
        return None
    base = private_cache_dir()
    if base is None:
        return None
    results = base / kind
    try:
        results.mkdir(exist_ok=True, mode=0o700)
        info = results.stat()
        if info.st_mode & 0o077 or (hasattr(os, "geteuid") and info.st_uid != os.geteuid()):
            return None
        folder = results / version
        fresh = not folder.exists()
        folder.mkdir(exist_ok=True, mode=0o700)
        os.utime(folder)  # marks the version as in use (see _remove_stale)
    except OSError:
        return None
    if fresh:
        _remove_stale(results, keep=version)
    return folder


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, entry: Entry) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._entry = entry

    def persistent_id(self, obj: object) -> str | None:
        return _ENTRY if obj is self._entry else None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, entry: Entry) -> None:
        super().__init__(file)
        self._entry = entry

    def persistent_load(self, pid: object) -> Entry:
        if pid != _ENTRY:
            raise pickle.UnpicklingError(f"unknown reference {pid!r}")
        return self._entry


def encode(entry: Entry, result: Result) -> bytes:
    """*result* as cache file bytes, without *entry* (which :func:`decode` is given back)."""
    buffer = io.BytesIO()
    _Pickler(buffer, entry).dump(result)
    return encode_payload(buffer.getvalue())


def encode_payload(payload: bytes) -> bytes:
    """A cache file's bytes: the format line, the payload's digest, the payload."""
    return FORMAT + hashlib.sha256(payload).digest() + payload



def decode(data: bytes, entry: Entry) -> Result | None:
    """The result in *data* (from :func:`encode`) with *entry* put back; ``None`` for anything not intact."""
    payload = intact_payload(data)
    if payload is None:
        return None
    try:
        review, cards = _Unpickler(io.BytesIO(payload), entry).load()
    except Exception:  # a payload from another deckgen build whose classes changed shape: a miss
        return None
    if not isinstance(review, Review) or review.entry is not entry or not isinstance(cards, tuple) \
            or not all(isinstance(c, Card) for c in cards):
        return None
    return review, cards


def intact_payload(data: bytes) -> bytes | None:
    """The payload of cache file bytes (from :func:`encode_payload`), or None when it is not intact."""
    head = len(FORMAT)
    digest, payload = data[head:head + 32], data[head + 32:]
    if not data.startswith(FORMAT) or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def _remove_stale(results: Path, keep: str) -> None:
    """Drop the folders of other extractor versions that no build has used for a day."""
    cutoff = time.time() - _STALE_SECONDS
    try:
        folders = [p for p in results.iterdir() if p.name != keep and p.is_dir() and not p.is_symlink()]
    except OSError:
        return
    for folder in folders:
        try:
            if folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue
