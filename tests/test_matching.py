"""Keyword matching: the substring pre-filter never changes a count."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

import fnmatch

from deckgen.matching import Keywords, fold, identifier_matches

WORDS = ["KV cache", "DCP", "前缀缓存", "CUDA 图", "tp-only", "İstanbul", "ıi", "MoE", "lru_cache", "Σ"]
PIECES = st.sampled_from(["kv", "KV", " ", "-", "_", "cache", "CACHE", "dcp", "前缀", "缓存", "cuda", "图", "tp", "only",
                          "ı", "i", "İ", "stanbul", "moe", "lru", "σ", "ς", "x", "。", "DPO", "\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=25), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True))
def test_prefilter_gives_the_counts_the_patterns_give(pieces: list[str], words: list[str]) -> None:
    keywords = Keywords(tuple(words))
    text = fold("".join(pieces))
    expected_hits = sum(len(p.findall(text)) for p in keywords._patterns)
    expected_found = tuple(w for w, p in zip(keywords.words, keywords._patterns) if p.search(text))
    assert keywords.hits(text) == expected_hits
    assert keywords.found(text) == expected_found
    raw = unicodedata.normalize("NFKC", "".join(pieces))
    expected_blank = raw
    for pattern in keywords._patterns:
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
def test_identifier_patterns_match_as_fnmatch_does(patterns: list[str], identifiers: list[str]) -> None:
    expected = any(fnmatch.fnmatchcase(fold(i), fold(p)) for p in patterns for i in identifiers)
    assert identifier_matches(tuple(patterns), tuple(identifiers)) == expected
