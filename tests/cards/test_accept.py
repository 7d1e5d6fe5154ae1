"""The acceptance model: a probability from features of the card that hold for any review, read from data."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from deckgen.cards import accept
from deckgen.cards.gate import Candidate
from deckgen.files.datadir import data_dir
from deckgen.source.parse import read_corpus
from deckgen.text.segment import get_segmenter
from tests.cards.test_gate import BASE, CLOZE, REVIEW

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _chance(candidate: Candidate) -> float:
    echo = accept.echoes([candidate])
    return accept.probability(accept.features(candidate, [], get_segmenter(), (), echo))


def test_weights_and_thresholds_are_data_with_their_provenance() -> None:
    shipped = json.loads((data_dir("rules") / accept.ACCEPTANCE_FILE).read_text(encoding="utf-8"))
    assert shipped["weights"] == accept.weights() and shipped["verdicts"] >= 3000
    assert set(shipped["trained_on"]) == {"corpus/dev", "corpus/dev2"}  # never a measure
    assert 0 <= accept.threshold() <= accept.threshold("second") <= 1


def test_no_weight_names_a_word_of_one_review() -> None:
    """Word features are kept only when seen in five or more seed files (benchmarks/learn.py): none names a PR."""
    lexical = [name for name in accept.weights() if name.startswith(("aw=", "qw=", "qe"))]
    assert lexical and not [name for name in lexical if any(c.isdigit() for c in name) and "`" in name]


def test_the_same_card_gets_the_same_probability_and_features_move_it() -> None:
    card = Candidate(BASE, 2.0, REVIEW, "f", unit=1, marker="以")
    assert 0 < _chance(card) == _chance(card) < 1
    short = Candidate(replace(CLOZE, prompt=CLOZE.prompt.replace("`workspace`", "API"), answer="API"), 2.0, REVIEW,
                      "g", unit=1, marker="span", phrase=0.05)
    assert "a_short_latin" in accept.features(short, [], get_segmenter(), (), accept.echoes([short]))
    assert _chance(short) < _chance(card)  # a gap hiding "API" was rated trivial nearly every time


def test_sentence_signals_are_read_from_the_rule_file() -> None:
    tested = replace(BASE, sentence="测试里把 `workspace` 提到外层，后续再改")
    names = accept.features(Candidate(tested, 2.0, REVIEW, "f", unit=1), [], get_segmenter(), (),
                            accept.echoes([]))
    assert {"s_tests", "s_later"} <= set(names)


def test_the_words_at_a_cards_edges_are_those_of_the_whole_text() -> None:
    """Features read a question's and an answer's edge words, segmenting only the blocks at its ends: they must be
    the words that segmenting all of it gives, whatever the text (code, a stray backtick, brackets, no mark)."""
    seg = get_segmenter()
    entries = read_corpus([FIXTURES / "heldout", FIXTURES / "hostile.txt", FIXTURES / "styles.txt"]).entries
    texts = [t for e in entries for t in (e.title, *e.review.split("。"), e.review) if t.strip()]
    texts += ["`a，b` 与 `c` 之间：用 `x` 管理（见 `y`）", "只有一个 ` 反引号，后面还有字", "「命名」中，为什么", "，", "",
              "chunked prefill clamp，默认开启；", "（括号）里的内容：`f()`。"]
    assert len(texts) > 100
    for text in texts:
        whole = [t.text if not t.protected else "C" for t in seg.tokenize(accept._CODE.sub(" C ", text))]
        for count in (0, 1, 2, 3):
            assert accept.first_words(seg, text, count) == tuple(whole[:count]), text
            assert accept.last_words(seg, text, count) == tuple(whole[max(len(whole) - count, 0):] if count else ()), text
