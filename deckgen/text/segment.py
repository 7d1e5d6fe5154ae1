"""Word segmentation that keeps code and English terms whole.

jieba splits ``enable_prefix_caching`` at every underscore and cannot produce a
word containing a space, so code spans, identifiers, paths and runs of English
words are cut out first as *protected* tokens, and jieba only sees the Chinese
text between them.  One dedicated ``jieba.Tokenizer`` is created per process,
with Chinese domain words added from a list (never English words: they would
split longer English words that contain them).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from math import log
from typing import Any, NamedTuple

from ..files.cachedir import private_cache_dir
from .postags import TagTable, load_tags
from .prefixdict import load_prefix_dict

# Chinese words of the field that jieba's dictionary lacks or splits
# (后端 → 后|端, 预分配 → 预|分配).  High frequency so that they beat
# competing dictionary words in context (移除了 → 移|除了 otherwise).
DOMAIN_VERBS = (
    "预分配", "移除", "解耦", "预填充", "重放", "调优", "反量化", "回退", "降级", "重计算",
    "重采样", "校验", "握手", "序列化", "反序列化", "超订阅", "显式化", "下沉", "收敛",
    "同步", "异步", "预热", "对齐", "融合", "通告", "守卫",
)
DOMAIN_NOUNS = (
    "后端", "前端", "显存", "分块预填充", "前缀缓存", "张量并行", "流水线并行", "数据并行",
    "专家并行", "投机解码", "推测解码", "首字延迟", "调度器", "算子", "内核", "量化", "访存",
    "采样器", "批处理", "微批处理", "连续批处理", "分页注意力", "缓冲区", "工作区", "快速失败",
    "热路径", "冷路径", "回退路径", "兼容性", "元数据", "重采样器", "前置校验", "条件守卫",
    "单例", "治本", "治标", "能力标志", "启动期", "运行时", "编译期", "捕获轴", "多阶段构建",
    "镜像", "依赖", "可选依赖", "膨胀", "越界", "共享专家", "死锁", "竞态", "幂等", "零拷贝",
    "并发", "多模态", "编码器", "解码器", "注意力", "稀疏", "吞吐", "隐式", "断言", "钩子", "基类",
    "子类", "接口", "协议", "契约", "跨层", "逐层", "双端", "单测", "用例", "测试用例",
    "污染源", "执行顺序", "线程状态", "指针表", "守护进程",
)
DOMAIN_WORDS = DOMAIN_VERBS + DOMAIN_NOUNS

_ASCII_WORD = r"(?:--?)?[A-Za-z0-9_$](?:[A-Za-z0-9_.:/+#%\-]*[A-Za-z0-9_%+#])?(?:\(\))?|#\d+|[!=<>]=|->|=>"
_ASCII_PHRASE = rf"(?:{_ASCII_WORD})(?: (?:{_ASCII_WORD}))*"
# Backtick code first, then runs of ASCII words: in Chinese prose a run of
# English words ("chunked prefill clamp", "digest-only COPY") is one term.
PROTECTED_RE = re.compile(rf"`[^`\n]+`|{_ASCII_PHRASE}", re.ASCII)

_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# One-character words that carry relations; HMM may glue them into an
# invented word (复用 CUDA 图以降低 → 图以 | 降低).
_MARKER_CHARS = frozenset("以为使让把而并用是")


class Token(NamedTuple):
    """A word with character offsets into the segmented text.

    A named tuple, not a frozen dataclass: a token is made for every word of every text segmented, and a tuple is
    made three times as fast (its fields read as fast).
    """

    text: str
    start: int
    end: int
    protected: bool = False
    """Code span, identifier or English term: atomic, never split or partly clozed."""

    @property
    def is_space(self) -> bool:
        return self.text.isspace()


@lru_cache(maxsize=16384)  # pure, and asked again and again for the same phrases
def units(text: str) -> int:
    """Length as a learner reads it: one per CJK character, one per English word or code span."""
    # One pass to cut the protected spans out and count them, one to count the CJK
    # characters left: CJK characters are counted one by one, so it does not matter
    # that removing the spans joins the pieces between them.
    rest, spans = PROTECTED_RE.subn("", text)
    return len(_CJK_RE.findall(rest)) + spans


class Segmenter:
    """jieba behind a small interface: ``tokenize`` and ``pos``."""

    def __init__(self) -> None:
        jieba = _import_jieba()

        # CRITICAL, not ERROR: a failed cache dump is logged with a traceback at ERROR.
        jieba.setLogLevel(logging.CRITICAL)
        self._tk: Any = jieba.Tokenizer()
        folder = self._folder = private_cache_dir()
        # Never jieba's own cache, which it would look for (and write) in the shared temporary folder
        # without a private one: the prefix dictionary is kept in deckgen's folder, in a faster form.
        self._tk.FREQ, self._tk.total = load_prefix_dict(self._tk, folder)
        self._tk.initialized = True
        for word in DOMAIN_WORDS:
            self._tk.add_word(word, freq=100_000, tag="nz")
        self._tags: TagTable | None = None
        self._own_tags = {**dict.fromkeys(DOMAIN_VERBS, "v"), **dict.fromkeys(DOMAIN_NOUNS, "n")}
        # Extraction and the quality gate segment the same sentences and phrases
        # several times (about 4 calls per distinct text); jieba is the cost.
        self._memo = lru_cache(maxsize=4096)(self._tokenize)
        # jieba cuts each run of Chinese (its ``re_han`` blocks, in practice a clause)
        # on its own, so the pieces of one sentence that are segmented separately
        # (a unit, its body, a clause, an answer) share their blocks: on the seed
        # files a quarter of the blocks jieba was given had been cut before.
        self._blocks_re = jieba.re_han_default
        self._block_memo = lru_cache(maxsize=8192)(self._cut_block)
        self._hmm_cut: Any = jieba.finalseg.cut

    def tokenize(self, text: str) -> list[Token]:
        """Split *text* into tokens (whitespace dropped), protected spans kept whole."""
        return list(self._memo(text))

    def first_tokens(self, text: str) -> Iterator[Token]:
        """The tokens of :meth:`tokenize`, in order, each segmented only when it is asked for.

        jieba cuts each block (a run of Chinese between other characters) on its own, and protected spans are found
        before it cuts, so the first words of a text are the first words of its first blocks: a caller that reads a
        text's first words pays for those blocks only.
        """
        for start, end, protected in _pieces(text):
            if protected:
                yield Token(text[start:end], start, end, True)
            else:
                yield from self._blocks(text[start:end], start)

    def last_tokens(self, text: str) -> Iterator[Token]:
        """The tokens of :meth:`tokenize` from the last one back, each segmented only when it is asked for (see
        :meth:`first_tokens`)."""
        for start, end, protected in reversed(_pieces(text)):
            if protected:
                yield Token(text[start:end], start, end, True)
            else:
                yield from self._blocks(text[start:end], start, backwards=True)

    def _blocks(self, chunk: str, offset: int, *, backwards: bool = False) -> Iterator[Token]:
        """The tokens of *chunk* (text with no protected span, at *offset*) block by block, as :meth:`_cut` makes them."""
        blocks = []
        for block in self._blocks_re.split(chunk):
            if block:
                blocks.append((block, offset))
                offset += len(block)
        new, token_class = tuple.__new__, Token
        for block, at in reversed(blocks) if backwards else blocks:
            words = self._block_memo(block)
            for word, start, end in reversed(words) if backwards else words:
                yield new(token_class, (word, at + start, at + end, False))

    def _tokenize(self, text: str) -> tuple[Token, ...]:
        tokens: list[Token] = []
        for start, end, protected in _pieces(text):
            if protected:
                tokens.append(Token(text[start:end], start, end, True))
            else:
                tokens.extend(self._cut(text[start:end], start))
        return tuple(tokens)

    def _cut(self, chunk: str, offset: int) -> list[Token]:
        # Block by block, as jieba's own ``cut`` does, so the tokens are the same.
        out: list[Token] = []
        append, new, token_class = out.append, tuple.__new__, Token
        for block in self._blocks_re.split(chunk):
            if block:
                for word, start, end in self._block_memo(block):
                    # Token(word, start, end) without the keyword handling of its __new__
                    append(new(token_class, (word, offset + start, offset + end, False)))
                offset += len(block)
        return out

    def _cut_block(self, block: str) -> tuple[tuple[str, int, int], ...]:
        """(word, start, end) of one jieba block, whitespace dropped.

        What ``Tokenizer.tokenize(block, HMM=True)`` gives, without its two layers of
        generators: *block* is one piece of ``re_han`` 's split, so jieba's ``cut`` would
        either hand it whole to its DAG+HMM cutter (:func:`_dag_words`) or, when it is not
        Chinese/alphanumeric, yield its whitespace runs and each other character alone.
        """
        out: list[tuple[str, int, int]] = []
        if not self._blocks_re.match(block):
            return tuple((char, i, i + 1) for i, char in enumerate(block) if not char.isspace())
        freq = self._tk.FREQ
        start = 0
        for word in _dag_words(block, freq, log(self._tk.total), self._hmm_cut):
            end = start + len(word)
            if end - start > 1 and not freq.get(word) and not _MARKER_CHARS.isdisjoint(word):
                for sub, s2, e2 in self._tk.tokenize(word, HMM=False):
                    out.append((sub, start + s2, start + e2))
            else:
                out.append((word, start, end))
            start = end
        return tuple(out)

    def pos(self, word: str) -> str:
        """The dictionary part-of-speech tag of *word* ('' when unknown).

        Only a look-up: jieba's posseg segments differently from ``tokenize``.
        """
        own = self._own_tags.get(word)
        if own is not None:
            return own
        if self._tags is None:
            self._tags = load_tags(self._tk, self._folder)  # kept in the private cache folder, if there is one
        tag = self._tags.get(word)
        self._own_tags[word] = tag  # the extractor asks about the same few thousand words again and again
        return tag

    def is_known(self, word: str) -> bool:
        return bool(self._tk.FREQ.get(word))


def _pieces(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, protected) of the protected spans of *text* and of the text between them, in order: what
    :meth:`Segmenter._tokenize` walks."""
    pieces: list[tuple[int, int, bool]] = []
    pos = 0
    for match in PROTECTED_RE.finditer(text):
        if match.start() > pos:
            pieces.append((pos, match.start(), False))
        pieces.append((match.start(), match.end(), True))
        pos = match.end()
    if pos < len(text):
        pieces.append((pos, len(text), False))
    return pieces


