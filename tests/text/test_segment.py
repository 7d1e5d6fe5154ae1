"""Segmentation keeps code and English terms whole and knows the field's Chinese words."""

from __future__ import annotations

import pytest

from deckgen.text.segment import get_segmenter, units


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
    from deckgen.text.segment import DOMAIN_WORDS

    assert all(not any(c.isascii() and c.isalpha() for c in w) for w in DOMAIN_WORDS)


def test_jiebas_dictionary_is_kept_in_deckgen_cache_dir(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """jieba's prefix dictionary is kept in deckgen's own per-user folder, which deckgen creates, and read back."""
    from deckgen.text import prefixdict
    from deckgen.text.segment import Segmenter, _import_jieba

    target = tmp_path / "nested" / "cache"
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(target))
    assert [t.text for t in Segmenter().tokenize("预分配显存")] == ["预分配", "显存"]
    assert [p.name.split(".")[0] for p in target.iterdir()] == ["deckgen-prefixdict"]  # not jieba's own cache
    # jieba's own cache, which deckgen kept there before, goes when deckgen first keeps the dictionary its way.
    older = tmp_path / "older"
    older.mkdir(mode=0o700)
    (older / "jieba.cache").write_bytes(b"what deckgen kept before")
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(older))
    Segmenter()
    assert [p.name.split(".")[0] for p in older.iterdir()] == ["deckgen-prefixdict"]

    def not_again(*args: object) -> None:
        raise AssertionError("the dictionary was parsed again")

    monkeypatch.setattr(prefixdict, "write_cache_file", not_again)
    monkeypatch.setattr(_import_jieba().Tokenizer, "gen_pfdict", not_again)
    assert [t.text for t in Segmenter().tokenize("预分配显存")] == ["预分配", "显存"]


def test_jieba_says_nothing_on_stderr(tmp_path, monkeypatch, capfd) -> None:  # type: ignore[no-untyped-def]
    """jieba logs "Building prefix dict…" to stderr by default; deckgen silences it."""
    from deckgen.text.segment import Segmenter

    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(tmp_path / "fresh"))
    Segmenter().tokenize("首次初始化会构建前缀词典")
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


def test_numbers_with_units_stay_whole() -> None:
    assert "30 ms" in words("尾延迟降低 30 ms 左右")
    assert "20%" in words("吞吐提升 20% 以上")


# -- the fast paths against the rules they replaced ----------------------------------------

from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from deckgen.text.segment import _CJK_RE, _MARKER_CHARS, PROTECTED_RE, Token  # noqa: E402

# Pieces that meet at every kind of boundary: dictionary and domain words, the one-character
# markers HMM glues into invented words, unknown CJK (HMM), CJK outside jieba's block range
# (㐀, 鿰), ASCII words, code, digits, whitespace of several kinds, punctuation.
_PIECES = st.sampled_from([
    "复用", "CUDA", "图以降低", "启动开销", "后端", "预分配", "显存", "而非", "以", "为", "使", "把", "是",
    "调度器", "把请求拆成小块", "从而", "降低首字延迟", "谷歌翼龙", "㐀", "鿰", "enable_prefix_caching", "`x, y`", "`预分配 x`",
    "1.5x", " ", "  ", "\n", "\r\n", "\t", "\u3000", "，", "。", "：", "-", "_", "#12", "(", "）", "a", "Z9",
])
_TEXTS = st.lists(_PIECES, max_size=12).map("".join)


def _old_cut_block(block: str) -> tuple[tuple[str, int, int], ...]:
    """The rule :meth:`Segmenter._cut_block` had: jieba's own ``tokenize``, then the marker re-cut."""
    tk = get_segmenter()._tk
    out: list[tuple[str, int, int]] = []
    for word, start, end in tk.tokenize(block, HMM=True):
        if word.isspace():
            continue
        if len(word) > 1 and not tk.FREQ.get(word) and _MARKER_CHARS & set(word):
            out.extend((sub, start + s2, start + e2) for sub, s2, e2 in tk.tokenize(word, HMM=False))
            continue
        out.append((word, start, end))
    return tuple(out)


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_block_cutter_gives_what_jieba_tokenize_gave(text: str) -> None:
    seg = get_segmenter()
    for block in seg._blocks_re.split(text):
        if block:
            assert seg._cut_block(block) == _old_cut_block(block)


