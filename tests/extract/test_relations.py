"""Relations are matched on tokens: the right markers fire, look-alikes don't."""

from __future__ import annotations

import pytest

from deckgen.extract.relations import RelationFinder, subject_predicate
from deckgen.text.clauses import clean
from deckgen.text.segment import get_segmenter
from deckgen.types import Relation


def facts(text: str, topic: str = "") -> list[tuple[str, str, str]]:
    return [(f.relation.value, f.subject, f.detail) for f in RelationFinder(get_segmenter()).find(text, 1, topic)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("采用 `torch.empty` 而非 `torch.zeros`", ("contrast", "`torch.empty`", "`torch.zeros`")),
        ("关键设计是采用“逐层守卫”而不是全局禁用", ("contrast", "逐层守卫", "全局禁用")),
        ("用能力契约替代早期硬性配置拒绝", ("contrast", "能力契约", "早期硬性配置拒绝")),
        ("以能力契约替代硬性拒绝", ("contrast", "能力契约", "硬性拒绝")),
        ("在构造函数中进行参数校验以尽早暴露错误", ("purpose", "在构造函数中进行参数校验", "尽早暴露错误")),
        ("选择已声明依赖作为默认，以避免可选依赖膨胀", ("avoid", "选择已声明依赖作为默认", "可选依赖膨胀")),
        ("为了减少拷贝，在 GPU 上常驻指针表", ("purpose", "在 GPU 上常驻指针表", "减少拷贝")),
        ("写入调用方提供的缓冲区，确保了图重放的安全性", ("result", "写入调用方提供的缓冲区", "图重放的安全性")),
        ("预分配工作区，从而消除了非法内存访问", ("avoid", "预分配工作区", "非法内存访问")),
        ("通过 `lru_cache` 实现重采样器复用", ("means", "`lru_cache`", "实现重采样器复用")),
        ("通过 `params.flash_attn`（命令行 `-fa`）手动开启", ("means", "`params.flash_attn`", "手动开启")),
        ("写缓存时用 `index_copy_` 按位置写入", ("means", "`index_copy_`", "按位置写入")),
        ("反向时只在节点内进行，用显存换跨节点通信", ("means", "显存", "换跨节点通信")),
        ("用 ARG 拼 stage 名实现条件构建", ("means", "ARG 拼 stage 名", "实现条件构建")),
        ("无默认值让协议差异快速暴露", ("result", "无默认值", "协议差异快速暴露")),
        ("启动期强校验把配置漂移扼杀在握手阶段", ("action", "配置漂移", "扼杀在握手阶段")),
        ("讨论中的决策过程体现了数据驱动的判断", ("show", "讨论中的决策过程", "数据驱动的判断")),
        ("digest-only COPY 作为缓存键", ("role", "digest-only COPY", "缓存键")),
        ("实现了从特定平台格式到语言中立的 JSON 格式的迁移", ("contrast", "语言中立的 JSON 格式", "特定平台格式")),
        ("原先的 `NVCC_THREADS` 等环境变量改为 CMake define", ("contrast", "CMake define", "`NVCC_THREADS` 等环境变量")),
        ("脚本并不去解析配置文件，而是对固定文本编码取哈希", ("contrast", "对固定文本编码取哈希", "解析配置文件")),
        ("把所有编译标志搬进独立的 `CMakeLists.txt`", ("action", "所有编译标志", "搬进独立的 `CMakeLists.txt`")),
    ],
)
def test_relation_found(text: str, expected: tuple[str, str, str]) -> None:
    assert expected in facts(text)


@pytest.mark.parametrize(
    "text",
    [
        "以 FP8 格式存储 KV cache",  # 以 = "in/with", not purpose
        "通过了所有测试，并可以避免重复编译",  # 通过了 = passed; 可以 is one word
        "这个改动而非常重要",  # 而非常 is 而 | 非常
        "所以性能更好",  # 所以 is not 以
        "以及统一了采样接口",  # 以及 is not 以
    ],
)
def test_look_alike_markers_give_nothing(text: str) -> None:
    found = facts(text)
    assert not [f for f in found if f[0] in ("purpose", "avoid", "contrast", "means")]


def test_an_effect_after_a_rejected_option_follows_from_the_option_chosen() -> None:
    found = facts("把输入张量改为在计算图内分配，而非放在单独的缓冲区里，这样调度器可以自动保留多份副本，减少各阶段的同步")
    assert ("result", "把输入张量改为在计算图内分配", "调度器可以自动保留多份副本，减少各阶段的同步") in found
    assert not [f for f in found if f[0] == "result" and "缓冲区" in f[1]]


def test_an_effect_is_not_pinned_on_the_last_step_of_a_longer_action() -> None:
    found = facts("把算子链折叠成一个算子，并在构图函数中替换，使各后端可以分块计算，而不必物化完整矩阵")
    assert not [f for f in found if f[0] == "result" and f[1].startswith(("在构图函数", "使"))]