def _dag_words(block: str, freq: dict[str, int], logtotal: float, hmm_cut: Callable[[str], Iterable[str]]) -> list[str]:
    """The words jieba 0.42.1's ``Tokenizer.__cut_DAG`` makes of one Chinese block, made faster.

    jieba's own is most of segmentation's cost: ``get_DAG`` builds a dict of lists of word
    ends for every position, then ``calc`` takes the best path with ``max`` over a generator
    of tuples.  Here the two are one right-to-left pass over the same dictionary look-ups,
    keeping the best (score, end) as it goes: the same floating-point sums in the same order,
    and on a tie the longer word, as ``max`` over (score, end) tuples picks.  Runs of
    one-character words are then handed to the HMM exactly as jieba does.
    """
    get = freq.get
    n = len(block)
    score = [0.0] * (n + 1)
    end = [0] * (n + 1)
    for k in range(n - 1, -1, -1):
        best: float | None = None
        best_end = k + 1
        i = k + 1
        f = get(block[k])
        while f is not None:  # every prefix of a dictionary word is in FREQ (with 0 if not a word)
            if f:
                s = log(f) - logtotal + score[i]
                if best is None or s >= best:
                    best, best_end = s, i
            if i >= n:
                break
            i += 1
            f = get(block[k:i])
        if best is None:  # no word starts here: the character alone, at jieba's frequency 1
            best = log(1) - logtotal + score[k + 1]
        score[k], end[k] = best, best_end
    words: list[str] = []
    buf = ""
    x = 0
    while x < n:
        y = end[x]
        if y - x == 1:
            buf += block[x]
        else:
            if buf:
                _flush(buf, get, hmm_cut, words)
                buf = ""
            words.append(block[x:y])
        x = y
    if buf:
        _flush(buf, get, hmm_cut, words)
    return words


