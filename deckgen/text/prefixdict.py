"""jieba's prefix dictionary, kept in the cache folder in a form that loads four times faster than jieba's own cache.

jieba segments with a dict of every word of its dictionary and every prefix of
one (500,000 keys) to its frequency, which it keeps as one marshalled dict:
loading that took 0.55-0.6 s, all of a worker's set-up and most of a cold build
of a few seed files.  Kept here as the keys joined by newlines (no word holds
whitespace), the frequencies as an array of 64-bit integers and the total, it
loads in 0.15 s: one string split, one array read and one dict made in C.  The
dict is jieba's own (a test holds them equal); jieba's cache file is not used,
and the one deckgen kept before is removed when this form is first kept.

Named after the dictionary's path, size and modification time, checked by a
SHA-256 digest of its payload (a damaged file is made again, never loaded) and
written atomically, as :mod:`.postags` keeps its table.
"""

from __future__ import annotations

import marshal
from array import array
from contextlib import suppress
from pathlib import Path
from typing import Any

from ..files.atomic import write_cache_file
from ..files.cachedir import kept_file, sealed, unsealed

_MAGIC = b"deckgen-prefixdict 1\n"
_JIEBAS_OWN = "jieba.cache"
_FREQUENCY = "q"

PrefixDict = tuple[dict[str, int], int]
"""jieba's ``Tokenizer.FREQ`` and ``Tokenizer.total``."""


def to_bytes(freq: dict[str, int], total: int) -> bytes | None:
    """*freq* and *total* as a kept file's bytes; None if a key holds a newline (no jieba word does)."""
    keys = "\n".join(freq)
    if keys.count("\n") != len(freq) - 1:
        return None
    return sealed(_MAGIC, marshal.dumps((keys, array(_FREQUENCY, freq.values()).tobytes(), total)))


def from_bytes(data: bytes) -> PrefixDict | None:
    """What :func:`to_bytes` kept, or None for anything not intact."""
    payload = unsealed(_MAGIC, data)
    if payload is None:
        return None
    try:
        keys, raw, total = marshal.loads(payload)
        frequencies = array(_FREQUENCY)
        frequencies.frombytes(raw)
    except (ValueError, EOFError, TypeError):
        return None
    words = keys.split("\n") if isinstance(keys, str) and keys else []
    if len(words) != len(frequencies) or not isinstance(total, int):
        return None
    return dict(zip(words, frequencies)), total


def load_prefix_dict(tokenizer: Any, folder: Path | None) -> PrefixDict:
    """The prefix dictionary of *tokenizer*'s dictionary, kept in *folder* (a private one; ``None``: no file)."""
    cached = None if folder is None else kept_file(dictionary_path(tokenizer), folder, "deckgen-prefixdict")
    if cached is not None:
        try:
            kept = from_bytes(cached.read_bytes())
        except OSError:
            kept = None
        if kept is not None:
            return kept
    freq, total = tokenizer.gen_pfdict(tokenizer.get_dict_file())
    data = to_bytes(freq, total) if cached is not None else None
    if cached is not None and data is not None and write_cache_file(cached, data):
        # What deckgen kept before, jieba's own cache of the same dictionary: 9 MB no longer read.
        with suppress(OSError):
            (cached.parent / _JIEBAS_OWN).unlink(missing_ok=True)
    return freq, total


def dictionary_path(tokenizer: Any) -> Path:
    """The dictionary file a ``jieba.Tokenizer`` reads."""
    import jieba

    if tokenizer.dictionary == jieba.DEFAULT_DICT:
        return Path(jieba.__file__).resolve().parent / jieba.DEFAULT_DICT_NAME
    return Path(tokenizer.dictionary)
