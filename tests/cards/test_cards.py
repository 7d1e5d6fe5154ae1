"""Cards: context cue, phrasing rotation, spacing, and what the seeds deck contains."""

from __future__ import annotations

from dataclasses import replace

from collections import Counter

from deckgen.cards.cards import TEMPLATES, cue_for, fill, make_candidates, make_cards
from deckgen.cards.gate import anki_cards, warnings_unless_rejected
from deckgen.extract.extract import extract_review
from deckgen.source.parse import parse_seed_file
from deckgen.text.segment import get_segmenter
from deckgen.types import CardKind
from tests.conftest import FIXTURES, SEEDS

FIXTURE = FIXTURES / "good.txt"


def test_fill_spaces_english_from_chinese_at_slot_edges() -> None:
    assert fill("用什么{y}？", y="`lru_cache` 复用") == "用什么 `lru_cache` 复用？"
    assert fill("{x}的目的是什么？", x="采用 torch.empty") == "采用 torch.empty 的目的是什么？"
    assert fill("{x}是为了什么？", x="「预分配」") == "预分配是为了什么？"
    assert fill("「{x}」是怎么做的？", x="“两库分工”") == "「两库分工」是怎么做的？"
    assert fill("「{x}」是怎么做的？", x="“KV cache 组”的抽象") == "「“KV cache 组”的抽象」是怎么做的？"


def test_every_relation_has_several_phrasings() -> None:
    assert all(len(options) >= 2 for options in TEMPLATES.values())


def test_question_templates_are_data_with_known_slots() -> None:
    """The templates are read from rules/questions.toml; each uses only the slots the card maker fills."""
    import string
    import tomllib

    data = tomllib.loads((SEEDS.parent / "rules" / "questions.toml").read_text(encoding="utf-8"))["questions"]
    assert {k: tuple(v) for k, v in data.items()} == TEMPLATES
    slots = {field for options in TEMPLATES.values() for t in options for _, field, _, _ in string.Formatter().parse(t)
             if field}
    assert slots <= {"x", "y", "v", "a", "p", "m", "c", "s", "g"}


def test_cue_is_repository_and_what_the_pr_changes() -> None:
    """The cue names what the summary changes (为调度器引入预分配工作区 → 调度器), never the change, which cards ask;
    with no such object, the summary's first clause, or the part before its colon."""
    review = extract_review(parse_seed_file(FIXTURE)[0])
    assert cue_for(review) == "widget · 调度器"
    for title, cue in [("集中元数据初始化时机，修复崩溃", "widget · 集中元数据初始化时机"),
                       ("V1 引擎支持结构化输出：语法异步编译，位掩码统一生成", "widget · V1 引擎支持结构化输出")]:
        entry = replace(review.entry, title=title)
        assert cue_for(extract_review(entry)) == cue


def test_cards_of_a_small_fixture() -> None:
    """The fixture's three numbered decisions each give a card; every card carries the cue (the headline card the
    repository's alone)."""
    review = extract_review(parse_seed_file(FIXTURE)[0])
    cards = make_cards(review)
    answers = {c.answer for c in cards}
    assert "`torch.empty`" in answers or any("`torch.empty`" in c.answer for c in cards)
    assert any("尽早暴露错误" == c.answer or "参数校验" in c.answer for c in cards)
    assert any("`workspace`" in c.answer for c in cards)
    assert all(c.cue == "widget · 调度器" for c in cards if c.kind != CardKind.HEADLINE)
    assert [c.cue for c in cards if c.kind == CardKind.HEADLINE] == ["widget"]
    assert 3 <= sum(anki_cards(c) for c in cards) <= 10


def test_phrasing_is_deterministic() -> None:
    review = extract_review(parse_seed_file(FIXTURE)[0])
    assert [c.prompt for c in make_cards(review)] == [c.prompt for c in make_cards(review)]


