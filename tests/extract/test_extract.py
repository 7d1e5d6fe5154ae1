"""Reviews in styles deckgen was not tuned on still yield their decisions."""

from __future__ import annotations

import pytest

from deckgen.extract.extract import (
    extract_review,
    find_identifiers,
    find_pr_refs,
    find_verdict,
)
from deckgen.source.parse import parse_seed_file
from deckgen.types import Relation, Verdict
from tests.conftest import FIXTURES


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("值得精读。", Verdict.DEEP),
        ("强烈建议精读，原因如下", Verdict.DEEP),
        ("值得快速浏览。", Verdict.SKIM),
        ("值得快速精读，改动仅 22 行", Verdict.SKIM),
        ("可以略读。", Verdict.SKIM),
        ("此 PR 改动极小，不值得精读实现，但其思路值得记录", Verdict.SKIP),
        ("不建议精读。", Verdict.SKIP),
        ("一个普通的改动。", Verdict.UNKNOWN),
    ],
)
def test_verdict_variants(text: str, verdict: Verdict) -> None:
    assert find_verdict(text)[0] == verdict


def test_identifiers_and_pr_refs() -> None:
    text = "见 `PromptEmbedsState.add_request/apply` 与 resolve_model_state_cls，参考 PR #55842 和 #4。"
    assert find_identifiers(text) == ("PromptEmbedsState.add_request/apply", "resolve_model_state_cls")
    assert find_pr_refs(text) == ("#55842",)


@pytest.fixture(name="reviews", scope="module")
def _reviews() -> list:  # type: ignore[type-arg]
    path = FIXTURES / "styles.txt"
    return [extract_review(e) for e in parse_seed_file(path)]


def relations(review) -> set[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return {(f.relation.value, f.subject, f.detail) for f in review.facts if f.relation != Relation.TERM}


def terms(review) -> set[str]:  # type: ignore[no-untyped-def]
    return {f.subject for f in review.facts if f.relation == Relation.TERM}


def test_verdicts_of_fixture(reviews) -> None:  # type: ignore[no-untyped-def]
    assert [r.verdict for r in reviews] == [Verdict.DEEP, Verdict.SKIM, Verdict.SKIP, Verdict.DEEP]


def test_bold_heading_and_discourse_patterns(reviews) -> None:  # type: ignore[no-untyped-def]
    found = relations(reviews[0])
    assert ("definition", "组提交", "多个事务共享一次 fsync") in found
    assert ("contrast", "多个事务共享一次 fsync", "每个事务单独刷盘") in found
    assert ("avoid", "把刷盘线程与提交线程解耦", "锁竞争") in found
    assert ("means", "`flush_batch_size`", "控制每批大小") in found
    assert ("avoid", "通过 `flush_batch_size` 控制每批大小", "尾延迟抖动") in found


def test_circled_items_with_contrast_purpose_result(reviews) -> None:  # type: ignore[no-untyped-def]
    found = relations(reviews[1])
    assert ("contrast", "分段 LRU", "全局 LRU") in found
    assert ("purpose", "按哈希把缓存切成多个分段", "减少热点锁冲突") in found
    assert ("result", "在 `BlockCache::evict` 中预先计算代价", "淘汰顺序稳定") in found
    assert "`BlockCache::evict`" in terms(reviews[1])


def test_quoted_name_and_rather_than(reviews) -> None:  # type: ignore[no-untyped-def]
    found = relations(reviews[2])
    assert ("contrast", "在启动时检查可用空间", "在写入过程中逐次检查") in found
    # "其“失败即中止”的思路值得记一笔": praise around a quoted name; the name is the approach the PR took.
    assert ("definition", "思路", "失败即中止") in found


def test_shouxian_qici_zuihou(reviews) -> None:  # type: ignore[no-untyped-def]
    found = relations(reviews[3])
    assert ("means", "serde 的 `deny_unknown_fields`", "拒绝未知字段") in found
    assert "`ConfigLoader::load`" in terms(reviews[3])


def _facts(review: str) -> list[tuple[str, str, str]]:
    from pathlib import Path

    from deckgen.extract.extract import extract_review
    from deckgen.types import Entry

    entry = Entry("o/widget", "统一合并层的权重 scale", review, Path("s.txt"), 1, 2)
    return [(f.relation.value, f.subject, f.detail) for f in extract_review(entry).facts]


def test_a_named_decision_explained_by_its_problem_gives_no_definition() -> None:
    review = "值得精读。1. **scale 统一**: 各分片 scale 不同时只能循环调用 `torch._scaled_mm`。"
    assert not [f for f in _facts(review) if f[0] == "definition"]


def test_a_procedure_cut_for_length_gives_no_definition() -> None:
    review = ("值得精读。1. **两遍算法**: 第一遍沿用原有的前缀匹配与插入逻辑，第二遍利用第一遍收集到的全部节点，"
              "在恰好等于 split size 整数倍的位置再切分一次并返回该节点。")
    assert not [f for f in _facts(review) if f[0] == "definition"]


def test_a_proposal_the_author_adopted_is_a_decision() -> None:
    review = ("值得精读。1. **scale 统一**: 各分片 scale 不同时只能循环调用 `torch._scaled_mm`；"
              "评审中有人提出取各分片 scale 的最大值作为公共 scale、再按比例重新量化各分片，作者采纳； "
              "2. **权重转置**: 权重在加载后转置，以满足布局要求。")
    assert ("role", "取各分片 scale 的最大值", "公共 scale") in _facts(review)


def test_a_frame_ending_in_zaiyu_is_no_decision_name() -> None:
    review = "值得精读。采用一致性哈希分片。权衡在于：分片后跨规则的依赖需要额外的协调。"
    assert not [f for f in _facts(review) if f[0] == "definition" and f[1].startswith("权衡")]


def test_a_new_piece_of_code_is_defined_by_what_it_does() -> None:
    review = "值得精读。新增 `update.py`，自动下载各模型的分词器，重新生成哈希分支。"
    assert ("definition", "`update.py`", "自动下载各模型的分词器，重新生成哈希分支") in _facts(review)
    assert not [f for f in _facts("值得精读。新增 `update.py`，这很好。") if f[0] == "definition"]


def test_a_named_decision_stops_before_a_step_added_with_bing() -> None:
    review = "值得精读。1. **单一融合算子**: 把算子链折叠成一个算子，并在构图函数中替换。 2. **掩码填充**: 要求掩码按块填充。"
    assert ("definition", "单一融合算子", "把算子链折叠成一个算子") in _facts(review)


def test_an_explanation_that_opens_with_the_old_way_gives_the_turn_to_the_new() -> None:
    review = ("值得精读。1. **调整分工**: 旧版把 K/V 切给 4 个 warp，部分结果必须经共享内存汇总，新版改为切分 Q、让 K/V 对所有 warp 可见。"
              " 2. **序列并行**: 把不同 Q 块分给不同线程块。")
    assert ("definition", "调整分工", "新版改为切分 Q、让 K/V 对所有 warp 可见") in _facts(review)
