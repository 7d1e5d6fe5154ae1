"""Sentence roles: only decisions, with their reasons, mechanisms and alternatives, reach fact extraction.

The examples are written for these tests in the seeds' style; none is taken from a real review.
"""

from __future__ import annotations

import pytest

from deckgen.extract.roles import clause_spans, decision_text, lead_names_decisions, opening_role, role_of, rules
from deckgen.text.units import Unit, split_units


def cut(text: str, *, ordinal: int = 0, lead: str = "", heading: str = "") -> str:
    return decision_text(Unit(text, 0, ordinal=ordinal, lead=lead, heading=heading))


@pytest.mark.parametrize(("clause", "role"), [
    ("实现完整且逻辑清晰", "verdict"),
    ("设计模式具有借鉴意义", "verdict"),
    ("评审中 alice 建议把队列封装成类", "discussion"),
    ("作者坦言当前实现相当简单", "discussion"),
    ("阅读时建议先看 `scheduler.py`", "advice"),
    ("建议对照旧实现阅读", "advice"),
    ("`check_x` 的判断逻辑是否足够稳健", "checklist"),
    ("对于维护多平台的工程师", "audience"),
    ("后续 #123 把缓存挪到了启动阶段", "followup"),
    ("需要注意初版尚不支持前缀缓存", "followup"),
    ("在 8 卡上吞吐提升约 30%", "numbers"),
    ("背景是旧方案不支持增量构建", "background"),
    ("可以概括为三点", "lead"),
    ("把元数据写进文件头", ""),
    ("采用逐层检查而非全局开关", ""),
    ("调度器每步检查编译是否完成", ""),  # 检查 X 是否 Y is a mechanism, not a question to the reader
])
def test_each_clause_gets_the_role_its_cues_give(clause: str, role: str) -> None:
    assert role_of(clause) == role


def test_cues_inside_code_do_not_count() -> None:
    assert role_of("调用 `run_benchmark()` 完成预热") == ""
    assert role_of("调用 run benchmark 完成预热") == "numbers"


def test_a_unit_that_opens_with_a_frame_has_that_role_whole() -> None:
    assert opening_role("此外，评审中有人提出把锁换成无锁队列，作者采纳") == "discussion"
    assert opening_role("值得精读，尤其是负责调度的工程师") == "verdict"
    assert opening_role("采用无锁队列") == ""


def test_clauses_are_cut_at_punctuation_but_never_inside_brackets_code_or_quotes() -> None:
    text = "先写入缓冲区（见 `a,b` 与 c，d）；再用“读，写”分离——最后提交"
    assert [text[a:b] for a, b, _ in clause_spans(text)] == [
        "先写入缓冲区（见 `a,b` 与 c，d）", "再用“读，写”分离", "最后提交"]


def test_non_decision_clauses_are_cut_out_of_a_decision_sentence() -> None:
    text = "把元数据初始化集中到一个时间点，而不是分散在多个路径中，这是一个清晰且可维护的模式"
    assert cut(text) == "把元数据初始化集中到一个时间点，而不是分散在多个路径中"


def test_prose_without_a_decision_cue_is_not_a_decision() -> None:
    assert cut("该模块的细节比较多") == ""
    assert cut("该模块把重试次数改为 3") == "该模块把重试次数改为 3"


def test_items_of_a_list_of_decisions_need_no_cue_but_items_of_advice_do() -> None:
    assert lead_names_decisions("关注三个设计决策") and lead_names_decisions("有两点取舍值得记录")
    assert not lead_names_decisions("建议关注以下几点")
    assert cut("每个 worker 一棵近似树", ordinal=1, lead="关注三个设计决策") == "每个 worker 一棵近似树"
    assert cut("每个 worker 一棵近似树", ordinal=1, lead="建议关注以下几点") == ""