def test_a_role_is_the_noun_phrase_not_what_follows_it() -> None:
    found = facts("把预分词器类型作为新的元数据 `tokenizer.ggml.pre` 写进 GGUF")
    assert [f[2] for f in found if f[0] == "role"] == ["新的元数据 `tokenizer.ggml.pre`"]


def test_a_link_verb_used_as_a_modifier_does_not_end_the_means() -> None:
    assert ("means", "`DL_IMPL` 宏", "导出统一的入口函数") in facts("并用 `DL_IMPL` 宏导出统一的入口函数")


def test_what_followed_or_a_problem_is_no_option_and_no_effect() -> None:
    assert not [f for f in facts("物理显存按需映射到段尾，段因此可以“长大”，而不是另起一段") if f[0] == "contrast"]
    assert not [f for f in facts("左填充会让某些行被整行屏蔽") if f[0] == "result"]
    assert not [f for f in facts("于是用 `unmask` 把这些行改成“看见全部”") if f[0] == "contrast"]


def test_purposes_verbs_and_caveats_are_not_effects() -> None:
    assert not [f for f in facts("为了让调度保持简单，初版要求微批数量是级数的整数倍") if f[0] == "result"]
    assert not [f for f in facts("按元素数均分给各 rank，这样一个参数可能跨两个分片") if f[0] == "result"]
    assert ("action", "DP 与 CP", "合并成一个通信组完成") in facts("权重梯度的归约把 DP 与 CP 合并成一个通信组完成")


def test_a_reason_that_is_only_when_takes_its_main_clause() -> None:
    found = facts("之所以用 all-to-all，是因为在序列长度与卡数同比增长时，每张卡的通信量保持不变")
    assert [f[1] for f in found if f[0] == "cause"] == ["在序列长度与卡数同比增长时，每张卡的通信量保持不变"]


def test_what_serves_as_something_is_a_thing_and_harm_is_no_effect() -> None:
    assert not [f for f in facts("换算成 token 数，回报给 router 作为批次 token 上限") if f[0] == "role"]
    assert not [f for f in facts("响应对象可以不经等待直接作为参数传给另一个句柄") if f[0] == "role"]
    assert [f for f in facts("digest-only COPY 作为缓存键") if f[0] == "role"]
    assert not [f for f in facts("引入分页后按块预分配，让用户手填上限往往不是浪费显存就是 OOM") if f[0] == "result"]


def test_several_things_are_not_the_decision_the_sentence_is_about() -> None:
    found = RelationFinder(get_segmenter()).find("内核直接把它们写进缓存的对应位置", 1, "原地更新缓存")
    assert not [f for f in found if f.subject == "原地更新缓存"]


def test_pronoun_subject_resolves_to_topic() -> None:
    """"“捕获轴”机制，这是一个解决 X 问题的方案" → the mechanism solves X."""
    found = facts("这是一个解决输入形状多样性问题的优雅方案", topic="“捕获轴”机制")
    assert ("solve", "“捕获轴”机制", "输入形状多样性问题") in found


def test_clean_trims_connectives_and_particles() -> None:
    assert clean("并且统一了接口（见下文）的") == "统一了接口"
    assert clean("“逐层守卫”") == "逐层守卫"
    assert clean("作者把序列化逻辑抽到了独立的 crate 中") == "把序列化逻辑抽到了独立的 crate 中"
    assert clean("统一到一个明确的时间点（在最终批次构建之后）") == "统一到一个明确的时间点（在最终批次构建之后）"
    assert clean("窗口移动后相对位置变了") == "窗口移动后相对位置变了"
    assert clean("统一了采样接口了") == "统一了采样接口"
    assert clean("推倒重来") == "推倒重来" and clean("并行度不能超过头数") == "并行度不能超过头数"
    assert clean("于是可以直接调用任意本地实现") == "可以直接调用任意本地实现"
    assert clean("另有一个可选的“延迟一步参数更新”") == "延迟一步参数更新"
    assert clean("只返回 `IntermediateTensors`（`hidden_states` 与 `residual`），由 worker 收发") == \
        "只返回 `IntermediateTensors`，由 worker 收发"
    assert clean("先检查 `flash_attn`（见下文）手动开启") == "先检查 `flash_attn` 手动开启"


def test_subject_predicate_splits_practices() -> None:
    finder = RelationFinder(get_segmenter())
    assert subject_predicate(finder, "`llvm-objdump --offloading` 校验 code object 覆盖") == (
        "`llvm-objdump --offloading`", "校验 code object 覆盖")
    assert subject_predicate(finder, "oracle 参考路径如何精确模拟激活量化误差") == ("oracle 参考路径", "精确模拟激活量化误差")
    assert subject_predicate(finder, "平台判断逻辑是否足够稳健") is None
    assert subject_predicate(finder, "在其他模型上应用") is None


def test_relation_enum_values_are_stable() -> None:
    """Relation names appear in tags (rel::…) and card keys: renaming one re-keys cards."""
    assert [r.value for r in Relation] == [
        "definition", "contrast", "purpose", "avoid", "result", "means", "show", "solve", "role", "action",
        "condition", "cause", "tradeoff", "term", "headline", "slot", "whole"]
