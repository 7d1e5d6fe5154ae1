"""The headline change of a PR summary: each form of summary, and what must not be read as one."""

from __future__ import annotations

from pathlib import Path

import pytest

from deckgen.extract.headline import core_of, headline_facts
from deckgen.extract.slots import GAP
from deckgen.text.segment import get_segmenter
from deckgen.types import Entry


def facts(title: str) -> dict[str, tuple[str, str, str, str]]:
    entry = Entry("acme/widget", title, "值得精读。", Path("x.txt"), 3, 5)
    return {f.marker: (f.subject, f.detail, f.verb, f.prefix) for f in headline_facts(entry, get_segmenter())}


def test_for_an_object_with_a_goal() -> None:
    found = facts("为 ROCm 上稀疏 MLA 预填充引入 AITER OPUS 内核路由，提升大请求量吞吐。")
    assert found["for"] == ("ROCm 上稀疏 MLA 预填充", "AITER OPUS 内核路由", "引入", "提升大请求量吞吐")
    assert "goal" not in found  # the change is asked by what it adds, not repeated whole after its goal


def test_a_purpose_after_wei_is_no_object() -> None:
    """为提升 X is what for, not for whom: no 'for' form."""
    assert "for" not in facts("为提升吞吐引入批量刷盘")


def test_an_added_thing_stops_before_a_second_step() -> None:
    """添加 X 并设为默认 adds X; 并行 is a word, not 并 + 行."""
    assert facts("为音频重采样添加 torchaudio 后端并设为默认")["for"][1] == "torchaudio 后端"
    assert facts("为 V0 引擎引入流水线并行")["for"][1] == "流水线并行"


def test_a_fix_is_the_goal_of_the_clause_that_changes_something() -> None:
    assert facts("修复 DP 多引擎启动时 CPU 线程超订阅，均分启动线程数")["goal"] == (
        "修复 DP 多引擎启动时 CPU 线程超订阅", "均分启动线程数", "", "")


def test_a_fix_alone_asks_its_cause() -> None:
    found = facts("修复 X 内核因权重形状不满足对齐要求而导致的崩溃，并修正融合逻辑。")
    assert found["fix_cause"][:2] == ("X 内核的崩溃", "权重形状不满足对齐要求")
    assert "goal" not in found  # 并修正… is another change, not how the crash was fixed


def test_replace_and_migrate() -> None:
    assert facts("用 CMake 取代 setup.py 中的扩展构建逻辑，使产物可以独立构建")["replace"][:2] == (
        "setup.py 中的扩展构建逻辑", "CMake")
    assert facts("将代理中的元数据从 torch/base64 序列化改为 JSON 数组，提升吞吐")["migrate"][:2] == (
        "代理中的元数据", "JSON 数组")


def test_yi_opens_a_goal_only_before_a_verb() -> None:
    """以 256 权重超块降低误差 says by what, not what for."""
    assert "goal" not in facts("引入 k-quants 量化类型，以 256 权重超块降低低比特量化误差")
    assert facts("引入批量刷盘，以降低提交延迟")["goal"][:2] == ("降低提交延迟", "引入批量刷盘")


def test_colon_then_and_subject() -> None:
    assert facts("V1 引擎支持结构化输出：语法在引擎核心异步编译，位掩码由调度侧生成")["colon"][:2] == (
        "V1 引擎支持结构化输出", "语法在引擎核心异步编译，位掩码由调度侧生成")  # the body whole: one clause says half
    slot = facts("MRV2 支持 prompt embeds，新增 Triton 叠加 kernel")["slot"]  # asked in place, after the first clause
    assert slot[:3] == ("MRV2 支持 prompt embeds，该 PR 新增 " + GAP, "Triton 叠加 kernel", "什么")
    assert facts("接入 FlashInfer 作为新的注意力后端，先只用于解码阶段")["slot"][:2] == (
        "接入 " + GAP + " 作为新的注意力后端", "FlashInfer")
    assert facts("Rust 前端新增 LoRA 能力通告与握手校验")["subject"][:3] == ("Rust 前端", "LoRA 能力通告与握手校验", "新增")
    assert "subject" not in facts("对尚未适配的场景自动回退为非重叠模式")  # no noun phrase before the verb


@pytest.mark.parametrize(("title", "core"), [
    ("[Bugfix] 修复崩溃 (#123)", "修复崩溃"), ("#4412: 引入流水线并行。", "引入流水线并行"), ("放宽约束。", "放宽约束")])
def test_core_drops_number_tag_and_stop(title: str, core: str) -> None:
    assert core_of(title) == core
