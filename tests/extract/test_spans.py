"""The key-phrase model: spans at word edges, scored by shipped weights, the likeliest first and never overlapping."""

from __future__ import annotations

from deckgen.extract.spans import LONGEST_TOKENS, Site, key_spans, spans, weights
from deckgen.text.segment import get_segmenter, units

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
