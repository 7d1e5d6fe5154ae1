"""The results cache: each entry's review and cards, so an unchanged entry is never segmented again.

Stored by :mod:`deckgen.cache.entrystore` in ``<cache dir>/results/<extractor version>.sqlite``
(the cache dir is :func:`deckgen.files.cachedir.private_cache_dir`: ``$DECKGEN_CACHE_DIR``,
else ``$XDG_CACHE_HOME/deckgen``, else ``~/.cache/deckgen``, and only if it is private).

* **Key**: a hash of everything the extract and card stages see of the entry
  (repository, summary, review, file and line numbers: cards carry the lines).
* **Extractor version**: a hash of the source of the extraction-stage modules
  and every deckgen module they import, plus jieba's and Python's versions.  Any
  edit to that code starts a new, empty store by itself; nobody has to
  remember to bump a constant.  Stores of other versions unused for a day are
  removed.
* **Format**: a magic line, a SHA-256 digest of the payload, then the payload, a
  pickle of ``(review, cards)`` whose :class:`~deckgen.types.Entry` is left out
  (the entry being built is put back in when loading).  The digest is checked
  before anything is unpickled, so truncated, zeroed or edited bytes are a miss,
  never a crash and never code run; any error reading or loading is a miss too.
* **Privacy**: pickle must only ever read what this user wrote.  The cache dir
  must belong to the user and not be writable by anyone else, and the results
  folder must be ``0700`` (it is created so); otherwise the cache is off for this run.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import pickle
import re
import stat
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from ..files.atomic import write_cache_file
from ..files.datadir import PACKAGE, data_dir
from ..files.cachedir import private_cache_dir, sealed, unsealed
from ..types import Card, Entry, Review
from .entrystore import EntryStore

if TYPE_CHECKING:  # a type only: reading the cache loads no card-making code (see deckgen.cache.results.make_result)
    from ..cards.cards import Result

FORMAT = b"deckgen-results 2\n"
EXTRACTION_MODULES = ("cards.cards",)
"""Where the code whose output is cached starts (:func:`deckgen.cards.cards.make_result`); the modules it imports
count too (found by reading the source)."""
_IMPORT_RE = re.compile(r"^\s*from (\.+)([\w.]*) import ([\w, ()]+)", re.MULTILINE)


Signature = tuple[int, int, int]
"""A file's size, modification time (ns) and inode: what says it is as it was (as Python reuses bytecode by a source
file's size and time)."""
_read: dict[str, tuple[Signature, bytes, tuple[str, ...]]] = {}
"""Each module file read in this process, by path: its signature when read, its source and the names it imports.
Every build works out three versions whose modules are much the same; a file changed since (a test edits one) is
read again."""
VERSIONS_FILE = "code-versions.json"
"""In the cache folder: each version a build worked out, with the signature of every file it read.  A build whose
files all look the same takes the version from there: working the three out, reading and parsing some 45 files, took
10-16 ms of a 0.2 s rebuild with nothing new; looking at them takes a stat each."""
_KEPT_VERSIONS = 16
"""Versions noted at most (a checkout's three, a few more for other checkouts; a test's copies come and go)."""


def _signature(path: str) -> Signature | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def _module_source(package: Path, name: str) -> tuple[str, Signature, bytes, tuple[str, ...]] | None:
    """The file of module *name* (dotted, inside *package*: a ``.py`` file, or a package's ``__init__.py``), its
    signature, its source and the dotted names of what it imports from the package (modules or not); None if it is no
    module of the package."""
    parts = name.split(".")
    for path, here in ((os.path.join(package, *parts) + ".py", parts[:-1]),
                       (os.path.join(package, *parts, "__init__.py"), parts)):
        signature = _signature(path)  # before reading: a file changed while it is read is read again next time
        if signature is None:
            continue
        known = _read.get(path)
        if known is None or known[0] != signature:
            source = Path(path).read_bytes()
            imported: list[str] = []
            for dots, module, names in _IMPORT_RE.findall(source.decode("utf-8")):
                base = here[:len(here) - len(dots) + 1]
                target = [*base, *module.split(".")] if module else base
                # ``from .x import y`` names module x, and y may be a module of package x too.
                imported.extend(".".join([*target, n.split(" as ")[0].strip(" ()")]) for n in names.split(","))
                if module:
                    imported.append(".".join(target))
            known = _read[path] = (signature, source, tuple(imported))
        return path, *known
    return None


