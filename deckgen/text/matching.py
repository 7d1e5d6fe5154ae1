"""Keyword and identifier matching shared by the topic taxonomy and the glossary.  Pure.

Keywords are written by people in either language, so matching is forgiving
where it is safe and strict where it matters:

* text and keywords are compared in NFKC, case-folded form (全角 ＤＣＰ = DCP);
* a space in a keyword matches any run of spaces, hyphens or underscores, or
  none ("KV cache" matches "KV-cache" and "kvcache");
* an ASCII keyword edge must not touch another ASCII letter, digit or ``_``,
  so "DP" matches "DP 多引擎" and "TP-only" but not "DPO" or ``data_dp``;
  Chinese keywords match as substrings (Chinese has no word boundaries).
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from collections.abc import Container, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

_WORD = r"[0-9a-z_]"
_SPACE_RE = re.compile(r"\s+")
_DOTLESS_I = "\u0131"


@lru_cache(maxsize=4096)  # an entry's title and review are matched against the taxonomy, then the glossary
def nfkc(text: str) -> str:
    """*text* in NFKC (full-width forms, ligatures and the like as their plain characters)."""
    return unicodedata.normalize("NFKC", text)


@lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """The comparison form of *text*: NFKC and case-folded."""
    return nfkc(text).casefold()


def keyword_pattern(keyword: str) -> re.Pattern[str]:
    """A regex finding *keyword* in folded text under the rules above."""
    # IGNORECASE as well, so the pattern also finds the keyword in text that is only NFKC-normalised.
    return re.compile(_keyword_regex(keyword), re.IGNORECASE)


def _keyword_regex(keyword: str) -> str:
    folded = fold(keyword).strip()
    first, *rest = map(re.escape, _SPACE_RE.split(folded))
    if re.match(_WORD, folded):
        # The edge is checked just after the first part, not before it: a pattern that starts with a literal
        # is looked for at C speed, one with a lookbehind is tried at every position of the text.
        first += rf"(?<!{_WORD}{first})"
    body = r"[\s\-_]*".join([first, *rest])
    if re.match(_WORD, folded[-1:]):
        body += rf"(?!{_WORD})"
    return body


@dataclass(frozen=True)
class Keywords:
    """A set of keywords, compiled once."""

    words: tuple[str, ...]
    _compiled: list[re.Pattern[str] | None] = field(init=False, repr=False, compare=False)
    _needles: tuple[tuple[str, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Each keyword's pattern is compiled when first searched with: most keywords are in no text a build
        # reads, and compiling the taxonomy's and glossary's 700 took a twentieth of a build of seeds/.
        object.__setattr__(self, "_compiled", [None] * len(self.words))
        object.__setattr__(self, "_needles", tuple(_needles(w) for w in self.words))

    @cached_property
    def _any_part(self) -> re.Pattern[str] | None:
        """One search that says "no part of any keyword is here" (the usual answer) at C speed.

        Compiled on first use too: a rebuild whose entries' topics are all cached searches with few of the sets
        (compiling all of them took 0.015 s of its 0.2 s).
        """
        parts = sorted({p for parts in self._needles for p in parts}, key=lambda p: (-len(p), p))
        usable = parts and all(self._needles) and all(parts)
        return re.compile("|".join(map(re.escape, parts))) if usable else None

    def pattern(self, index: int) -> re.Pattern[str]:
        """:func:`keyword_pattern` of the keyword at *index* (compiled once)."""
        compiled = self._compiled[index]
        if compiled is None:
            compiled = self._compiled[index] = keyword_pattern(self.words[index])
        return compiled

    def _candidates(self, folded_text: str) -> Sequence[re.Pattern[str]]:
        return [self.pattern(k) for k in self._candidate_indexes(folded_text)]

    def _candidate_indexes(self, folded_text: str) -> Sequence[int]:
        """The patterns that can match *folded_text*: every part of the keyword is in it verbatim.

        A plain substring test is much cheaper than a regex search, and most
        keywords are absent from most texts (a corpus of 10,000 PRs asks about
        half a million times).  In folded text the test is exact: the only two
        characters of folded text that IGNORECASE treats as equal are ``i`` and
        the dotless ``ı`` (checked over all of Unicode), so text or a keyword with
        a ``ı`` is not pre-filtered.
        """
        if not self.words:
            return ()
        if _DOTLESS_I in folded_text:
            return range(len(self.words))
        if self._any_part is not None and self._any_part.search(folded_text) is None:
            return ()
        found = []
        for index, parts in enumerate(self._needles):
            for part in parts:
                if part not in folded_text:
                    break
            else:
                found.append(index)
        return found

    def hits(self, folded_text: str) -> int:
        """How many times the keywords occur in *folded_text* (already :func:`fold`-ed)."""
        if not self.words:  # most topics have no summary-only keywords and no exclusions
            return 0
        candidates = self._candidates(folded_text)
        return sum(len(p.findall(folded_text)) for p in candidates) if candidates else 0

    def found(self, folded_text: str) -> tuple[str, ...]:
        """The keywords (as written) that occur in *folded_text*."""
        return tuple(self.words[k] for k in self._candidate_indexes(folded_text) if self.pattern(k).search(folded_text))

    def counts(self, folded_text: str) -> tuple[tuple[str, int], ...]:
        """The keywords (as written) that occur in *folded_text*, each with its number of occurrences."""
        found = ((self.words[k], len(self.pattern(k).findall(folded_text))) for k in self._candidate_indexes(folded_text))
        return tuple((word, n) for word, n in found if n)

    def blank(self, text: str) -> str:
        """*text* (NFKC-normalised, case kept) with every keyword occurrence replaced by a space."""
        # In NFKC text every character IGNORECASE matches to a folded keyword's casefolds to it
        # (checked over all of Unicode), and blanking never makes a part appear: the pre-filter holds.
        for pattern in self._candidates(fold(text)):
            text = pattern.sub(" ", text)
        return text

    def __bool__(self) -> bool:
        return bool(self.words)


class KeywordIndex:
    """Many :class:`Keywords` searched together: one pass over a text, then a regex only where it can match.

    A taxonomy or glossary asks dozens of keyword sets about every entry, and
    almost every answer is "none".  Asking each set is a search per set; this
    finds, in one pass, every literal part of every keyword that occurs in the
    text, and searches with a keyword's pattern only when all its parts occur:
    the candidates :meth:`Keywords._candidates` picks, for all sets at once, so
    the counts are the same.
    """

    def __init__(self, sets: Sequence[Keywords]) -> None:
        self.sets = tuple(sets)
        users: dict[str, list[tuple[int, int]]] = {}  # a part → the (set, keyword) positions that need it
        self._parts_needed: dict[tuple[int, int], int] = {}
        self._always: list[tuple[int, int]] = []  # nothing to look for (a dotless ı): always searched
        for s, keywords in enumerate(self.sets):
            for k, needles in enumerate(keywords._needles):
                parts = set(filter(None, needles))  # "" is in every text
                self._parts_needed[s, k] = len(parts)
                for part in parts:
                    users.setdefault(part, []).append((s, k))
                if not parts:
                    self._always.append((s, k))
        self._users = users
        # In folded text, IGNORECASE equates no two characters but i and ı (checked over all of Unicode, see
        # the tests): without a ı in the text or the keyword, the pattern without IGNORECASE finds the same
        # matches, and finds an ASCII keyword several times faster.
        self._exact: dict[tuple[int, int], re.Pattern[str]] = {}  # compiled when first needed
        # The finder gives the longest part starting at a position; the parts that are prefixes of it start there too.
        self._prefixes = {part: tuple(p for p in users if part.startswith(p)) for part in users}
        self._finder = re.compile(_trie_pattern(users)) if users else None

    def parts_in(self, folded_text: str) -> set[str]:
        """The keyword parts that occur in *folded_text* (at C speed between the positions where one starts)."""
        found: set[str] = set()
        if self._finder is None:
            return found
        search = self._finder.search
        match = search(folded_text)
        while match is not None:
            found.update(self._prefixes[match.group()])
            match = search(folded_text, match.start() + 1)
        return found

    def hits(self, folded_text: str, parts: AbstractSet[str] | None = None,
             among: Container[int] | None = None) -> dict[int, int]:
        """How many times the keywords of each set occur in *folded_text* (already :func:`fold`-ed), by set index.

        Sets with no candidate keyword are left out (their count is 0).  *parts* is
        :meth:`parts_in` of the text when known (for text made of several, the union
        of theirs: no part spans a line break); *among* limits the sets counted.
        """
        if among is not None and not among:  # a taxonomy without exclusions, say
            return {}
        if _DOTLESS_I in folded_text:  # IGNORECASE equates i and ı: every keyword is a candidate
            candidates = [(s, self.sets[s].pattern(k)) for s, k in self._parts_needed]
        else:
            have: dict[tuple[int, int], int] = {}
            for part in self.parts_in(folded_text) if parts is None else parts:
                for position in self._users[part]:
                    have[position] = have.get(position, 0) + 1
            candidates = [(p[0], self._exact_pattern(p)) for p, n in have.items() if n == self._parts_needed[p]]
            candidates += [(p[0], self._exact_pattern(p)) for p in self._always]
        counts: dict[int, int] = {}
        for s, pattern in candidates:
            if among is None or s in among:
                counts[s] = counts.get(s, 0) + len(pattern.findall(folded_text))
        return counts


    def _exact_pattern(self, position: tuple[int, int]) -> re.Pattern[str]:
        pattern = self._exact.get(position)
        if pattern is None:
            s, k = position
            keywords = self.sets[s]
            pattern = self._exact[position] = (keywords.pattern(k) if position in self._always
                                               else re.compile(_keyword_regex(keywords.words[k])))
        return pattern


_Trie = dict[str, "_Trie"]


def _trie_pattern(words: Iterable[str]) -> str:
    """A regex matching any of *words* (non-empty), the longest one where several start at the same place.

    As a trie, so the regex engine decides on the first character which words to try at a position.
    """
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: _Trie) -> str:
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        # Greedy: a longer word is tried before the word that ends here.
        return f"(?:{body})?" if "" in node else body

    return pattern(trie)


def _needles(keyword: str) -> tuple[str, ...]:
    """The literal parts a match of *keyword*'s pattern must contain (none for a keyword with a dotless ı)."""
    folded = fold(keyword).strip()
    return () if _DOTLESS_I in folded else tuple(_SPACE_RE.split(folded))


