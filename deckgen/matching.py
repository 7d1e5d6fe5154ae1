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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

_WORD = r"[0-9a-z_]"
_SPACE_RE = re.compile(r"\s+")
_DOTLESS_I = "\u0131"


@lru_cache(maxsize=4096)  # the glossary folds the same review once per term
def fold(text: str) -> str:
    """The comparison form of *text*: NFKC and case-folded."""
    return unicodedata.normalize("NFKC", text).casefold()


def keyword_pattern(keyword: str) -> re.Pattern[str]:
    """A regex finding *keyword* in folded text under the rules above."""
    folded = fold(keyword).strip()
    body = r"[\s\-_]*".join(re.escape(part) for part in _SPACE_RE.split(folded))
    if re.match(_WORD, folded):
        body = rf"(?<!{_WORD})" + body
    if re.match(_WORD, folded[-1:]):
        body += rf"(?!{_WORD})"
    # IGNORECASE as well, so the pattern also finds the keyword in text that is only NFKC-normalised.
    return re.compile(body, re.IGNORECASE)


@dataclass(frozen=True)
class Keywords:
    """A set of keywords, compiled once."""

    words: tuple[str, ...]
    _patterns: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    _needles: tuple[tuple[str, ...], ...] = field(init=False, repr=False, compare=False)
    _any_part: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_patterns", tuple(keyword_pattern(w) for w in self.words))
        object.__setattr__(self, "_needles", tuple(_needles(w) for w in self.words))
        # One search says "no part of any keyword is here" (the usual answer) at C speed.
        parts = sorted({p for parts in self._needles for p in parts}, key=lambda p: (-len(p), p))
        usable = parts and all(self._needles) and all(parts)
        object.__setattr__(self, "_any_part", re.compile("|".join(map(re.escape, parts))) if usable else None)

    def _candidates(self, folded_text: str) -> Sequence[re.Pattern[str]]:
        """The patterns that can match *folded_text*: every part of the keyword is in it verbatim.

        A plain substring test is much cheaper than a regex search, and most
        keywords are absent from most texts (a corpus of 10,000 PRs asks about
        half a million times).  In folded text the test is exact: the only two
        characters of folded text that IGNORECASE treats as equal are ``i`` and
        the dotless ``ı`` (checked over all of Unicode), so text or a keyword with
        a ``ı`` is not pre-filtered.
        """
        if not self._patterns:
            return ()
        if _DOTLESS_I in folded_text:
            return self._patterns
        if self._any_part is not None and self._any_part.search(folded_text) is None:
            return ()
        found = []
        for pattern, parts in zip(self._patterns, self._needles):
            for part in parts:
                if part not in folded_text:
                    break
            else:
                found.append(pattern)
        return found

    def hits(self, folded_text: str) -> int:
        """How many times the keywords occur in *folded_text* (already :func:`fold`-ed)."""
        if not self._patterns:  # most topics have no summary-only keywords and no exclusions
            return 0
        candidates = self._candidates(folded_text)
        return sum(len(p.findall(folded_text)) for p in candidates) if candidates else 0

    def found(self, folded_text: str) -> tuple[str, ...]:
        """The keywords (as written) that occur in *folded_text*."""
        possible = set(self._candidates(folded_text))
        return tuple(w for w, p in zip(self.words, self._patterns) if p in possible and p.search(folded_text))

    def blank(self, text: str) -> str:
        """*text* (NFKC-normalised, case kept) with every keyword occurrence replaced by a space."""
        # In NFKC text every character IGNORECASE matches to a folded keyword's casefolds to it
        # (checked over all of Unicode), and blanking never makes a part appear: the pre-filter holds.
        for pattern in self._candidates(fold(text)):
            text = pattern.sub(" ", text)
        return text

    def __bool__(self) -> bool:
        return bool(self.words)


def _needles(keyword: str) -> tuple[str, ...]:
    """The literal parts a match of *keyword*'s pattern must contain (none for a keyword with a dotless ı)."""
    folded = fold(keyword).strip()
    return () if _DOTLESS_I in folded else tuple(_SPACE_RE.split(folded))


def identifier_matches(patterns: Iterable[str], identifiers: Iterable[str]) -> bool:
    """Whether any identifier matches any shell-style pattern (``*dcp*``, ``tests/*``), case-insensitively."""
    regex = _any_pattern(tuple(patterns))
    return regex is not None and any(regex.match(fold(ident)) for ident in identifiers)


@lru_cache(maxsize=1024)
def _any_pattern(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for "matches one of *patterns*" (each a full match, as ``fnmatchcase``): one test per identifier."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(fold(p))})" for p in patterns))
