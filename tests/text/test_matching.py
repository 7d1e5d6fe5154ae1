"""Keyword matching: the substring pre-filter never changes a count."""

from __future__ import annotations

import fnmatch
import re
import sys
import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st

from deckgen.text.matching import (
    KeywordIndex,
    Keywords,
    fold,
    identifier_matches,
    keyword_pattern,
    nfkc,
)

WORDS = ["KV cache", "DCP", "前缀缓存", "CUDA 图", "tp-only", "İstanbul", "ıi", "MoE", "lru_cache", "Σ"]
PIECES = st.sampled_from(["kv", "KV", " ", "-", "_", "cache", "CACHE", "dcp", "前缀", "缓存", "cuda", "图", "tp", "only",
                          "ı", "i", "İ", "stanbul", "moe", "lru", "σ", "ς", "x", "。", "DPO", "\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=25), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True))
def test_prefilter_gives_the_counts_the_patterns_give(pieces: list[str], words: list[str]) -> None:
    keywords = Keywords(tuple(words))
    patterns = [keyword_pattern(w) for w in words]  # every keyword's, with no pre-filter
    text = fold("".join(pieces))
    expected_hits = sum(len(p.findall(text)) for p in patterns)
    expected_found = tuple(w for w, p in zip(keywords.words, patterns) if p.search(text))
    assert keywords.hits(text) == expected_hits
    assert keywords.found(text) == expected_found
    raw = unicodedata.normalize("NFKC", "".join(pieces))
    expected_blank = raw
    for pattern in patterns:
        expected_blank = pattern.sub(" ", expected_blank)
    assert keywords.blank(raw) == expected_blank


def test_prefilter_keeps_the_dotless_i_equivalence() -> None:
    # IGNORECASE lets "i" match "ı": a plain substring test would miss these.
    assert Keywords(("mixin",)).hits(fold("mıxın")) == 1
    assert Keywords(("mıxın",)).hits(fold("mixin")) == 1
    assert Keywords(("mixin",)).blank("a MIXIN b mıxın") == "a   b  "


GLOB = st.lists(st.sampled_from(["*", "?", "dcp", "DCP", "_", "tests/", "[ab]", "a", "b", ".py"]), min_size=1, max_size=5)
NAME = st.lists(st.sampled_from(["dcp", "Dcp", "_", "tests/", "a", "b", "x", ".py", "ı"]), max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(GLOB.map("".join), max_size=4), st.lists(NAME.map("".join), max_size=4))
@example(["*[ab]*"], ["xa"])  # wildcards inside the *…* a substring test is used for
@example(["*a?*", "*"], [""])
@example(["*DCP*", "tests/*"], ["x_dcp_y"])
@example(["*a\nb*"], ["xa", "by"])  # the names are tested joined by line breaks
@example(["*"], [])
def test_identifier_patterns_match_as_fnmatch_does(patterns: list[str], identifiers: list[str]) -> None:
    expected = any(fnmatch.fnmatchcase(fold(i), fold(p)) for p in patterns for i in identifiers)
    assert identifier_matches(tuple(patterns), tuple(identifiers)) == expected


INDEXED = st.sampled_from([*WORDS, "kv", "kvc", "cache", "c", "ca", "che", "a b", "", " ", "c++", "a.b", "(x)", "缓存",
                           "前缀", "i", "moe dcp", "dcp moe"])


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(st.lists(INDEXED, max_size=4, unique=True), max_size=5), st.lists(PIECES, max_size=25),
       st.lists(PIECES, max_size=10))
# Parts inside a longer part that starts at the same place, or overlapping it.
@example([["前缀缓存"], ["前缀"], ["缓存"]], ["前缀", "缓存"], [])
@example([["kvcache"], ["KV cache"]], ["kv", "cache"], [])
@example([["cac", "ache"]], ["cache"], [])
def test_an_index_counts_what_each_of_its_sets_counts(sets: list[list[str]], pieces: list[str], more: list[str]) -> None:
    keywords = [Keywords(tuple(words)) for words in sets]
    index = KeywordIndex(keywords)
    text, summary = fold("".join(pieces)), fold("".join(more)).replace("\n", " ")
    both = f"{summary}\n{text}"
    for folded, parts in ((text, None), (text, index.parts_in(text)),
                          (both, index.parts_in(summary) | index.parts_in(text))):
        counts = index.hits(folded, parts)
        assert [counts.get(i, 0) for i in range(len(keywords))] == [k.hits(folded) for k in keywords]
    among = set(range(0, len(keywords), 2))
    assert all(i in among for i in index.hits(text, among=among))


# Characters that NFKC composes with their neighbours: e + ◌́, Hangul jamo, half-width kana and its voicing mark.
_JOINING = st.sampled_from(["e", "\u0301", "\u0327", "\u1100", "\u1161", "\u11a8", "\uff76", "\uff9e", "\u2460", "ﬁ",
                            "İ", "ß", "\n", "Σ"])


@settings(max_examples=500, deadline=None, derandomize=True)
@given(*[st.one_of(st.text(max_size=20), st.lists(_JOINING, max_size=6).map("".join))] * 2)
def test_normalising_never_carries_across_a_line_break(head: str, tail: str) -> None:
    # What lets the glossary reuse the halves the topic match folded (and unknown_in the halves of an entry).
    assert nfkc(f"{head}\n{tail}") == f"{nfkc(head)}\n{nfkc(tail)}"
    assert fold(f"{head}\n{tail}") == f"{fold(head)}\n{fold(tail)}"


def _pattern_edges_outside(keyword: str) -> re.Pattern[str]:
    """keyword_pattern as first written (the reference): the leading edge checked before the keyword."""
    folded = fold(keyword).strip()
    body = r"[\s\-_]*".join(re.escape(part) for part in re.split(r"\s+", folded))
    if re.match("[0-9a-z_]", folded):
        body = "(?<![0-9a-z_])" + body
    if re.match("[0-9a-z_]", folded[-1:]):
        body += "(?![0-9a-z_])"
    return re.compile(body, re.IGNORECASE)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.sampled_from([*WORDS, "a", "kv", "c++", "x.y", "_x", "1", "i"]), st.lists(PIECES, max_size=20).map("".join))
def test_keyword_patterns_find_what_the_reference_finds(keyword: str, raw: str) -> None:
    ours, reference = keyword_pattern(keyword), _pattern_edges_outside(keyword)
    for text in (fold(raw), unicodedata.normalize("NFKC", raw)):
        assert [m.span() for m in ours.finditer(text)] == [m.span() for m in reference.finditer(text)]


def test_in_folded_text_ignorecase_equates_only_i_and_dotless_i() -> None:
    # What lets KeywordIndex count with case-sensitive patterns.  Folded text holds only characters that
    # case folding leaves as they are (it is idempotent); of those, IGNORECASE can only equate cased ones.
    import _sre

    cased = "".join(c for c in map(chr, range(sys.maxunicode + 1))
                    if _sre.unicode_iscased(ord(c)) and c.casefold() == c and not "\ud800" <= c <= "\udfff")
    equal = {c: found for c in cased if (found := re.findall(re.escape(c), cased, re.IGNORECASE)) != [c]}
    assert equal == {"i": ["i", "ı"], "ı": ["i", "ı"]}
    assert set(re.findall("[0-9a-z_]", cased, re.IGNORECASE)) == set("abcdefghijklmnopqrstuvwxyzı")
