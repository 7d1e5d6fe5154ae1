"""jieba's part-of-speech tags by word, read once from its dictionary and kept in the cache folder.

Parsing jieba's 350,000-line ``dict.txt`` for its tags takes about 0.8 s, as
long as jieba's own start-up, and even a dict of the pairs built from a faster
format costs 0.3 s (hashing 350,000 new strings).  So the table is kept as the
sorted words (one string, split on load: 0.05 s) with a tag number per word,
and looked up by binary search (``bisect``, in C).

The file sits beside jieba's own cache (the private folder
:mod:`deckgen.segment` chooses), is named after the dictionary's path, size and
modification time, starts with a SHA-256 digest of its payload (a damaged file
is made again, never loaded) and is written atomically.
"""

from __future__ import annotations

import hashlib
import marshal
from bisect import bisect_left
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .atomic import write_cache_file

_MAGIC = b"deckgen-postags 2\n"


class TagTable:
    """word → part-of-speech tag, as sorted words and a tag number for each."""

    def __init__(self, names: tuple[str, ...], words: list[str], tags: bytes) -> None:
        self._names = names
        self._words = words
        self._tags = tags

    @classmethod
    def from_pairs(cls, pairs: dict[str, str]) -> TagTable:
        names = tuple(sorted(set(pairs.values())))
        if len(names) > 255:
            raise ValueError("more than 255 distinct tags")
        number = {name: i for i, name in enumerate(names)}
        words = sorted(pairs)
        return cls(names, words, bytes(number[pairs[w]] for w in words))

    def get(self, word: str) -> str:
        """The tag of *word*, '' when the dictionary does not have it."""
        i = bisect_left(self._words, word)
        return self._names[self._tags[i]] if i < len(self._words) and self._words[i] == word else ""

    def to_bytes(self) -> bytes:
        payload = marshal.dumps((self._names, "\n".join(self._words), self._tags))
        return _MAGIC + hashlib.sha256(payload).digest() + payload

    @classmethod
    def from_bytes(cls, data: bytes) -> TagTable | None:
        start = len(_MAGIC) + 32
        if not data.startswith(_MAGIC) or hashlib.sha256(data[start:]).digest() != data[len(_MAGIC):start]:
            return None
        try:
            names, blob, tags = marshal.loads(data[start:])
            words = blob.split("\n")
            if len(words) != len(tags) or any(t >= len(names) for t in set(tags)):
                return None
            return cls(tuple(names), words, bytes(tags))
        except (ValueError, EOFError, TypeError, AttributeError):
            return None


def dictionary_path(tokenizer: Any) -> Path:
    """The dictionary file a ``jieba.Tokenizer`` reads."""
    import jieba

    if tokenizer.dictionary == jieba.DEFAULT_DICT:
        return Path(jieba.__file__).resolve().parent / jieba.DEFAULT_DICT_NAME
    return Path(tokenizer.dictionary)


def parse_tags(lines: Iterable[bytes]) -> dict[str, str]:
    """word → tag from the lines of a jieba dictionary: ``word frequency tag``."""
    tags: dict[str, str] = {}
    for raw in lines:
        parts = raw.decode("utf-8").split()
        if len(parts) == 3:
            tags[parts[0]] = parts[2]
    return tags


def load_tags(tokenizer: Any, folder: Path | None) -> TagTable:
    """The tags of *tokenizer*'s dictionary, kept in *folder* (a private one: marshal; ``None``: no file)."""
    source = dictionary_path(tokenizer)
    if folder is None:
        with tokenizer.get_dict_file() as f:
            return TagTable.from_pairs(parse_tags(f))
    try:
        info = source.stat()
        key = hashlib.sha256(f"{source}\0{info.st_size}\0{info.st_mtime_ns}".encode()).hexdigest()[:16]
        cached: Path | None = folder / f"deckgen-postags.{key}.marshal"
    except OSError:
        cached = None
    if cached is not None:
        try:
            table = TagTable.from_bytes(cached.read_bytes())
        except OSError:
            table = None
        if table is not None:
            return table
    with tokenizer.get_dict_file() as f:
        table = TagTable.from_pairs(parse_tags(f))
    if cached is not None:
        write_cache_file(cached, table.to_bytes())
    return table
