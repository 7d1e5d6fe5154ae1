"""Reviews are cut into enumeration items and sentences, whatever the marker style."""

from __future__ import annotations

import pytest

from deckgen.text.units import Unit, cut_overlong, split_units, strip_bold


def items(text: str) -> list[str]:
    plain, bold = strip_bold(text)
    return [u.text for u in split_units(plain, bold) if u.ordinal]


@pytest.mark.parametrize(
    "text",
    [
        "设计要点：1. 预分配缓冲区 2. 复用实例 3. 前置校验。",
        "设计要点：1) 预分配缓冲区；2) 复用实例；3) 前置校验。",
        "设计要点：1）预分配缓冲区；2）复用实例；3）前置校验。",
        "设计要点：(1) 预分配缓冲区；(2) 复用实例；(3) 前置校验。",
        "设计要点：（1）预分配缓冲区；（2）复用实例；（3）前置校验。",
        "设计要点：1、预分配缓冲区；2、复用实例；3、前置校验。",
        "设计要点：①预分配缓冲区；②复用实例；③前置校验。",
        "设计要点有三点：一是预分配缓冲区；二是复用实例；三是前置校验。",
        "设计要点：第一，预分配缓冲区；第二，复用实例；第三，前置校验。",
        "设计要点：首先预分配缓冲区，其次复用实例，最后前置校验。",
    ],
    ids=["dot", "paren", "fullwidth-paren", "wrapped", "fullwidth-wrapped", "dun", "circled", "yi-shi",
         "di-yi", "shouxian"],
)
def test_enumeration_styles(text: str) -> None:
    assert items(text) == ["预分配缓冲区", "复用实例", "前置校验"]


def test_markers_in_code_and_versions_are_not_items() -> None:
    """`max(1, n)` and version numbers such as 2.5/2.6 are not enumeration markers."""
    assert items("调用 `f(1) g(2)` 并支持 MiniCPM-V 2.5/2.6 两个版本。") == []


def test_announced_count_must_match() -> None:
    """"有两点" before a list of three means the markers were not a list."""
    assert items("有两点：1) 甲方案；2) 乙方案；3) 丙方案。") == []


def test_bold_heading_and_lead() -> None:
    plain, bold = strip_bold("建议精读以下关键设计决策： 1. **集中初始化**: 统一到一处。 2. **缓冲区模式**: 写入调用方缓冲区。")
    units = [u for u in split_units(plain, bold) if u.ordinal]
    assert [u.heading for u in units] == ["集中初始化", "缓冲区模式"]
    assert {u.lead for u in units} == {"建议精读以下关键设计决策"}


def test_唯一是_is_not_an_enumeration() -> None:
    assert items("唯一是否需要关注的是性能。二是补充。") == []


def test_last_item_ends_with_its_sentence() -> None:
    plain, bold = strip_bold("要点：1) 甲；2) 乙。后面是普通句子。")
    units = split_units(plain, bold)
    assert [u.text for u in units] == ["要点", "甲", "乙", "后面是普通句子"]


def test_an_operator_does_not_end_a_sentence() -> None:
    from deckgen.text.units import split_units

    texts = [u.text for u in split_units("用 != 精确排除坏版本。它可用 a?.b 访问！接着说明。", frozenset())]
    assert texts[0] == "用 != 精确排除坏版本"
    assert len(texts) == 3


def test_a_sentence_announcing_its_parts_is_cut_into_them_when_the_count_matches() -> None:
    from deckgen.text.units import split_units

    text = "方案可以概括为三点：把标志搬进 `CMakeLists.txt`；`setup.py` 只负责挑选扩展；按旧名定义三个目标。"
    units = split_units(text, [])
    assert [(u.text, u.ordinal, u.lead) for u in units] == [
        ("把标志搬进 `CMakeLists.txt`", 1, "方案可以概括为三点"), ("`setup.py` 只负责挑选扩展", 2, "方案可以概括为三点"),
        ("按旧名定义三个目标", 3, "方案可以概括为三点")]
    assert all(text[u.offset:u.offset + len(u.text)] == u.text for u in units)
    assert len(split_units("方案可以概括为三点：把标志搬进 CMake；只负责挑选扩展。", [])) == 1  # two parts, not three


def test_an_enumeration_opening_right_after_its_subject_and_shi_after_a_step_word() -> None:
    from deckgen.text.units import split_units

    units = split_units("本次重构一是把后端抽成独立函数；二是按配置取函数；三是参数经 kwargs 透传。", [])
    assert [(u.ordinal, u.text) for u in units if u.ordinal] == [
        (1, "把后端抽成独立函数"), (2, "按配置取函数"), (3, "参数经 kwargs 透传")]
    assert len(split_units("统一是一个目标，没有第二点。", [])) == 1  # a lone 一是 is no list
    steps = split_units("首先是“分数修改函数”：用户只写标量函数；其次是“块稀疏掩码”：跳过整块。", [])
    assert [u.text for u in steps] == ["“分数修改函数”：用户只写标量函数", "“块稀疏掩码”：跳过整块"]


def test_a_unit_no_longer_than_the_limit_is_read_whole() -> None:
    unit = Unit("采用缓存而非重算，以避免重复构造", 7, ordinal=2, heading="缓存")
    assert cut_overlong(unit, limit=len(unit.text)) == [unit]


def test_an_overlong_sentence_is_cut_after_its_last_break_within_the_limit() -> None:
    text = "通过缓存实现复用，" * 30  # 270 characters, a comma every 9
    pieces = cut_overlong(Unit(text, 100, ordinal=1, lead="要点", heading="缓存"), limit=50)
    assert all(len(p.text) <= 50 for p in pieces) and len(pieces) == 6
    assert {p.text for p in pieces} == {"通过缓存实现复用，" * 4 + "通过缓存实现复用"}  # five clauses each, the comma dropped
    assert [p.offset for p in pieces] == [100, 145, 190, 235, 280, 325]  # each where it starts in the review
    # The first piece keeps the unit's place in its list; the others are prose.
    assert (pieces[0].ordinal, pieces[0].lead, pieces[0].heading) == (1, "要点", "缓存")
    assert {(p.ordinal, p.lead, p.heading) for p in pieces[1:]} == {(0, "", "")}


def test_a_run_with_no_break_is_cut_at_the_limit_but_not_inside_code() -> None:
    pieces = cut_overlong(Unit("通过" * 40 + "`a_b`" + "通过" * 40, 0), limit=83)
    assert [p.text for p in pieces] == ["通过" * 40, "`a_b`" + "通过" * 39, "通过"]


def test_thousands_of_items_and_code_spans_are_all_found() -> None:
    """Found in a walk through the text, not a walk per marker through every code span (3,000 items took seconds)."""
    review = "设计要点：\n" + "\n".join(f"- 复用 `opt_{n}` 实例" for n in range(3000))
    found = [u for u in split_units(*strip_bold(review)) if u.ordinal]
    assert [u.ordinal for u in found] == list(range(1, 3001)) and found[-1].text == "复用 `opt_2999` 实例"