def test_no_template_dominates_the_seeds_deck() -> None:
    """A12: the most common question frame produces at most 40% of the Q/A cards."""
    from deckgen.pipeline import build_corpus

    cards = [c for c in build_corpus([SEEDS]).cards
             if c.kind not in (CardKind.CLOZE, CardKind.GLOSSARY)]  # glossary cards share one frame by design
    frames = Counter(c.key.split(":")[1] for c in cards)
    assert frames.most_common(1)[0][1] <= 0.4 * len(cards)


def _cards_of(title: str, review: str) -> list[tuple[str, str, str]]:
    """(kind, question, answer) of every card deckgen offers for one PR that passes the quality gate: what the
    generator makes; which of them a learner gets is selection's (tests/cards/test_select.py)."""
    from pathlib import Path

    from deckgen.types import Entry

    entry = Entry("o/widget", title, review, Path("s.txt"), 1, 2)
    seg = get_segmenter()
    return [(c.card.kind.value, c.card.prompt, c.card.answer) for c in make_candidates(extract_review(entry), seg)
            if warnings_unless_rejected(c.card, seg) is not None]


def test_a_frame_question_asks_how_the_pr_did_what_its_summary_says() -> None:
    cards = _cards_of("放宽 CuPy 依赖约束，仅排除坏版本", "值得快速浏览。思路是用 != 精确排除坏版本、待上游修复后立即放开。")
    assert ("decision", "该 PR 具体怎样放宽 CuPy 依赖约束？", "用 != 精确排除坏版本、待上游修复后立即放开") in cards \
        or ("decision", "该 PR 是怎样放宽 CuPy 依赖约束的？", "用 != 精确排除坏版本、待上游修复后立即放开") in cards
    assert not [c for c in cards if "思路是什么" in c[1]]


def test_what_avoids_a_problem_is_the_step_taken_not_what_is_no_longer_done() -> None:
    review = "值得精读。借助统一内存，把 `mmap` 得到的模型数据直接包装成 Metal 缓冲区，不再额外拷贝一份权重，避免内存中出现两份模型数据。"
    answers = [a for kind, _, a in _cards_of("在 Apple 芯片上加入 Metal 推理", review) if kind == "how"]
    assert "把 `mmap` 得到的模型数据直接包装成 Metal 缓冲区" in answers
    assert "不再额外拷贝一份权重" not in answers


def test_where_a_thing_was_moved_is_asked_only_of_a_place() -> None:
    review = "值得精读。热路径中，该 PR 把多层共享的元数据计算收敛到一次并跨层缓存。"
    cards = _cards_of("支持推测解码与上下文并行组合", review)
    assert not [c for c in cards if c[1].endswith(("哪里？", "什么地方？"))]


def test_a_frame_label_is_not_who_acts() -> None:
    cards = _cards_of("新增基于 CUTLASS 的 FP8 GEMM", "值得精读。核心思路：把反量化融进 epilogue，不再单独做逐元素缩放。")
    assert not [c for c in cards if c[1].startswith("核心思路") and c[0] != "cloze"]  # a gap's text may show it


def test_a_move_the_summary_already_names_makes_no_card_but_one_it_only_mentions_does() -> None:
    moved = "值得快速浏览。原先的 `MAX_JOBS` 环境变量改为 `cmake --build -j` 参数。"
    assert [c for c in _cards_of("用 CMake 取代 setup.py 中的扩展构建逻辑", moved) if c[0] == "contrast"]
    assert not [c for c in _cards_of("把并行度改为 `cmake --build -j` 参数", moved) if c[0] == "contrast"]


def test_an_effect_of_the_whole_pr_makes_no_card() -> None:
    cards = _cards_of("ORM 的迭代改用服务端游标", "值得精读。该 PR 使得大表遍历的峰值内存从几 GB 降到几十 MB。")
    assert not [c for c in cards if c[1].startswith("该 PR") and c[0] == "why"]


