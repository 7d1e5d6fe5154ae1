"""Clauses of review text: token spans that know their clause boundaries, and argument trimming.

Relation arguments are cut from clauses; :func:`clean` trims what a cut drags along
(parentheticals, connectives, the reviewer's frame "关键设计决策是…", dangling particles).
"""

from __future__ import annotations

import re

from .segment import Token

CLAUSE_PUNCT = frozenset("，,；;：:。！？!?—")
CONNECTIVES = frozenset({
    "并", "且", "同时", "而", "也", "还", "此外", "另外", "再", "并且", "而且", "以及", "但", "但是",
    "然后", "即", "就", "都", "又", "既", "则", "特别是", "尤其是", "因为", "由于", "所以", "因此",
    "虽然", "尽管", "不过", "其中", "最终", "只是", "仅仅", "于是", "“", "「",
})
_BING_WORDS = frozenset("行发列存入集联购网轨")
"""What follows 并 in words that start with it (并行, 并发, 并列): there 并 is no connective."""
_COME_BACK = frozenset("重起出回过进上下原")
_CHANGED = frozenset("变改少多慢快大小高低长短满空错乱")
"""One-character verbs of change that need their 了 at the end of a clause."""
TRAILING_PARTICLES = ("了", "的", "来", "也", "，", ",", "、", "；", ";", " ")
SELF_REF_RE = re.compile(r"^(?:(?:本|此|该|这个|这一?|这次)\s*)?(?:PR|改动|变更|修改|修复|补丁)(?:\s|$|虽|本身)"
                         r"|^(?:新实现|新版本?|新方案|新写法)(?:\s|$|让|使|把|将)")
# The reviewer talking, not a decision: "建议作为模板案例", "值得…".
REVIEWER_SPEAK = re.compile(r"^(?:建议|值得|推荐|可以|需要|应该|关注|重点|留意|注意|阅读|参考)")
PRONOUN_RE = re.compile(r"^(?:它们?|这(?:些|个)?|此|其)")
# Verbs that end the means phrase X in 用/通过 X V….
LINK_VERBS = frozenset({
    "实现", "做", "来", "完成", "进行", "达到", "做到", "保证", "确保", "统一", "管理", "验证", "校验",
    "处理", "控制", "替代", "取代", "代替", "避免", "防止", "降低", "减少", "提升", "提高", "支持",
    "同步", "暴露", "解决", "兼容", "覆盖", "模拟", "记录", "区分", "隔离", "复用", "触发", "检查",
    "检测", "拦截", "捕获", "生成", "计算", "替换", "消除", "加速", "保持", "还原", "限制", "排除",
})
NP_BREAKERS = frozenset({"在", "于", "对", "向", "从", "把", "将", "同时", "以", "并", "来", "再", "从而", "按", "经", "沿", "换",
                         "为", "给", "让", "使", "被", "由", "如何", "是", "都", "也", "就", "却"})
COMPLEMENTS = frozenset({"在", "到", "成", "为", "给", "至", "进"})
PASSED_SENSE = frozenset({"了", "所有", "全部", "审查", "测试", "评审", "CI", "review"})
MEANS_OPENERS = frozenset({"用", "使用", "利用", "借助", "基于", "并用", "改用"})
EFFECT_VERBS = frozenset({"减少", "降低", "提升", "提高", "加快", "节省", "简化", "缩短", "消除", "避免"})
CHOOSE_VERBS = frozenset({"采用", "选择", "选用", "使用", "改用", "引入", "用", "以", "将", "把", "并用"})
_PARENS_RE = re.compile(r"（[^（）]*）|\((?=[^()]*[\u4e00-\u9fff])[^()]*\)")
QUOTE_PAIRS = {"“": "”", "「": "」", "（": "）", "(": ")"}


class Span:
    """Tokens of one piece of review text with clause-aware helpers.

    Every relation matcher asks for clause boundaries around many tokens, so
    the boundaries and the "only connectives so far" flags are computed once,
    in one pass, when first asked for (most spans hold no marker at all).
    """

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.words = [t.text for t in tokens]
        self.vocabulary = frozenset(self.words)
        self._bounds: tuple[list[bool], list[int], list[int], list[bool]] | None = None

    def _clause_bounds(self) -> tuple[list[bool], list[int], list[int], list[bool]]:
        """Per token: clause punctuation; per position 0..n: clause start, clause end, only connectives before."""
        if self._bounds is not None:
            return self._bounds
        words, n = self.words, len(self.words)
        punct = [w in CLAUSE_PUNCT and not t.protected for w, t in zip(words, self.tokens)]
        starts = [0] * (n + 1)
        opening = [True] * (n + 1)
        for i, word in enumerate(words):
            if not punct[i]:
                starts[i + 1] = starts[i]
                opening[i + 1] = opening[i] and word in CONNECTIVES
            else:
                starts[i + 1] = i + 1
        ends = list(range(n + 1))
        for i in range(n - 1, -1, -1):
            if not punct[i]:
                ends[i] = ends[i + 1]
        self._bounds = (punct, starts, ends, opening)
        return self._bounds

    def cut(self, i: int, j: int) -> str:
        if i >= j:
            return ""
        return self.text[self.tokens[i].start : self.tokens[j - 1].end]

    def word(self, i: int) -> str:
        return self.words[i] if 0 <= i < len(self.words) else ""

    def positions(self, words: frozenset[str]) -> list[int]:
        """Indices of the tokens whose text is one of *words*, in order."""
        if words.isdisjoint(self.vocabulary):
            return []
        return [i for i, word in enumerate(self.words) if word in words]

    def is_punct(self, i: int) -> bool:
        return self._clause_bounds()[0][i]

    def clause_start(self, i: int) -> int:
        starts = self._clause_bounds()[1]
        return starts[i] if 0 <= i < len(starts) else i

    def clause_end(self, i: int) -> int:
        ends = self._clause_bounds()[2]
        return ends[i] if 0 <= i < len(ends) else i

    def at_clause_start(self, i: int) -> bool:
        opening = self._clause_bounds()[3]
        return opening[i] if 0 <= i < len(opening) else i <= 0

    def previous_clause(self, i: int) -> tuple[int, int]:
        """Token range of the clause before the one holding *i* (skipping a dash pair)."""
        punct = self._clause_bounds()[0]
        end = self.clause_start(i) - 1
        while end > 0 and punct[end - 1]:
            end -= 1
        if end <= 0:
            return (0, 0)
        return (self.clause_start(end), end)


