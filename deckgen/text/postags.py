"""jieba's part-of-speech tags by word, read once from its dictionary and kept in the cache folder.

Parsing jieba's 350,000-line ``dict.txt`` for its tags takes about 0.8 s, as
long as jieba's own start-up, and even a dict of the pairs built from a faster
format costs 0.3 s (hashing 350,000 new strings).  A list of the sorted words
cost 0.16 s to load and 39 MB in every process that looks a tag up, a worker
among them.  So the table is kept as the sorted words joined into one string,
where each word starts in it, and a tag number per word, and looked up by
binary search: 4 MB, three objects to load.

The file sits beside the prefix dictionary (:mod:`.prefixdict`; the private folder
:mod:`.segment` chooses), is named after the dictionary's path, size and
modification time, starts with a SHA-256 digest of its payload (a damaged file
is made again, never loaded) and is written atomically.
"""

from __future__ import annotations

import marshal
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from itertools import accumulate
from pathlib import Path
from typing import Any

from ..files.atomic import write_cache_file
from ..files.cachedir import kept_file, sealed, unsealed
from .prefixdict import dictionary_path

_MAGIC = b"deckgen-postags 3\n"
_OFFSET = "I"
"""The type code of the word starts (4 bytes: the words of a dictionary are far fewer than 4 G characters)."""


class TagTable:
    """word → part-of-speech tag: the sorted words in one string, where each starts, and a tag number for each."""

    def __init__(self, names: tuple[str, ...], text: str, starts: array[int], tags: bytes) -> None:
        self._names = names
        self._text = text
        self._starts = starts
        """Where word *i* starts in the text; one more than there are words, the last the text's length."""
        self._tags = tags

    @classmethod
    def from_pairs(cls, pairs: dict[str, str]) -> TagTable:
        names = tuple(sorted(set(pairs.values())))
        if len(names) > 255:
            raise ValueError("more than 255 distinct tags")
        number = {name: i for i, name in enumerate(names)}
        words = sorted(pairs)
        starts = array(_OFFSET, accumulate(map(len, words), initial=0))
        return cls(names, "".join(words), starts, bytes(number[pairs[w]] for w in words))

    def __len__(self) -> int:
        return len(self._tags)

    def _word(self, i: int) -> str:
        return self._text[self._starts[i]:self._starts[i + 1]]

    def get(self, word: str) -> str:
        """The tag of *word*, '' when the dictionary does not have it."""
        i = bisect_left(range(len(self._tags)), word, key=self._word)
        return self._names[self._tags[i]] if i < len(self._tags) and self._word(i) == word else ""

    def to_bytes(self) -> bytes:
        return sealed(_MAGIC, marshal.dumps((self._names, self._text, self._starts.tobytes(), self._tags)))

    @classmethod
    def from_bytes(cls, data: bytes) -> TagTable | None:
        payload = unsealed(_MAGIC, data)
        if payload is None:
            return None
        try:
            names, text, raw_starts, tags = marshal.loads(payload)
            starts = array(_OFFSET)
            starts.frombytes(raw_starts)
            if (not isinstance(text, str) or len(starts) != len(tags) + 1 or starts[0] != 0
                    or starts[-1] != len(text) or (tags and max(tags) >= len(names))):
                return None
            return cls(tuple(names), text, starts, bytes(tags))
        except (ValueError, EOFError, TypeError, AttributeError):
            return None


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
    if folder is None:
        with tokenizer.get_dict_file() as f:
            return TagTable.from_pairs(parse_tags(f))
    cached = kept_file(dictionary_path(tokenizer), folder, "deckgen-postags")
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
