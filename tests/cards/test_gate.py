"""Each quality check: one card it passes, one it rejects."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deckgen.cards import gate
from deckgen.text.markup import deletion
from deckgen.text.segment import get_segmenter
from deckgen.types import Card, CardKind, Entry, Relation, Verdict

REVIEW = ("值得精读。采用 `torch.empty` 而非 `torch.zeros`，以减少初始化开销。"
          "通过预分配 `workspace` 来避免在捕获期间分配显存，从而消除了图重放时的非法内存访问。")
ENTRY = Entry("o/r", "为调度器引入预分配工作区", REVIEW, Path("s.txt"), 3, 5)
BASE = Card(entry=ENTRY, kind=CardKind.WHY, key="why:x", prompt="采用 `torch.empty` 而非 `torch.zeros`，目的是什么？",
            answer="减少初始化开销", cue="r · 为调度器引入预分配工作区", sentence=REVIEW, line=5,
            verdict=Verdict.DEEP, relation=Relation.PURPOSE)
CLOZE = replace(BASE, kind=CardKind.CLOZE, answer="`workspace`",
                prompt="通过预分配 " + deletion(1, "`workspace`") + " 来避免在捕获期间分配显存，从而消除了图重放时的非法内存访问")


def codes(card: Card, check) -> list[str]:  # type: ignore[no-untyped-def]
    return [f"{f.check}:{f.severity}" for f in check(card, get_segmenter())]


CASES = [
    # (check, passing card, failing card, expected failing code)
    (gate.check_answer_shape, BASE, replace(BASE, prompt="采用 torch.empty 的目的。"), "Q1:R"),
    (gate.check_yes_no, BASE, replace(BASE, prompt="采用 torch.empty 是否为了减少开销？"), "Q2:R"),
    (gate.check_context_cue, BASE, replace(BASE, cue=" "), "Q3:R"),
    (gate.check_leak, BASE, replace(BASE, prompt="为了减少初始化开销采用了什么？"), "A3:R"),
    (gate.check_question_length, BASE, replace(BASE, prompt="为什么" + "很长的问题" * 20 + "？"), "Q5:R"),
    (gate.check_answer_length, BASE, replace(BASE, answer="减少" * 20), "A1:R"),
    (gate.check_one_fact, BASE, replace(BASE, answer="减少开销，提升吞吐"), "A2:R"),
    (gate.check_specific, BASE, replace(BASE, answer="性能"), "A4:R"),
    (gate.check_fragments, BASE, replace(BASE, answer="减少初始化开销的"), "A5:R"),
    (gate.check_fragments, BASE, replace(BASE, answer="torch.emp 的开销"), "A5:R"),
    (gate.check_balanced, BASE, replace(BASE, answer="减少（初始化开销"), "A6:R"),
    (gate.check_orphans, BASE, replace(BASE, prompt="其目的是什么？"), "A7:R"),
    (gate.check_cloze_syntax, CLOZE, replace(CLOZE, prompt="通过预分配 " + deletion(1, "a::b") + " 来避免分配显存"), "A8:R"),
    (gate.check_cloze_context, CLOZE, replace(CLOZE, prompt="预分配 " + deletion(1, "`workspace`")), "A9:R"),
    (gate.check_extractive, BASE, replace(BASE, answer="降低编译时间"), "A10:R"),
    (gate.check_typography, BASE, replace(BASE, prompt="采用  torch.empty 的目的是什么？"), "A15:W"),
]


@pytest.mark.parametrize(("check", "good", "bad", "code"), CASES, ids=[c[3] + ":" + c[0].__name__ for c in CASES])
def test_check_passes_good_and_flags_bad(check, good: Card, bad: Card, code: str) -> None:  # type: ignore[no-untyped-def]
    assert codes(good, check) == []
    assert code in codes(bad, check)


def test_a_what_question_is_not_answered_by_the_rest_of_a_shi_clause() -> None:
    card = replace(BASE, kind=CardKind.NAME, prompt="什么把缩放在写回前一次完成？", answer="是在新路径上用 epilogue visitor tree")
    assert "Q6:R" in codes(card, gate.check_answer_phrase)
    assert codes(replace(card, answer="CUTLASS 的 epilogue visitor tree"), gate.check_answer_phrase) == []


def test_a_question_asking_for_a_reason_may_be_answered_by_a_clause() -> None:
    card = replace(BASE, prompt="手动开启的原因是什么？", answer="部分配置明显更慢")
    assert codes(card, gate.check_answer_phrase) == []


def test_summary_leak_looks_at_the_cue_unless_the_card_asks_what_the_pr_did() -> None:
    entry = replace(ENTRY, title="支持结构化输出，位掩码由调度侧统一填充")
    card = replace(BASE, entry=entry, cue="r · 支持结构化输出", prompt="位掩码不由 worker 计算，而是怎么做的？",
                   answer="由调度侧统一填充")
    assert codes(card, gate.check_summary_leak) == []
    frame = replace(card, key="decision:frame:x", prompt="该 PR 的核心思路是什么？")
    assert "Q4b:R" in codes(frame, gate.check_summary_leak)
    assert "Q4b:R" in codes(replace(card, cue="r · 位掩码由调度侧统一填充"), gate.check_summary_leak)


def test_a_question_may_not_refer_to_two_things_it_does_not_name() -> None:
    card = replace(BASE, prompt="「两库分工」中，二者靠什么衔接？", answer="embedding")
    assert "A7:R" in codes(card, gate.check_orphans)
    named = replace(BASE, prompt="「两库分工」是怎么做的？", answer="A 只认识 token，B 负责切块，二者通过 embedding 衔接")
    assert codes(named, gate.check_orphans) == []


def test_whether_inside_a_what_question_is_not_a_yes_no_question() -> None:
    card = replace(BASE, prompt="加载时靠什么检查草稿模型与目标模型的词表是否兼容？", answer="`are_compatible`")
    assert codes(card, gate.check_yes_no) == []
    assert "Q2:R" in codes(replace(card, prompt="加载时是否检查词表兼容？"), gate.check_yes_no)


def test_a_rule_with_its_else_is_one_fact() -> None:
    card = replace(BASE, answer="最高命中率超过阈值才按缓存路由，否则退回最短队列")
    assert codes(card, gate.check_one_fact) == []
    assert "A2:R" in codes(replace(card, answer="按缓存路由，退回最短队列"), gate.check_one_fact)


def test_a_question_may_not_open_with_the_rest_of_a_shi_clause() -> None:
    assert "A7:R" in codes(replace(BASE, prompt="是在运行时通过什么加载？"), gate.check_orphans)


def test_an_answer_guessed_from_a_name_inside_it_is_rejected() -> None:
    cmake = replace(BASE, cue="r · 用 CMake 取代 setup.py", prompt="该 PR 把编译标志搬进了什么地方？", answer="独立的 `CMakeLists.txt`")
    assert "A3:R" in codes(cmake, gate.check_leak)
    define = replace(BASE, prompt="从「`NVCC_THREADS` 等环境变量」迁移到了什么？", answer="`-DNVCC_THREADS=8` 这样的 define")
    assert "A3:R" in codes(define, gate.check_leak)
    # A name of the front that the answer holds among much else gives nothing away.
    backend = replace(BASE, cue="r · 接入 FlashMLA 作为解码后端", prompt="「继承而非重写」指的是怎样的设计？",
                      answer="`FlashMLABackend` 直接继承父类，prefill 沿用父类路径，只在 decode 时调用新内核")
    assert codes(backend, gate.check_leak) == []
    gap = replace(CLOZE, prompt="原先的 `NVCC_THREADS` 等环境变量改为 " + deletion(1, "`-DNVCC_THREADS=8` 这样的 define"))
    assert "A3c:R" in codes(gap, gate.check_cloze_context)


def test_an_answer_pointing_back_at_the_review_is_not_specific() -> None:
    assert "A4:R" in codes(replace(BASE, answer="前缀复用这一处"), gate.check_specific)


def test_either_or_is_one_reason_not_a_list() -> None:
    card = replace(BASE, prompt="手动开启的原因是什么？", answer="当时部分配置要么不支持、要么明显更慢")
    assert codes(card, gate.check_one_fact) == []


def test_a_named_decision_must_say_more_than_its_name() -> None:
    card = replace(BASE, kind=CardKind.DECISION, prompt="「V 缓存不再转置」具体是什么做法？",
                   answer="启用 FA 时 V 缓存改为非转置布局存放")
    assert "A3n:R" in codes(card, gate.check_restated_name)
    fine = replace(card, prompt="「调用方拥有缓冲区模式」指的是怎样的设计？", answer="`prepare` 写入调用方提供的缓冲区并返回其视图")
    assert codes(fine, gate.check_restated_name) == []


def test_a_mechanism_with_what_it_buys_is_one_fact() -> None:
    card = replace(BASE, answer="调度器可以自动为输入保留多份副本，减少流水线各阶段之间的同步")
    assert "A2:R" not in codes(card, gate.check_one_fact)
    assert "A2:R" in codes(replace(card, answer="调度器可以自动为输入保留多份副本，输入内存也能复用"), gate.check_one_fact)


def test_an_answer_that_is_a_bare_verb_or_refers_to_unnamed_things_is_rejected() -> None:
    assert "A4:R" in codes(replace(BASE, prompt="权重梯度的归约怎么处理？", answer="完成"), gate.check_specific)
    assert "A7:R" in codes(replace(BASE, answer="把这些区域沿序列维切分到各 rank"), gate.check_orphans)


def test_a_gap_never_starts_with_a_verbs_complement() -> None:
    gap = replace(CLOZE, prompt="内建被替换" + deletion(1, "为解释器版本的 builder") + "，张量运算落到 numpy 数组上")
    assert "A5:R" in codes(gap, gate.check_fragments)


def test_term_recall_card_may_not_show_part_of_its_name() -> None:
    card = replace(BASE, kind=CardKind.NAME, prompt="预分配调用方缓冲区的做法叫什么？", answer="调用方缓冲区模式")
    assert "A3:R" in codes(card, gate.check_leak)


def test_term_recall_card_may_not_show_part_of_its_name_in_the_cue() -> None:
    card = replace(BASE, kind=CardKind.NAME, prompt="这种做法叫什么？", answer="预分配工作区")
    assert "A3:R" in codes(card, gate.check_leak)
    # Markup in the cue is read together with the prompt, as one text.
    marked = replace(card, cue="r · 为调度器引入 `ws` 预分配工作区", prompt="它的 `ws` 叫什么？")
    assert "A3:R" in codes(marked, gate.check_leak)


# Pieces that probe what the gate assumes of segmentation: jieba does not join across the
# cue's closing bracket, and tokens are lower-cased pieces of the plain text.
FRONT_PIECES = st.sampled_from(["预分配", "工作区", "调度器", "引入", "的", "】", "【", "·", " ", "  ", "`", "**", "*",
                                "torch.empty", "KV cache", "Σ", "ΑΣ", "İ", "ﬁ", "Ａ", "x_y", "-", "，", "？", "\n", "a"])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(FRONT_PIECES, max_size=12).map("".join), st.lists(FRONT_PIECES, max_size=12).map("".join))
def test_front_tokens_are_the_cues_and_the_prompts(cue: str, prompt: str) -> None:
    seg = get_segmenter()
    front = gate.front_of(replace(BASE, cue=cue, prompt=prompt))
    tokens = gate.content_tokens(seg, front)
    if "`" not in cue and "*" not in cue:
        assert tokens == gate.content_tokens(seg, f"【{cue}】") | gate.content_tokens(seg, prompt)
    plain = gate.strip_markdown(front)
    if "Σ" not in plain:
        assert all(token in plain.lower() for token in tokens)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(FRONT_PIECES, max_size=10).map("".join), st.lists(FRONT_PIECES, max_size=10).map("".join))
def test_source_words_read_sentence_and_review_as_one_text(sentence: str, review: str) -> None:
    """The review's identifiers are read once per PR; the result is what reading the joined text gives."""
    joined = gate.strip_markdown(sentence + " " + review)
    assert gate._source_words(sentence, review) == set(gate._ASCII_WORD.findall(joined))