# "关键设计决策是…", "第三处是…", "核心亮点在于…": the reviewer's frame, not the decision.
_META_LEAD = re.compile(r"^[^，,。；;“「]{0,14}?(?:决策|设计|核心|关键|做法|思路|亮点|要点|改动|重点|第[一二三四五六七八九十]+[处点项个条])(?:是|在于|为)"
                        r"|^[^，,。；;“「]{0,6}?(?:值得一提|需要注意|要注意|值得注意|注意)的是"
                        r"|^(?:需要|要|请)?注意(?:到)?(?=[^的力])"
                        r"|^(?:另有|还有|另外还有)(?:一个|一种|一项)?(?:可选的)?")
# "它用指数退避替代…": the pronoun subject of a means clause adds nothing.
_PRONOUN_SUBJECT = re.compile(r"^(?:它|其|这|作者|(?:这个|这一|这次|本|该|此)\s*(?:改动|PR|变更|修改))\s*(?=用|把|通过|以|在|将|会|也|还|并)")


_FILLER_RE = re.compile(r"^这样(?:做)?(?:能够|能|可以|就|便)?")
_LEADING_WORDS = CONNECTIVES - {"“", "「"}
_LEADING_SIZES = sorted({len(w) for w in _LEADING_WORDS}, reverse=True)


_VAGUE_POINT = re.compile(r"(?:时间点|时机|时刻|位置|地方)$")


def _without_parenthetical(match: re.Match[str]) -> str:
    """Nothing, or a space where Latin script would otherwise run into Chinese ("`flash_attn`（…）手动" → "… 手动").

    An aside that says which point a vague word means stays ("一个明确的时间点（在最终 InputBatch 构建之后）").
    """
    text, start, end = match.string, match.start(), match.end()
    if _VAGUE_POINT.search(text, 0, start):
        return match.group()
    if "," in match.group() or "，" in match.group() or text.count("“", 0, start) > text.count("”", 0, start):
        return match.group()  # a tuple "(图像哈希, 块内起始偏移)", or an aside inside a quote: content, not an aside
    before, after = text[start - 1:start], text[end:end + 1]
    latin = re.compile(r"[A-Za-z0-9_`)\]]")
    word = re.compile(r"[A-Za-z0-9_`(\[\u3400-\u9fff]")  # no space before punctuation: "`X`（…），" → "`X`，"
    return " " if before and word.match(after) and (latin.match(before) or latin.match(after)) else ""


def clean(text: str) -> str:
    """Trim a relation argument: no parentheticals, no leading connective, no dangling particle."""
    text = _PARENS_RE.sub(_without_parenthetical, text).strip()
    text = _META_LEAD.sub("", text).strip()
    text = _PRONOUN_SUBJECT.sub("", text).strip()
    filler = _FILLER_RE.match(text)
    if filler and filler.end() < len(text) and text[filler.end()] not in "做的":
        text = text[filler.end() :].strip()
    changed = True
    while changed and text:
        changed = False
        # Longest connective first; at most one connective of each length can start the text.
        for size in _LEADING_SIZES:
            if text[:size] in _LEADING_WORDS and len(text) > size and not text[size].isascii() \
                    and not (text[:size] == "并" and text[size] in _BING_WORDS):  # 并行度, 并发
                text = text[size:].lstrip()
                changed = True
                break
        # The one-call check first: most arguments end in none of them.
        for tail in TRAILING_PARTICLES if text.endswith(TRAILING_PARTICLES) else ():
            if tail == "了" and text[-2:-1] in _CHANGED or tail == "来" and text[-2:-1] in _COME_BACK:
                continue  # "相对位置变了", "推倒重来": without the particle the verb is cut
            if text.endswith(tail) and len(text) > len(tail):
                text = text[: -len(tail)].rstrip()
                changed = True
    if text[:1] in ("“", "「") and text[-1:] == QUOTE_PAIRS[text[0]] and text.count(text[0]) == 1:
        text = text[1:-1].strip()
    return "" if text in CONNECTIVES else text


def is_self_reference(text: str) -> bool:
    """Whether *text* names the PR itself ("本 PR 是一个…"), which makes a useless answer."""
    return bool(SELF_REF_RE.match(text))