def identifier_matches(patterns: Iterable[str], identifiers: Iterable[str]) -> bool:
    """Whether any identifier matches any shell-style pattern (``*dcp*``, ``tests/*``), case-insensitively."""
    folded = tuple(map(fold, identifiers))
    return folded_identifier_matches(tuple(patterns), folded, "\n".join(folded))


def folded_identifier_matches(patterns: tuple[str, ...], folded: Sequence[str], joined: str) -> bool:
    """:func:`identifier_matches` for identifiers already :func:`fold`-ed, also given joined by line breaks."""
    if not folded:
        return False
    inside, whole = _any_pattern(patterns)
    # "text" is in one of the names exactly when it is in them joined: it has no line break.
    return any(map(joined.__contains__, inside)) or (whole is not None and any(map(whole.match, folded)))


@lru_cache(maxsize=1024)
def _any_pattern(patterns: tuple[str, ...]) -> tuple[tuple[str, ...], re.Pattern[str] | None]:
    """*patterns* as tests of a name (each a full match, as ``fnmatchcase``): texts it must contain, and one regex.

    A ``*text*`` pattern (the usual kind) matches exactly the names that contain ``text``: a substring
    test, where the regex ``.*text.*`` backtracks over the name.  The others become one regex.
    """
    folded = [fold(p) for p in patterns]
    inside = tuple(p[1:-1] for p in folded if _is_inside(p))
    whole = [f"(?:{fnmatch.translate(p)})" for p in folded if not _is_inside(p)]
    return inside, re.compile("|".join(whole)) if whole else None


def _is_inside(pattern: str) -> bool:
    """Whether *pattern* is ``*text*`` (or ``*``), with no wildcard or line break in the text."""
    return pattern[:1] == pattern[-1:] == "*" and not any(c in "*?[\n" for c in pattern[1:-1])