def _module_closure(package: Path, roots: Sequence[str]) -> tuple[dict[str, bytes], dict[str, Signature]]:
    """Source bytes of the *roots* modules of *package* (dotted names inside it) and every module of it they import,
    and the signature of each of their files."""
    sources: dict[str, bytes] = {}
    files: dict[str, Signature] = {}
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        found = _module_source(package, name)
        if found is not None:
            path, files[path], sources[name], imported = found
            todo.extend(imported)
    return sources, files


@lru_cache(maxsize=1)
def extractor_version() -> str | None:
    """A digest that changes whenever the code (or jieba, or Python) behind a cached result may have changed.

    ``None`` when the sources cannot be read (then nothing is cached).
    """
    return source_version(PACKAGE)


def source_version(package: Path, roots: Sequence[str] = EXTRACTION_MODULES) -> str | None:
    """:func:`extractor_version` of the deckgen package in folder *package* (or of its *roots* modules).

    Taken from :data:`VERSIONS_FILE` when every file it was worked out from has the signature it had then.
    """
    try:
        folder = data_dir("rules")
        rules = sorted(p for p in folder.iterdir() if p.suffix in (".toml", ".json"))  # cue lists, templates, model
        spec = importlib.util.find_spec("jieba")  # weights: code too.  jieba is found, not imported (0.4 s)
    except (OSError, ImportError, ValueError):
        return None
    jieba = spec.origin if spec and spec.origin else ""
    key = "\0".join([sys.version, str(package), str(folder), jieba, *roots])
    noted = _noted_version(key, [p.name for p in rules])
    if noted is not None:
        return noted
    try:
        sources, files = _module_closure(package, roots)
        data: dict[str, bytes] = {}
        for path in [*map(str, rules), *([jieba] if jieba else [])]:
            signature = _signature(path)
            if signature is None:
                return None
            files[path], data[path] = signature, Path(path).read_bytes()
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    digest = hashlib.sha256(FORMAT)
    digest.update(f"{sys.version_info[:2]} {unicodedata.unidata_version} {pickle.HIGHEST_PROTOCOL}".encode())
    digest.update(hashlib.sha256(data.get(jieba, b"")).digest())
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + hashlib.sha256(sources[name]).digest())
    for path in rules:
        digest.update(b"rules/" + path.name.encode() + b"\0" + hashlib.sha256(data[str(path)]).digest())
    version = digest.hexdigest()[:20]
    _note_version(key, {"version": version, "rules": [p.name for p in rules], "files": files})
    return version


@lru_cache(maxsize=1)
def _noted_versions() -> dict[str, dict[str, Any]]:
    """:data:`VERSIONS_FILE` as it was when this process first looked (empty when there is none, or no cache folder)."""
    folder = private_cache_dir()
    try:
        noted = json.loads((folder / VERSIONS_FILE).read_bytes()) if folder is not None else {}
    except (OSError, ValueError):
        return {}
    return noted if isinstance(noted, dict) else {}


def _noted_version(key: str, rules: list[str]) -> str | None:
    """The version noted under *key*, if the rules folder holds the same files and every file read has its signature."""
    noted = _noted_versions().get(key)
    try:
        if noted["rules"] == rules and all(_signature(path) == tuple(sig) for path, sig in noted["files"].items()):
            return str(noted["version"])
    except (KeyError, TypeError, ValueError, AttributeError):  # none noted, or a note of another shape
        pass
    return None


def _note_version(key: str, entry: dict[str, Any]) -> None:
    noted = _noted_versions()
    noted.pop(key, None)
    noted[key] = entry  # the newest last; the oldest go first
    for old in list(noted)[:-_KEPT_VERSIONS]:
        del noted[old]
    folder = private_cache_dir()
    if folder is not None:
        write_cache_file(folder / VERSIONS_FILE, json.dumps(noted).encode())


class ResultCache:
    """Reviews and cards by entry; a disabled cache misses every time and stores nothing."""

    def __init__(self, store: EntryStore) -> None:
        self.store = store

    @property
    def enabled(self) -> bool:
        return self.store.enabled

    @classmethod
    def open(cls, enabled: bool = True) -> ResultCache:
        """The cache in this user's cache folder, or a disabled one when that is off, unsafe or unusable."""
        return cls(EntryStore.open("results", extractor_version() if enabled else None))

    def missing(self, entries: Sequence[Entry], among: Iterable[int]) -> list[int]:
        """The indexes *among* those of *entries* not in the cache (those in it :meth:`get_many` may still find damaged)."""
        among = list(among)
        return [among[i] for i in self.store.missing([entries[i].content_key for i in among])]

    def get_many(self, entries: Sequence[Entry]) -> Iterator[Result | None]:
        """The cached review and cards of each of *entries* (with the entry itself in them), or ``None``."""
        for data, entry in zip(self.store.get_many([e.content_key for e in entries]), entries):
            yield None if data is None else decode(data, entry)

    def put(self, entry: Entry, data: bytes) -> None:
        """Store *data* (:func:`encode` of the entry's result); a failure to write only costs a later build time."""
        self.store.put(entry.content_key, data)

    def close(self) -> None:
        """Write what is pending; the cache misses from now on."""
        self.store.close()


