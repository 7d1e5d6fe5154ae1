"""The decision model: its fast score is the model's probability, and it tells decisions from praise."""

from __future__ import annotations

import pytest

from deckgen.extract.decisions import clause_features, decision_score, probability, weights
from deckgen.text.segment import get_segmenter

CLAUSES = ["采用 `torch.empty` 而非 `torch.zeros`", "这是一个值得精读的 PR", "评审中 njhill 建议封装成类",
           "把 K/V 数据管理和注意力计算放到同一个抽象后面", "吞吐提升约 30%"]


@pytest.mark.parametrize("clause", CLAUSES)
@pytest.mark.parametrize("flags", [{}, {"first": True, "kept": True}, {"item": True, "named": True}])
def test_the_fast_score_is_the_models_probability(clause: str, flags: dict[str, bool]) -> None:
    seg = get_segmenter()
    assert decision_score(clause, seg, **flags) == pytest.approx(probability(clause_features(clause, seg, **flags)))


def test_the_shipped_model_tells_a_decision_from_praise_and_numbers() -> None:
    """Trained on corpus/dev only (none of these sentences is in it): a sanity check, not a measure."""
    assert weights(), "rules/decisions.json holds the weights"
    seg = get_segmenter()
    decision = decision_score("采用 `torch.empty` 而非 `torch.zeros`", seg, kept=True)
    assert decision > 0.5 > decision_score("这是一个值得精读的 PR", seg)
    assert decision > decision_score("吞吐提升约 30%", seg)
