"""Segmentation keeps code and English terms whole and knows the field's Chinese words."""

from __future__ import annotations

import pytest

from deckgen.segment import get_segmenter, units


def words(text: str) -> list[str]:
    return [t.text for t in get_segmenter().tokenize(text)]


@pytest.mark.parametrize(
    ("text", "whole"),
    [
        ("启用 enable_prefix_caching 选项", "enable_prefix_caching"),
        ("改用 torch.cuda.Stream 同步", "torch.cuda.Stream"),
        ("升级到 FlashAttention-2 后端", "FlashAttention-2"),
        ("见 vllm/v1/worker/gpu_model_runner.py 的实现", "vllm/v1/worker/gpu_model_runner.py"),
        ("调用 `max(1, data_parallel_size_local)` 计算", "`max(1, data_parallel_size_local)`"),
        ("支持 chunked prefill clamp 逻辑", "chunked prefill clamp"),
        ("修改 torch::Tensor 的签名", "torch::Tensor"),
        ("吞吐提升 1.5x 左右", "1.5x"),
    ],
)
def test_protected_spans_stay_whole(text: str, whole: str) -> None:
    assert whole in words(text)


@pytest.mark.parametrize(
    ("text", "word"),
    [("新的后端预分配显存", "后端"), ("新的后端预分配显存", "预分配"), ("移除了冗余的同步", "移除"),
     ("支持投机解码", "投机解码"), ("启用微批处理", "微批处理"), ("启动期快速失败", "快速失败")],
)
def test_domain_words_are_one_token(text: str, word: str) -> None:
    assert word in words(text)


def test_marker_glued_by_hmm_is_recut() -> None:
    """HMM invents 图以 from 复用 CUDA 图以降低; the marker 以 must come out on its own."""
    assert "以" in words("复用 CUDA 图以降低启动开销")


def test_offsets_point_into_the_text() -> None:
    text = "用 `lru_cache` 复用重采样器"
    for token in get_segmenter().tokenize(text):
        assert text[token.start : token.end] == token.text


def test_pieces_segmented_before_do_not_change_a_sentence() -> None:
    """Segmentation is memoised per jieba block: a sentence must come out as jieba cuts it whole."""
    seg = get_segmenter()
    sentence = "调度器在预填充阶段把请求拆成小块，从而降低首字延迟；同时复用前缀缓存以减少重复计算"
    for piece in ("从而降低首字延迟", "同时复用前缀缓存以减少重复计算", "调度器在预填充阶段把请求拆成小块"):
        seg.tokenize(piece)
    assert [(t.text, t.start, t.end) for t in seg.tokenize(sentence)] == list(seg._tk.tokenize(sentence, HMM=True))


def test_units_count_cjk_chars_and_english_words() -> None:
    assert units("用 `lru_cache` 实现复用") == 1 + 1 + 4
    assert units("chunked prefill clamp") == 1
    assert units("") == 0


def test_no_english_words_in_jieba_dictionary() -> None:
    """English words added to jieba split longer words (cache → caches = cache|s); deckgen adds none."""
    from deckgen.segment import DOMAIN_WORDS

    assert all(not any(c.isascii() and c.isalpha() for c in w) for w in DOMAIN_WORDS)


def test_jieba_cache_goes_to_deckgen_cache_dir(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """jieba's dictionary cache is written to deckgen's own per-user folder, which deckgen creates."""
    from deckgen.segment import Segmenter

    target = tmp_path / "nested" / "cache"
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(target))
    seg = Segmenter()
    seg.tokenize("预分配")
    assert (target / "jieba.cache").is_file()


def test_jieba_says_nothing_on_stderr(tmp_path, monkeypatch, capfd) -> None:  # type: ignore[no-untyped-def]
    """jieba logs "Building prefix dict…" to stderr by default; deckgen silences it."""
    from deckgen.segment import Segmenter

    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(tmp_path / "fresh"))
    Segmenter().tokenize("首次初始化会构建前缀词典")
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


def test_numbers_with_units_stay_whole() -> None:
    assert "30 ms" in words("尾延迟降低 30 ms 左右")
    assert "20%" in words("吞吐提升 20% 以上")