def test_a_decision_that_applies_in_one_place_says_where_in_the_question() -> None:
    review = "值得精读。测试中 `object.__new__ + monkeypatch` 的轻量级单测手法，避免了拉起真实多进程的高成本。"
    hows = [(q, a) for kind, q, a in _cards_of("修复 DP 多引擎启动时的线程超订阅", review) if kind == "how"]
    assert hows == [("测试中，为避免拉起真实多进程的高成本，该 PR 怎么做？", "`object.__new__ + monkeypatch` 的轻量级单测手法")] \
        or hows == [("测试中，该 PR 如何避免拉起真实多进程的高成本？", "`object.__new__ + monkeypatch` 的轻量级单测手法")]
    action = "值得精读。在构造函数中进行前置校验，以尽早暴露错误。"
    made = [(q, a) for _, q, a in _cards_of("为重采样添加后端", action)]
    assert [a for q, a in made if q in ("为了尽早暴露错误，该 PR 怎么做？", "该 PR 如何做到尽早暴露错误？")] == ["在构造函数中进行前置校验"]


def test_a_name_that_states_its_contrast_is_asked_why_rather_than_what() -> None:
    review = ("值得精读。1. **显式开关而非默认启用**: 通过 `params.flash_attn` 手动开启，因为当时部分配置要么不支持、要么明显更慢。"
              " 2. **掩码填充**: 要求 KQ mask 按 `PAD` 填充。")
    cards = _cards_of("为 ggml 新增融合注意力算子", review)
    assert [a for kind, _, a in cards if kind == "why"] == ["当时部分配置要么不支持、要么明显更慢"]
    assert not [c for c in cards if c[0] == "decision" and "显式开关" in c[1]]


def test_a_reason_for_two_cases_at_once_makes_no_card() -> None:
    review = "值得精读。非 CUDA 平台或配置了 KV connector 时自动关闭，因为现有 connector 只认一维块列表。"
    assert not [c for c in _cards_of("引入混合 KV cache 管理器", review) if c[0] == "why" and "或" in c[1]]


def test_what_a_thing_was_merged_into_leaves_the_closing_verb_out() -> None:
    cards = _cards_of("引入上下文并行", "值得精读。权重梯度的归约把 DP 与 CP 合并成一个通信组完成。")
    assert [a for kind, _, a in cards if kind == "how"] == ["一个通信组"]


def test_the_new_implementation_is_the_pr_and_its_effect_makes_no_card() -> None:
    cards = _cards_of("重写解释器模式", "值得快速浏览。新实现让 `@triton.jit` 函数直接作为 Python 执行，张量运算落到 numpy 数组上。")
    assert not [c for c in cards if c[2] in ("新实现", "Python")]


def test_a_headline_asking_what_the_subject_now_does_keeps_the_verb_whole() -> None:
    """"X 支持/引入/改为 Y 做法": asked "X 支持的是什么做法？", never "X 支持成了什么做法？" (only 改/换 take 成); and under
    the repository's cue alone, a one-word subject says too little of which PR it is: no such question is made,
    the summary's thing is asked in place instead (llama-server 支持通过什么渲染聊天格式？)."""
    assert all("成了什么" not in t for t in TEMPLATES["headline_subject_do"])
    summaries = ["ggml 支持在运行时动态加载后端库", "llama-server 支持通过 Jinja 模板渲染聊天格式",
                 "Dynamo 引入按需重新编译的自动动态形状", "check-wheel-size.py 改为从环境变量读取体积上限"]
    headlines = {s: [q for kind, q, _ in _cards_of(s, "值得快速浏览。") if kind == "headline"] for s in summaries}
    assert not [q for qs in headlines.values() for q in qs if q.endswith("做法？")], headlines
    assert headlines["llama-server 支持通过 Jinja 模板渲染聊天格式"] == ["llama-server 支持通过什么渲染聊天格式？"]