def _flush(buf: str, get: Callable[[str], int | None], hmm_cut: Callable[[str], Iterable[str]], words: list[str]) -> None:
    """A run of one-character words: one word, the HMM's words when it is not a known word, else characters."""
    if len(buf) == 1:
        words.append(buf)
    elif not get(buf):
        words.extend(hmm_cut(buf))
    else:
        words.extend(buf)


def _import_jieba() -> Any:
    """``import jieba``, without letting it import ``pkg_resources``.

    jieba only wants pkg_resources to open its dictionary, and falls back to a
    plain ``open`` next to its own file when the import fails; pkg_resources
    costs 0.13-0.2 s to import (and a DeprecationWarning).  It is hidden only for
    the duration of this import, and only when nothing imported it before.
    """
    if "jieba" in sys.modules:
        return sys.modules["jieba"]
    hide = "pkg_resources" not in sys.modules
    if hide:
        sys.modules["pkg_resources"] = None  # type: ignore[assignment]  # makes `import pkg_resources` fail
    try:
        import jieba
    finally:
        if hide and sys.modules.get("pkg_resources", False) is None:
            del sys.modules["pkg_resources"]
    return jieba


@lru_cache(maxsize=1)
def get_segmenter() -> Segmenter:
    """The process-wide segmenter (jieba initialises once, ~0.4 s)."""
    return Segmenter()