def _old_tokenize(text: str) -> list[Token]:
    """The rule :meth:`Segmenter._tokenize` had: dataclass tokens, jieba's ``tokenize`` per block."""
    tokens: list[Token] = []

    def cut(chunk: str, offset: int) -> None:
        for block in get_segmenter()._blocks_re.split(chunk):
            tokens.extend(Token(w, offset + s, offset + e) for w, s, e in _old_cut_block(block) if block)
            offset += len(block)

    pos = 0
    for match in PROTECTED_RE.finditer(text):
        cut(text[pos : match.start()], pos)
        tokens.append(Token(match.group(), match.start(), match.end(), protected=True))
        pos = match.end()
    cut(text[pos:], pos)
    return tokens


@settings(max_examples=200, deadline=None)
@given(_TEXTS)
def test_tokens_are_the_dataclass_tokens_jieba_gave(text: str) -> None:
    """Tokens made without the dataclass __init__ equal, hash and print as the old ones."""
    new, old = get_segmenter()._tokenize(text), _old_tokenize(text)
    assert list(new) == old
    assert [(hash(t), repr(t)) for t in new] == [(hash(t), repr(t)) for t in old]


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_units_counts_as_split_and_findall_did(text: str) -> None:
    old = sum(len(_CJK_RE.findall(piece)) for piece in PROTECTED_RE.split(text)) + len(PROTECTED_RE.findall(text))
    assert units.__wrapped__(text) == old


# Characters that make many overlapping dictionary words (and runs the HMM must cut), and
# the alphanumerics jieba's blocks hold too.
_BLOCK_CHARS = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理世车aA1_.%" 


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=_BLOCK_CHARS, min_size=1, max_size=40))
def test_dag_words_are_jiebas_cut_dag(block: str) -> None:
    """The fused DAG + best path gives the words of jieba's own ``__cut_DAG`` (ties, unknown runs, HMM)."""
    from math import log

    from deckgen.text.segment import _dag_words

    tk = get_segmenter()._tk
    assert _dag_words(block, tk.FREQ, log(tk.total), jieba_finalseg_cut()) == list(tk._Tokenizer__cut_DAG(block))


def jieba_finalseg_cut():  # type: ignore[no-untyped-def]
    import jieba.finalseg

    return jieba.finalseg.cut


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(alphabet="甲乙丙丁", min_size=1, max_size=3), st.sampled_from([0, 1, 2, 3, 5]), max_size=12),
       st.text(alphabet="甲乙丙丁戊", min_size=1, max_size=12))
@example({"甲乙": 1, "丙": 1, "甲": 1, "乙丙": 1}, "甲乙丙")  # 甲乙|丙 and 甲|乙丙 score the same sum
def test_dag_words_break_ties_as_jieba_does(words: dict[str, int], block: str) -> None:
    """With a small dictionary of equal frequencies, paths tie exactly: jieba's ``max`` takes the longer word."""
    from math import log

    import jieba

    from deckgen.text.segment import _dag_words

    freq = dict(words)
    for word in words:  # every prefix of a word is in the dictionary, as jieba's own loader makes it
        for end in range(1, len(word)):
            freq.setdefault(word[:end], 0)
    tk = jieba.Tokenizer()
    tk.FREQ, tk.total, tk.initialized = freq, sum(freq.values()) + 7, True
    assert _dag_words(block, freq, log(tk.total), jieba_finalseg_cut()) == list(tk._Tokenizer__cut_DAG(block))


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_tokens_read_from_either_end_are_those_of_the_whole_text(text: str) -> None:
    """A caller reading a text's first or last words segments only its blocks there: the same tokens, offsets
    included, as segmenting all of it."""
    seg = get_segmenter()
    whole = seg.tokenize(text)
    assert list(seg.first_tokens(text)) == whole
    assert list(seg.last_tokens(text)) == whole[::-1]
