"""deckgen's per-user cache folder, and when to do without one.

jieba's prefix dictionary and part-of-speech table are kept there as ``marshal``
files (:mod:`deckgen.text.prefixdict`, :mod:`deckgen.text.postags`), which deckgen loads
from there, as jieba loads its own cache, which deckgen no longer uses
(``shared/docs/jieba.md`` §5).  So the cache folder
must be one only this user can write: never a shared temporary folder, where
another user could plant the file, and never a folder deckgen had to guess
into existence (an unset or relative ``HOME``).  When no such folder is at hand
deckgen builds without a cache: start-up is about 15% slower, the deck is the
same, and nothing is written outside the output folder.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def cache_dir() -> Path | None:
    """Where the cache belongs: ``$DECKGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/deckgen``, else ``~/.cache/deckgen``.

    ``None`` when there is no home folder to put it in.  A relative
    ``XDG_CACHE_HOME`` or ``HOME`` is ignored, as the XDG spec says: it would
    put the cache in whatever folder deckgen happens to run in.
    """
    configured = os.environ.get("DECKGEN_CACHE_DIR")
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "deckgen"
    try:
        home = Path.home()
    except (KeyError, RuntimeError):  # no HOME and no password-database entry
        return None
    if not home.is_absolute() or not home.is_dir():
        return None  # never create a missing home folder (HOME=/nonexistent for system users)
    return home / ".cache" / "deckgen"


def private_cache_dir() -> Path | None:
    """:func:`cache_dir`, created if missing, if it is a folder no other user can write; else ``None``.

    A read-only folder is fine (a cache found there is used, none is written);
    a folder writable by group or others, or owned by another user, is not.
    """
    wanted = cache_dir()
    if wanted is None:
        return None
    try:
        wanted.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = wanted.stat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return None
    return wanted


def sealed(magic: bytes, payload: bytes) -> bytes:
    """A cache file's bytes: the format line *magic*, the payload's SHA-256 digest, the payload."""
    return magic + hashlib.sha256(payload).digest() + payload


def unsealed(magic: bytes, data: bytes) -> bytes | None:
    """The payload of :func:`sealed` bytes of format *magic*, or None when they are not intact (a damaged file is
    made again, never loaded)."""
    start = len(magic) + 32
    payload = data[start:]
    if not data.startswith(magic) or hashlib.sha256(payload).digest() != data[len(magic):start]:
        return None
    return payload


def kept_file(source: Path, folder: Path, stem: str) -> Path | None:
    """Where *folder* keeps what was made of the file *source* as it is now (its path, size and modification time name
    the file); None when *source* cannot be looked at."""
    try:
        info = source.stat()
    except OSError:
        return None
    key = hashlib.sha256(f"{source}\0{info.st_size}\0{info.st_mtime_ns}".encode()).hexdigest()[:16]
    return folder / f"{stem}.{key}.marshal"