def test_cloze_body_still_visible_elsewhere_is_rejected() -> None:
    card = replace(CLOZE, prompt="预分配 " + deletion(1, "`workspace`") + "，并在每次捕获前复用同一个 `workspace` 以免分配显存")
    assert "A3c:R" in codes(card, gate.check_cloze_context)


def test_cloze_costs_one_slot_per_gap() -> None:
    """Three gaps in one note count as three cards against the PR's budget and rank lower."""
    one = gate.Candidate(CLOZE, 2.0, REVIEW)
    three = gate.Candidate(replace(CLOZE, prompt="通过" + deletion(1, "预分配") + deletion(2, " `workspace` ")
                                   + "来" + deletion(3, "避免在捕获期间分配显存")), 2.0, REVIEW)
    assert gate.score(three, []) < gate.score(one, [])


@pytest.mark.parametrize("repo, cue, question", [
    # Headline questions of corpus/dev's deck at c48fc35 that fit any PR of their repository (issue #30).
    ("sgl-project/sglang", "sglang", "该 PR 新增什么？"),
    ("vllm-project/vllm", "vllm", "该 PR 给 vLLM 引入了什么？"),
    ("vllm-project/vllm", "vllm", "V1 引擎支持了什么？"),
    ("ggml-org/llama.cpp", "llama.cpp · PR #1234", "server 默认开启了什么？"),
])
def test_a_question_under_the_repository_alone_must_say_which_pr(repo: str, cue: str, question: str) -> None:
    card = replace(BASE, entry=replace(ENTRY, repo=repo), kind=CardKind.HEADLINE, cue=cue, prompt=question)
    assert codes(card, gate.check_context_free) == ["Q8:R"]


@pytest.mark.parametrize("cue, question", [
    ("vllm", "为提升性能与健壮性，该 PR 为多模态音频重采样添加了什么？"),
    ("sglang", "PD 分离接入的是什么？"),
    ("vllm · V1 调度器", "该 PR 新增什么？"),  # a cue naming what the PR is about says which PR
])
def test_a_question_with_its_goal_object_or_area_stands_alone(cue: str, question: str) -> None:
    card = replace(BASE, entry=replace(ENTRY, repo="vllm-project/vllm"), kind=CardKind.HEADLINE, cue=cue,
                   prompt=question)
    assert codes(card, gate.check_context_free) == []
