"""The key-phrase model: spans at word edges, scored by shipped weights, the likeliest first and never overlapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from deckgen.extract.roles import clause_spans
from deckgen.extract.spans import (
    LONGEST_TOKENS,
    Site,
    _context,
    _end,
    _pairs,
    _start,
    _sums,
    _Words,
    key_spans,
    spans,
    weights,
)
from deckgen.source.parse import read_corpus
from deckgen.text.segment import get_segmenter, units

FIXTURES = Path(__file__).parent.parent / "fixtures"

CLAUSE = "两端的协调暂时依赖 ETCD"


def test_spans_start_and_end_at_words_and_never_at_a_function_word() -> None:
    seg = get_segmenter()
    tokens = [t for t in seg.tokenize(CLAUSE) if t.text.strip()]
    found = [CLAUSE[tokens[i].start:tokens[j - 1].end] for i, j, _ in spans(CLAUSE, seg, Site("prose"))]
    assert "ETCD" in found and "两端的协调" in found
    assert not [s for s in found if s.startswith("的") or s.endswith(("的", "依赖的"))]
    assert all(j - i <= LONGEST_TOKENS for i, j, _ in spans(CLAUSE, seg, Site("prose")))


def test_the_shipped_model_finds_what_a_default_became_and_asks_it_in_place() -> None:
    """Trained on corpus/dev and corpus/dev2 only (this clause is in neither): a sanity check, not a measure."""
    assert weights(), "rules/spans.json holds the weights"
    clause = "默认值从 `cachelib` 改为 `offset`"
    best = key_spans(clause, get_segmenter(), Site("item", decision=0.9), limit=2)
    assert best[0].text == "`offset`" and best[0].askable  # 默认值从 `cachelib` 改为什么？
    assert all(a.end <= b.start or b.end <= a.start for a in best for b in best if a is not b)
    assert best == key_spans(clause, get_segmenter(), Site("item", decision=0.9), limit=2)  # deterministic
    assert key_spans(CLAUSE, get_segmenter(), Site("item", decision=0.9), limit=1)[0].text == "ETCD"


def test_a_phrase_where_a_subject_stands_is_not_asked_in_place() -> None:
    """"什么只负责查找？" read as vague to the raters: a thing is asked in place only after a verb or preposition."""
    found = key_spans("`NGramWorker` 只负责查找", get_segmenter(), Site("item", decision=0.9), limit=3)
    assert [s.askable for s in found if s.text == "`NGramWorker`"] in ([False], [])


def test_a_summary_gap_hides_at_most_what_its_caller_allows() -> None:
    title = "Rust 前端新增 LoRA 能力通告与握手校验"
    seg = get_segmenter()
    assert all(units(s.text) <= 4 for s in key_spans(title, seg, Site("title"), limit=3, longest=4))


def _fixture_clauses() -> list[str]:
    entries = read_corpus([FIXTURES / "heldout", FIXTURES / "hostile.txt"]).entries
    texts = [text for e in entries for text in (e.title, *e.review.split("。"))]
    return [text[a:b] for text in texts for a, b, _ in clause_spans(text) if text[a:b].strip()]


@pytest.mark.parametrize("site", [Site("prose", first=False, decision=0.55), Site("title")])
def test_the_summed_weights_are_those_of_the_named_features(site: Site) -> None:
    """A build sums each span's weights in one loop (``_sums``); training reads the feature names (``spans``): both
    must find the same spans, of the same sizes and the same weight, or the shipped model is not the trained one."""
    seg, table = get_segmenter(), weights()
    clauses = _fixture_clauses()
    assert len(clauses) > 150
    for clause in clauses:
        words = _Words(clause, seg)
        named = {(i, j): sum(table.get(name, 0.0) for name in names) for i, j, names in spans(clause, seg, site)}
        summed = {(i, j): z for i, j, _, z in _sums(clause, words, site, table)}
        assert summed == pytest.approx(named, rel=1e-12, abs=1e-12), clause
        # and float for float what a build summed before the one loop (byte-identical cards rest on it)
        w = table.get
        context = sum(w(name, 0.0) for name in _context(site))
        before = {(i, j): context + sum(w(name, 0.0) for name in _start(words, i))
                  + sum(w(name, 0.0) for name in _end(words, j)) + sum(w(name, 0.0) for name in pair)
                  for i, j, pair in _pairs(clause, words)}
        assert summed == before, clause
        for i, j, size, _ in _sums(clause, words, site, table):
            assert size == units(clause[words.tokens[i].start:words.tokens[j - 1].end]), clause