def _the_entry(place: int) -> Entry:
    """What a payload names in place of an entry: :class:`_Unpickler` gives back the entry at *place* of those it was handed."""
    raise pickle.UnpicklingError("an entry left out of a cached payload, loaded without it")


class _Pickler(pickle.Pickler):
    """Pickles each of *entries* as a call of :func:`_the_entry` with its place, everything else as usual.

    A reduction for one class in a dispatch table, not ``persistent_id``: the C
    pickler calls ``persistent_id`` back for every object it saves, strings and
    ints included, and that was a third of the cost of encoding (a notes row:
    0.155 ms, 0.095 ms this way); it looks in the dispatch table only for objects of
    classes it does not pickle itself.
    """

    def __init__(self, file: io.BytesIO, entries: Sequence[Entry]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        places = {id(entry): place for place, entry in enumerate(entries)}

        def reduce_entry(obj: Entry) -> Any:
            place = places.get(id(obj))
            return (_the_entry, (place,)) if place is not None else obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL)

        self.dispatch_table = {Entry: reduce_entry}


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, entries: Sequence[Entry]) -> None:
        super().__init__(file)
        self._entries = entries

    def find_class(self, module: str, name: str) -> object:
        if module == __name__ and name == _the_entry.__name__:
            # Not a method of self: the unpickler's memo keeps what this returns, and builds pause the cycle collector.
            return self._entries.__getitem__
        return super().find_class(module, name)


def encode(entry: Entry, result: Result) -> bytes:
    """*result* as cache file bytes, without *entry* (which :func:`decode` is given back)."""
    return encode_without(entry, result)


def decode(data: bytes, entry: Entry) -> Result | None:
    """The result in *data* (from :func:`encode`) with *entry* put back; ``None`` for anything not intact."""
    loaded = decode_tuple(data, entry, 2)
    if loaded is None:
        return None
    review, cards = loaded
    if not isinstance(review, Review) or review.entry is not entry or not is_cards(cards):
        return None
    return review, cards


def encode_without(entry: Entry, value: tuple[object, ...]) -> bytes:
    """Cache file bytes of *value*, in which *entry* is only a reference (:func:`decode_tuple` puts one back)."""
    return encode_with((entry,), value)


def decode_tuple(data: bytes, entry: Entry, size: int) -> tuple[object, ...] | None:
    """The tuple of *size* values in *data* (from :func:`encode_without`) with *entry* put back; None if not intact."""
    loaded = decode_with(data, (entry,))
    return loaded if isinstance(loaded, tuple) and len(loaded) == size else None


def encode_with(entries: Sequence[Entry], value: object) -> bytes:
    """Cache file bytes of *value*, in which each of *entries* is only a reference to its place among them."""
    buffer = io.BytesIO()
    _Pickler(buffer, entries).dump(value)
    return encode_payload(buffer.getvalue())


def decode_with(data: bytes, entries: Sequence[Entry]) -> object:
    """The value in *data* (from :func:`encode_with`) with *entries* put back in their places; None if not intact."""
    payload = intact_payload(data)
    if payload is None:
        return None
    try:
        return _Unpickler(io.BytesIO(payload), entries).load()
    except Exception:  # a payload from another deckgen build whose classes changed shape: a miss
        return None


def encode_payload(payload: bytes) -> bytes:
    """A cache file's bytes: the format line, the payload's digest, the payload."""
    return sealed(FORMAT, payload)


def is_cards(value: object) -> TypeGuard[tuple[Card, ...]]:
    """Whether *value* is a tuple of cards (what a cached payload must hold where cards belong)."""
    return isinstance(value, tuple) and all(isinstance(c, Card) for c in value)


def intact_payload(data: bytes) -> bytes | None:
    """The payload of cache file bytes (from :func:`encode_payload`), or None when it is not intact."""
    return unsealed(FORMAT, data)