def test_a_frame_is_cut_off_and_a_labelled_frame_names_the_decision() -> None:
    assert cut("核心思路是把反量化融进写回阶段") == "核心思路：把反量化融进写回阶段"
    assert cut("另一个值得留意的点是新增 `get_features`，由后端自报特性") == "新增 `get_features`，由后端自报特性"
    assert cut("核心亮点在于引入的“分块”机制") == "引入的“分块”机制"


def test_praise_around_a_description_keeps_the_description_and_praise_adverbs_go() -> None:
    """Drop the framing, keep the content (issue #25): what a PR is praised for showing is its decision."""
    assert cut("它展示了如何在边界处添加前置检查") == "在边界处添加前置检查"
    assert cut("它展示了如何安全地引入硬件内核——通过严格的条件守卫、清晰的回退路径") == \
        "通过严格的条件守卫、清晰的回退路径来安全地引入硬件内核"
    assert cut("`a/b.py` 中的 `CPURouter` 设计，它展示了如何将路由逻辑集成到统一框架中") == \
        "用`CPURouter`将路由逻辑集成到统一框架中"
    assert cut("对 X 位置编码的重构也展示了如何使遗留代码适应图约束") == "对 X 位置编码的重构，以使遗留代码适应图约束"
    assert cut("把路由逻辑优雅地集成到统一框架中") == "把路由逻辑集成到统一框架中"


def test_attention_is_not_a_frame_and_concerns_and_motives_are_not_decisions() -> None:
    assert cut("注意力层不再自己拼接元组，而是调用 `update`") == "注意力层不再自己拼接元组，而是调用 `update`"
    assert cut("评审的主要顾虑是透传会让参数拼写错误更难被发现", ordinal=1, lead="两个设计决策") == ""
    assert cut("动机很直接：各种掩码变体层出不穷，为每一种都手写内核并不现实") == ""
    assert cut("限制也很直接：并行度不能超过注意力头数", ordinal=1, lead="三个设计决策") == ""
    assert cut("论文报告二者结合可让激活显存降低约 5 倍", ordinal=1, lead="三个设计决策") == ""


def test_a_checklist_tail_cuts_only_the_question() -> None:
    assert cut("`check_x` 函数的判断逻辑是否足够稳健", ordinal=1, lead="两个设计决策") == "`check_x` 函数的判断逻辑"


def test_reported_speech_is_cut_up_to_the_decision_that_follows() -> None:
    text = "作者在描述里坦言，接口很难一次设计到位，因此选择先以独立库的形式快速迭代"
    assert cut(text) == "因此选择先以独立库的形式快速迭代"


def test_a_clause_that_goes_on_with_a_cut_one_is_cut_too() -> None:
    text = "改为在内部自动切分，现有应用只需调大上限就能受益，而不必修改逻辑"
    assert cut(text) == "改为在内部自动切分"
    assert cut("改为在内部自动切分，而不必修改调用方") == "改为在内部自动切分，而不必修改调用方"


def test_a_condition_whose_main_clause_was_advice_is_dropped() -> None:
    assert cut("若要为其他模型开启该特性，直接沿这两条线扩展即可") == ""


def test_the_cue_lists_are_data() -> None:
    """Every role that makes no card has cues, and rules() reads them from rules/roles.toml."""
    ids = [role.id for role in rules().roles]
    assert {"verdict", "advice", "discussion", "checklist", "audience", "followup", "numbers", "background"} <= set(ids)
    assert all(role.cues or role.patterns or role.opens for role in rules().roles)


def test_units_of_a_review_keep_only_decisions() -> None:
    review = ("值得精读。关键设计决策如下：1. **预分配**: 启动时一次分配槽位，以避免运行时碎片；"
              "2. **延迟编译**: 请求到来时才编译语法。评审中 bob 追问了锁的开销。阅读时建议先看测试。")
    kept = [decision_text(u) for u in split_units(review.replace("**", ""))]
    assert [k for k in kept if k] == ["预分配: 启动时一次分配槽位，以避免运行时碎片", "延迟编译: 请求到来时才编译语法"]
