"""Relations carried by connectives (而非, 以避免, 从而, 通过…实现 …), matched on tokens.

Markers are matched on jieba tokens, never as substrings: 可以/所以/以及 are
single tokens and so never read as 以; 而非常 is 而|非常; 通过了 is "passed".
Each match gives a :class:`Fact` with the left argument X (decision, means,
chosen option) and the right argument Y (effect, purpose, alternative).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache

from ..text.clauses import (
    CHOOSE_VERBS,
    COMPLEMENTS,
    EFFECT_VERBS,
    LINK_VERBS,
    MEANS_OPENERS,
    NP_BREAKERS,
    PASSED_SENSE,
    PRONOUN_RE,
    QUOTE_PAIRS,
    REVIEWER_SPEAK,
    Span,
    clean,
    is_self_reference,
)
from ..text.segment import Segmenter, Token, units
from ..types import Fact, Relation

# The tokens each matcher can fire on: a matcher looks only at these positions
# (and is skipped when none occurs), instead of testing every token.  A marker
# word a matcher learns must be added to its set here too, or it never fires.
_MANNER = frozenset({"手动", "自动", "异步", "同步", "动态", "静态", "默认", "隐式", "显式", "按需", "批量", "原地"})
"""Words jieba tags as nouns that say how before a verb (通过 X 手动开启: X, not "X 手动")."""
_HARM = re.compile(r"OOM|浪费|崩溃|出错|失败|卡死|变慢|泄漏|乱码|超时|死锁")
"""An effect that is harm: the clause before it is the problem, not a decision."""
_MAYBE = re.compile(r"可能|也许|或许")
_WHOLE_VERBS = frozenset({"完成", "形成", "构成", "组成", "造成", "生成", "达成", "促成", "认为", "成为", "作为", "行为"})
"""Verbs ending in 成/为 that take no complement: "合并成一个通信组完成" is 合并成 + 一个通信组, not + 完成."""
_NEGATIONS = frozenset({"不再", "不是", "并不", "不去", "并非", "没有", "不"})
"""What opens the rejected option of "不再/并不/没有 A，而是 B"."""
_SWAP_VERBS = frozenset({"改为", "改成", "换成"})
_FORMERLY = re.compile(r"^\s*(?:原先|原来|此前|之前|以前|过去)(?:的)?\s*")
_CONTRAST_WORDS = frozenset({"而非", "而不是", "而", "而是", "从", "替代", "取代", "代替", "替换"} | _SWAP_VERBS)
_PURPOSE_WORDS = frozenset({"以", "以便", "用以", "以免", "以防", "目的", "便于", "方便", "以便于", "用于", "避免", "防止"})
_MEANS_WORDS = frozenset({"通过", "采用", "引入", "借助", "利用"} | MEANS_OPENERS)
_RESULT_WORDS = frozenset({"从而", "进而", "无需", "不必", "不再需要", "确保", "保证", "使得", "让", "使", "保障", "消除"}
                          | EFFECT_VERBS)
_CONDITION_WORDS = frozenset({"时", "时候", "之时", "若", "如果", "一旦", "假如"})
_CAUSE_WORDS = frozenset({"由于", "因为", "是因为"})
_GAIN_WORDS = ("好处", "优点", "收益", "优势")
_COST_WORDS = ("代价", "缺点", "权衡", "副作用", "不足", "风险")
_TRADEOFF_WORDS = frozenset(_GAIN_WORDS + _COST_WORDS)
_SHOW_WORDS = frozenset({"体现", "展示", "反映", "表明", "展现"})
_SOLVE_WORDS = frozenset({"解决"})
_ROLE_WORDS = frozenset({"作为"})
_BA = frozenset({"把", "将"})  # 将 as 把 ("将 X 集成到 Y"); "将会" has no object and complement after it
_IN_ORDER_TO = frozenset({"为了"})
_ZHEYANG = frozenset({"这样"})
_PARTIAL_LEFT = re.compile(r"^\s*(?:并且|并|再|使得|使|让)")
"""A clause before an effect that is only the last step of a longer one ("…折叠成一个算子，并在 X 中替换，使…"),
or an effect itself: what it leads to is not its own doing."""
_NOT_DOING = re.compile(r"^(?:不再|不|无需|不必|没有)")
_DEMONSTRATIVE = re.compile(r"^(?:这些|那些|这个|那个|这|那|该|其|它们?)")
_CONSEQUENCE_IN = re.compile(r"因此|因而|从而|所以|于是")
_NEXT_STEP = frozenset({"再", "并", "然后", "随后"})
_REJECTED_OPTION = re.compile(r"^\s*(?:而)?(?:非|不是|并非|不|没有)")

_PRONOUN_ARG = re.compile(r"(?:它|这|此|其|这是(?:一个|一种)?|这样做|此举|这一做法|这种做法|这样做的)")
"""A pronoun standing for the decision the sentence is about; 它们 (several things: "把它们写进缓存") never does."""
_AGENT_TAIL = re.compile(r"\s*(?:因此|于是|所以|也|就|都|则|便|再|还)+$")
_AUTHORS = frozenset({"作者", "实现者", "开发者", "我们", "维护者"})
_OTHERWISE = ("否则", "不然", "反之")
_PARALLEL = ("又", "也", "并且", "还")
_ANAPHOR_TAIL = re.compile(r"(?:借此|因此|由此|以此|据此|为此)(?:了)?$")
_BY_MEANS = re.compile(r"[^，,；;。]*?(?:的(?:形式|方式|粒度|方法)|为(?:单位|界|准)|换取|换来|换)")
_ALSO_TAIL = re.compile(r"(?:也|都|就|则|便|并)$")
_MIGRATION_TAIL = re.compile(r"的(?:迁移|切换|转变|改造|转换)$")
_HOW = re.compile(r"^如何")
_FILLER_LEFT = re.compile(r"^(这样做|此举|这一做法|这种做法)(?:可以|能够?|就)$")
_NEGATED_AGENT = re.compile(r"避免|防止|不|无需|免得|以免|禁止")
_SWAP = re.compile(r"^(?:换成|改成|改为|替换为|替换成|换为|切换为|切换到)了?\s*(.+)$")
_OWNER_TAIL = re.compile(r"的$")
_CHOSE_LEAD = re.compile(r"^(?:作者|实现者|我们)?(?:选择|决定|采用|改为)")
_SOLUTION_TAIL = re.compile(r"的[^的，,]{0,6}(?:方案|办法|做法|设计|手段)$")
_CHOOSE_LONGEST_FIRST = sorted(CHOOSE_VERBS, key=len, reverse=True)
_PRACTICE_BREAK = re.compile(r"[，,；;。]|是否")


Matcher = Callable[["RelationFinder", Span, set[int]], Iterator[tuple[Fact, set[int]]]]


class RelationFinder:
    """Finds relation facts in review text."""

    def __init__(self, seg: Segmenter) -> None:
        self.seg = seg
        # word → flag: the same few thousand words are asked about again and again.
        self._verbs: dict[str, bool] = {}
        self._modifiers: dict[str, bool] = {}

    def is_verb(self, token: Token) -> bool:
        if token.protected:
            return False
        flag = self._verbs.get(token.text)
        if flag is None:
            tag = self.seg.pos(token.text)
            flag = self._verbs[token.text] = tag.startswith("v") and tag != "vn"
        return flag

    def is_modifier(self, token: Token) -> bool:
        """Adverb-like: a modifier POS, or a Chinese word jieba has no tag for (显式, 按需 …)."""
        if token.protected:
            return False
        flag = self._modifiers.get(token.text)
        if flag is None:
            flag = self._modifiers[token.text] = self.seg.pos(token.text) in ("d", "a", "ad", "b", "") \
                or token.text in _MANNER
        return flag

    def find(self, text: str, line: int, topic: str = "") -> list[Fact]:
        """Relation facts in *text*; a leading pronoun argument is replaced by *topic*."""
        span = Span(text, self.seg.tokenize(text))
        facts: list[Fact] = []
        used: set[int] = set()
        for matcher, words in _MATCHERS:
            if words.isdisjoint(span.vocabulary):
                continue
            for fact, markers in matcher(self, span, used):
                used.update(markers)
                facts.append(self._finish(fact, topic, line, text))
        return [f for f in facts if f.subject and f.detail and not REVIEWER_SPEAK.match(f.subject)]

    def _finish(self, fact: Fact, topic: str, line: int, sentence: str) -> Fact:
        subject = fact.subject
        # "…的零热路径方案，它把…" / "“捕获轴”机制，这是一个解决…的方案": the pronoun is the topic.
        name = fact.name
        pronoun = _PRONOUN_ARG
        if topic and pronoun.fullmatch(subject):
            subject = topic
        if topic and (pronoun.fullmatch(name) or (fact.relation == Relation.ACTION and not name)):
            name = topic  # "X 设计，将 A 集成到 B": the topic is who does it
        return Fact(fact.relation, subject, fact.detail, sentence, line, fact.marker, fact.verb, name,
                    prefix=fact.prefix)

    # -- arguments -------------------------------------------------------------------

    def _left(self, span: Span, m: int) -> str:
        """X: the clause up to the marker, or the whole previous clause when the marker opens its clause.

        An X that opens with 否则 ("超过阈值才按缓存路由，否则退回最短队列，避免 Y") takes its condition along.
        """
        a, b = span.previous_clause(m) if span.at_clause_start(m) else (span.clause_start(m), m)
        left = clean(span.cut(a, b))
        if span.at_clause_start(m) and _NOT_DOING.match(left) and a > 0:
            # "把数据直接包装成缓冲区，不再额外拷贝一份，避免两份数据": what avoids it is the step taken
            c, d = span.previous_clause(a)
            if d > c and not _NOT_DOING.match(clean(span.cut(c, d))):
                return clean(span.cut(c, d))
        if left.startswith(_OTHERWISE) and a > 0:
            c, d = span.previous_clause(a)
            left = clean(span.cut(c, d)) + "，" + left
        return left

    def _right(self, span: Span, m: int, stops: set[int]) -> str:
        end = span.clause_end(m)
        # The first marker already used inside the clause ends the argument.
        end = min((k for k in stops if m <= k < end), default=end)
        return clean(span.cut(m, end))

    def _after(self, span: Span, m: int, *words: str) -> int:
        """Index after the marker at *m*, skipping aspect particles such as 了."""
        m += 1
        while span.word(m) in words:
            m += 1
        return m

    def _np_end(self, span: Span, start: int, stop: int) -> int:
        """End of the noun phrase X in 用/通过 X V…: before a preposition, else a link verb, else a verb."""
        depth = 0
        first_break = first_verb = None
        for k in range(start, stop):
            tok = span.tokens[k]
            if tok.text in QUOTE_PAIRS:
                depth += 1
            elif tok.text in QUOTE_PAIRS.values():
                depth -= 1
            if depth or k == start:
                continue
            if tok.text in LINK_VERBS and not tok.protected and span.word(k + 1) != "的":  # 统一的入口: no verb
                return first_break if first_break is not None else k
            follows_verb = k + 1 < stop and self.is_verb(span.tokens[k + 1])
            if first_break is None and (tok.text in NP_BREAKERS or (self.is_modifier(tok) and follows_verb)):
                first_break = k
            if first_verb is None and self.is_verb(tok):
                first_verb = k
        for candidate in (first_break, first_verb):
            if candidate is not None:
                return candidate
        return stop

    # -- matchers: each yields (fact, marker token indices) ---------------------------

    def _contrast(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        toks = span.tokens
        for m in span.positions(_CONTRAST_WORDS):
            tok, nxt = toks[m], span.word(m + 1)
            if tok.text in ("而非", "而不是") or (tok.text == "而" and nxt in ("非", "不是")):
                width = 1 if tok.text in ("而非", "而不是") else 2
                if span.at_clause_start(m):
                    a, b = span.previous_clause(m)
                else:
                    a, b = span.clause_start(m), m
                verb = ""
                for k in range(b - 1, a - 1, -1):
                    if toks[k].text in CHOOSE_VERBS:
                        verb, a = toks[k].text, k + 1
                        break
                chosen = clean(span.cut(a, b))
                if _CONSEQUENCE_IN.search(chosen):
                    continue  # "段因此可以“长大”，而不是另起一段": what followed from the decision, not an option
                yield Fact(Relation.CONTRAST, chosen, self._right(span, m + width, set()),
                           "", 0, marker=span.cut(m, m + width), verb=verb), {m}
            elif tok.text == "而是" and span.at_clause_start(m):
                a, b = span.previous_clause(m)
                negation = next((k for k in range(a, b) if span.word(k) in _NEGATIONS), None)
                if negation is not None:
                    start = negation + 2 if span.word(negation + 1) == "去" else negation + 1  # 并不去解析 X
                    rejected = clean(span.cut(start, b))
                    chosen = clean(span.cut(m + 1, span.clause_end(m)))
                    # "位掩码也不再由 worker 计算，而是…": what the sentence is about goes into the question.
                    about = clean(_ALSO_TAIL.sub("", span.cut(a, negation)))
                    if rejected and chosen:
                        yield Fact(Relation.CONTRAST, chosen, rejected, "", 0, marker=f"{span.word(negation)}…而是",
                                   prefix=about if units(about) <= 10 else ""), {m}
            elif tok.text in _SWAP_VERBS and m not in used and _FORMERLY.match(span.cut(span.clause_start(m), m)):
                # "原先的 `NVCC_THREADS` 等环境变量改为 `-DNVCC_THREADS=8` 这样的 CMake define"
                old = clean(_FORMERLY.sub("", span.cut(span.clause_start(m), m)))
                new = clean(span.cut(m + 1, span.clause_end(m)))
                if old and new and units(old) <= 12 and units(new) <= 16:
                    yield Fact(Relation.CONTRAST, new, old, "", 0, marker=f"原先…{tok.text}"), {m}
            elif tok.text == "从" and m not in used:
                stop = span.clause_end(m)
                to = next((k for k in range(m + 2, stop) if toks[k].text in ("到", "改为", "改成", "迁移到", "切换到", "换成")), None)
                if to is not None and to + 1 < stop:
                    old, new = clean(span.cut(m + 1, to)), clean(span.cut(to + 1, stop))
                    new = _MIGRATION_TAIL.sub("", new)
                    if units(old) <= 12 and units(new) <= 12:
                        yield Fact(Relation.CONTRAST, new, old, "", 0, marker=f"{tok.text}…{toks[to].text}"), {m, to}
            elif tok.text in ("替代", "取代", "代替", "替换") and not tok.protected and m + 1 < len(toks):
                start = span.clause_start(m)
                opener = next((k for k in range(m - 1, start - 1, -1)
                               if toks[k].text in ("用", "以", "使用", "采用", "改用")), None)
                subject = span.cut(opener + 1, m) if opener is not None else span.cut(start, m)
                if _ANAPHOR_TAIL.search(subject.strip()):
                    continue  # "llama.cpp 借此取代了 Y": what replaced Y is the 此, said in an earlier clause
                yield Fact(Relation.CONTRAST, clean(subject), self._right(span, self._after(span, m, "了"), set()), "", 0,
                           marker=tok.text, verb=toks[opener].text if opener is not None else ""), {m}

    def _purpose(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        toks = span.tokens
        for m in span.positions(_PURPOSE_WORDS):
            tok = toks[m]
            if m in used or tok.protected or m == 0:
                continue
            k = m + 1
            while k < len(toks) and self.is_modifier(toks[k]):
                k += 1
            verb_next = k < len(toks) and self.is_verb(toks[k])
            if tok.text == "以" and _BY_MEANS.match(span.cut(m + 1, span.clause_end(m))):
                continue  # 以独立库的形式迭代, 以简单换取隔离: 以 says how, not what for
            if tok.text in ("以", "以便", "用以") and verb_next:
                if toks[k].text in ("避免", "免", "防止", "杜绝"):
                    yield Fact(Relation.AVOID, self._left(span, m), self._right(span, k + 1, used), "", 0,
                               marker=span.cut(m, k + 1), verb=toks[k].text), {m, k}
                else:
                    yield Fact(Relation.PURPOSE, self._left(span, m), self._right(span, m + 1, used), "", 0,
                               marker=tok.text, verb=toks[k].text), {m}
            elif tok.text in ("以免", "以防"):
                yield Fact(Relation.AVOID, self._left(span, m), self._right(span, m + 1, used), "", 0,
                           marker=tok.text, verb="避免"), {m}
            elif tok.text == "目的" and span.word(m + 1) in ("是", "在于") and span.at_clause_start(m):
                k = m + 2
                if span.word(k) in ("为了",):
                    k += 1
                if span.word(k) in ("避免", "防止", "免得"):
                    yield Fact(Relation.AVOID, self._left(span, m), self._right(span, k + 1, used), "", 0,
                               marker="目的是" + span.word(k), verb=span.word(k)), {m}
                else:
                    yield Fact(Relation.PURPOSE, self._left(span, m), self._right(span, k, used), "", 0,
                               marker="目的是"), {m}
            elif tok.text in ("便于", "方便", "以便于") and span.at_clause_start(m):
                yield Fact(Relation.PURPOSE, self._left(span, m), self._right(span, m + 1, used), "", 0,
                           marker=tok.text, verb=tok.text), {m}
            elif tok.text == "用于":
                if span.word(m - 1) in ("只", "仅", "专门", "仅仅"):
                    continue  # "新增只用于量化中间结果的 Q8_K": 用于 qualifies a noun, it names no purpose
                yield Fact(Relation.PURPOSE, self._left(span, m), self._right(span, m + 1, used), "", 0,
                           marker=tok.text, verb=tok.text), {m}
            elif tok.text in ("避免", "防止") and span.at_clause_start(m):
                yield Fact(Relation.AVOID, self._left(span, m), self._right(span, self._after(span, m, "了"), used),
                           "", 0, marker=tok.text, verb=tok.text), {m}
        for m in span.positions(_IN_ORDER_TO):
            tok = toks[m]
            if span.at_clause_start(m) and m not in used:
                purpose = self._right(span, m + 1, used)
                after = span.clause_end(m) + 1
                if after < len(toks):  # 为了 Y，X
                    doing = clean(span.cut(after, span.clause_end(after)))
                else:  # X，为了 Y
                    doing = self._left(span, m)
                if doing:
                    yield Fact(Relation.PURPOSE, doing, purpose, "", 0, marker=tok.text), {m}

    def _means(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        toks = span.tokens
        for m in span.positions(_MEANS_WORDS):
            tok = toks[m]
            if m in used or tok.protected or m + 1 >= len(toks):
                continue
            opens = tok.text == "通过" and span.word(m + 1) not in PASSED_SENSE
            # "用 X 做 Y" opens its clause, or follows a short subject ("作者利用 X 来…")
            short_subject = units(span.cut(span.clause_start(m), m)) <= 4 and m > span.clause_start(m) \
                and self.seg.pos(span.word(m - 1)).startswith(("n", "r"))
            opens = opens or (tok.text in MEANS_OPENERS and (span.at_clause_start(m) or short_subject))
            if not opens and tok.text in ("采用", "引入", "借助", "利用") and "来" in span.words[m + 2 : span.clause_end(m)]:
                opens = True
            if not opens:
                continue
            stop = span.clause_end(m)
            stop = min((k for k in used if m + 1 <= k < stop), default=stop)
            end = self._np_end(span, m + 1, stop)
            if end >= stop:
                continue
            verb_index = next((k for k in range(end, stop) if toks[k].text in LINK_VERBS or self.is_verb(toks[k])), None)
            rest = clean(span.cut(end, stop))
            rest = _HOW.sub("", rest)
            prefix = clean(span.cut(span.clause_start(m), m)) if not span.at_clause_start(m) else ""
            yield Fact(Relation.MEANS, clean(span.cut(m + 1, end)), rest, "", 0, marker=tok.text,
                       verb=toks[verb_index].text if verb_index is not None else "", prefix=prefix), \
                {m} | ({verb_index} if verb_index is not None else set())

    def _result(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        toks = span.tokens
        for m in span.positions(_RESULT_WORDS):
            tok = toks[m]
            if m in used or tok.protected or m == 0:
                continue
            if tok.text in ("从而", "进而") and span.at_clause_start(m):
                nxt = span.word(m + 1)
                if nxt in ("避免", "防止", "消除"):
                    after = self._after(span, m + 1, "了")
                    yield Fact(Relation.AVOID, self._left(span, m), self._right(span, after, used), "", 0,
                               marker=tok.text + nxt, verb=nxt), {m, m + 1}
                else:
                    yield Fact(Relation.RESULT, self._left(span, m), self._right(span, m + 1, used), "", 0,
                               marker=tok.text), {m}
                continue
            if tok.text in ("无需", "不必", "不再需要") and span.at_clause_start(m):
                left = self._left(span, m)
                if not _PARTIAL_LEFT.match(span.cut(*span.previous_clause(m))):
                    yield Fact(Relation.RESULT, left, clean(span.cut(m, span.clause_end(m))), "", 0,
                               marker=tok.text, verb=tok.text), {m}
                continue
            if tok.text in EFFECT_VERBS and span.at_clause_start(m) and span.word(m + 1) == "了":
                yield Fact(Relation.RESULT, self._left(span, m), self._right(span, m + 2, used), "", 0,
                           marker=tok.text + "了", verb=tok.text), {m}
                continue
            if tok.text not in ("确保", "保证", "使得", "让", "使", "保障", "消除"):
                continue
            # A parallel clause ("既省显存，也保证…", "既…，又让…") says nothing about the clause before.
            start = span.clause_start(m)
            opener = span.word(start)
            a, _ = span.previous_clause(m)
            both = span.word(a).startswith("既")  # jieba may glue 既 to the next word (既省 | 显存)
            if (start == m or opener in _PARALLEL) and (opener in _PARALLEL or both):
                if tok.text in ("让", "使", "使得") or both:
                    continue
            left = self._left(span, m)
            left = _FILLER_LEFT.sub(r"\1", left)
            if start == m and _PARTIAL_LEFT.match(span.cut(*span.previous_clause(m))):
                continue
            if not left or left in ("从而", "进而") or left.endswith(("是", "要", "需", "应", "需要", "应该", "能", "可以", "如何", "用于",
                                                                  "会", "为")):
                # "左填充会让某些行被屏蔽" states a problem; "为了让调度保持简单" a purpose (see _purpose)
                continue
            after = self._after(span, m, "了")
            effect = self._right(span, after, used)
            if _HARM.search(effect):
                continue  # "手填上限往往让显存浪费或 OOM": a problem the PR answers, not what it does
            yield Fact(Relation.RESULT, left, effect, "", 0, marker=span.cut(m, after), verb=tok.text), {m}

    def _action(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        """X 把 A V 到/在 B: what was done with A (把配置漂移扼杀在握手阶段)."""
        toks = span.tokens
        for m in span.positions(_BA):
            if m in used:
                continue
            stop = span.clause_end(m)
            stop = next((k for k in range(m, stop) if span.word(k) in ("（", "(")), stop)  # not into an aside
            verb = None
            for k in range(m + 2, stop):  # the last verb+complement: 把 A(分散在各处的 B) 集中到 C
                word = toks[k].text
                if word in COMPLEMENTS and self.is_verb(toks[k - 1]) and k - 1 > m + 1:
                    verb = k - 1
                elif self.is_verb(toks[k]) and word.endswith(("到", "成", "在", "为", "进")) and len(word) > 1 \
                        and word not in _WHOLE_VERBS:
                    verb = k
            if verb is None or verb <= m + 1:
                continue
            agent = _AGENT_TAIL.sub("", clean(span.cut(span.clause_start(m), m)))
            agent = "该 PR" if is_self_reference(agent) or agent in _AUTHORS else agent  # "" stays: the topic may do it
            if _NEGATED_AGENT.search(agent):
                continue  # "避免一次性把结果集加载进内存": what is avoided was not done
            thing, done = clean(span.cut(m + 1, verb)), clean(span.cut(verb, stop))
            swap = _SWAP.match(done)
            if swap:  # 把 A 换成 B: B was chosen instead of A
                if not _DEMONSTRATIVE.match(thing):  # "把这些行改成…": no option was weighed, some rows were changed
                    yield Fact(Relation.CONTRAST, clean(swap.group(1)), thing, "", 0, marker="把…换成"), {m}
                continue
            yield Fact(Relation.ACTION, thing, done, "", 0, marker="把", verb=toks[verb].text, name=agent), {m}

    def _condition(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        """当/在 X 时，Y and 若/如果/一旦 X，(则) Y: in what situation does Y happen."""
        toks = span.tokens
        for m in span.positions(_CONDITION_WORDS):
            tok = toks[m]
            if m in used or tok.protected:
                continue
            if tok.text in ("时", "时候", "之时") and m > 0 and span.word(m + 1) != "的":
                start = span.clause_start(m)
                if any(start <= k < m for k in used):
                    continue  # inside 以免/避免…时: the situation is what the design avoids
                cond = clean(span.cut(start, m + 1))
                end = span.clause_end(m)
                effect = clean(span.cut(m + 1, end)) if end > m + 1 else clean(span.cut(end + 1, span.clause_end(end + 1))) if end + 1 < len(toks) else ""
            elif tok.text in ("若", "如果", "一旦", "假如") and span.at_clause_start(m):
                end = span.clause_end(m)
                inner = next((k for k in range(m + 2, end) if span.word(k) == "则"), None)
                if inner is not None:  # 若 X 则 Y in one clause
                    cond, effect = clean(span.cut(m, inner)), clean(span.cut(inner + 1, end))
                    if 2 <= units(cond) <= 16 and units(effect) >= 4:
                        yield Fact(Relation.CONDITION, cond, effect, "", 0, marker=tok.text), {m}
                    continue
                cond = clean(span.cut(m, end))
                after = end + 1
                if span.word(after) == "则":
                    after += 1
                effect = clean(span.cut(after, span.clause_end(after))) if after < len(toks) else ""
            else:
                continue
            if effect and 2 <= units(cond) <= 16 and units(effect) >= 4 and not REVIEWER_SPEAK.match(effect):
                yield Fact(Relation.CONDITION, cond, effect, "", 0, marker=tok.text), {m}

    def _cause(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        """由于/因为 X，(所以/因此) Y and Y，(是)因为 X: why Y."""
        toks = span.tokens
        for m in span.positions(_CAUSE_WORDS):
            tok = toks[m]
            if m in used or not span.at_clause_start(m):
                continue
            end = span.clause_end(m)
            after = end + 1
            if span.word(after) in ("所以", "因此", "故"):
                after += 1
            a, b = span.previous_clause(m)
            if b > a and span.word(span.clause_start(m)) != "由于":  # Y，因为 X: the effect came first
                cause, effect = clean(span.cut(m + 1, end)), clean(span.cut(a, b))
                effect = _CHOSE_LEAD.sub("", effect).strip()
            elif after < len(toks):
                cause = clean(span.cut(m + 1, end))
                effect = clean(span.cut(after, span.clause_end(after)))
            else:
                continue
            if cause.endswith(("时", "时候")) and end + 1 < len(toks) and after != end + 1:
                cause = clean(span.cut(m + 1, span.clause_end(end + 1)))  # "因为在 X 增长时，每卡通信量不变"
            elif cause.endswith(("时", "时候")) and end + 1 < len(toks) and b > a:
                cause = clean(span.cut(m + 1, span.clause_end(end + 1)))
            if cause and effect and units(effect) >= 4:
                yield Fact(Relation.CAUSE, cause, effect, "", 0, marker=tok.text), {m}

    def _tradeoff(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        """(这样做的)好处是 Y / 代价是 Y / 权衡在于 Y: what the decision gains or costs."""
        toks = span.tokens
        for m in span.positions(_TRADEOFF_WORDS):
            tok = toks[m]
            kind = "好处" if tok.text in _GAIN_WORDS else "代价"
            if m in used or span.word(m + 1) not in ("是", "在于", "为"):
                continue
            start = span.clause_start(m)
            owner = clean(_OWNER_TAIL.sub("", span.cut(start, m))) or "这样做"
            value = clean(span.cut(m + 2, span.clause_end(m)))
            if value and units(value) >= 3:
                yield Fact(Relation.TRADEOFF, owner, value, "", 0, marker=tok.text, verb=kind), {m}

    def _hence(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        """X，这样(可以) Y: the effect the reviewer draws from the clause before."""
        for m in span.positions(_ZHEYANG):
            if m in used or not span.at_clause_start(m) or span.word(m + 1) in ("做", "的"):
                continue
            a, b = span.previous_clause(m)
            end = span.clause_end(m)
            effect = clean(span.cut(m, end))
            after = end + 1
            if after < len(span.tokens) and span.word(after) in EFFECT_VERBS:
                # "这样 X 可以保留多份副本，减少各阶段之间的同步": what that buys is part of the effect
                effect = clean(span.cut(m, span.clause_end(after)))
            if _REJECTED_OPTION.match(span.cut(a, b)):
                # "X，而非放在单独的缓冲区里，这样 Y": Y follows from X, the option chosen, not the one rejected.
                a, b = span.previous_clause(a) if a > 0 else (0, 0)
                if _REJECTED_OPTION.match(span.cut(a, b)):
                    continue
            if _MAYBE.search(effect):
                continue  # "按元素均分，这样一个参数可能跨两个分片": a caveat, not what the decision is for
            if b > a and effect and units(effect) >= 4:
                yield Fact(Relation.RESULT, clean(span.cut(a, b)), effect, "", 0, marker="这样", verb="这样"), {m}

    def _show(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        yield from self._simple(span, used, Relation.SHOW, _SHOW_WORDS)

    def _solve(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        for fact, markers in self._simple(span, used, Relation.SOLVE, _SOLVE_WORDS):
            detail = _SOLUTION_TAIL.sub("", fact.detail)
            yield Fact(fact.relation, fact.subject, detail, "", 0, marker=fact.marker, verb=fact.verb), markers

    def _role(self, span: Span, used: set[int]) -> Iterator[tuple[Fact, set[int]]]:
        for fact, markers in self._simple(span, used, Relation.ROLE, _ROLE_WORDS):
            verb, subject = "", fact.subject
            for choose in _CHOOSE_LONGEST_FIRST:
                if subject.startswith(choose) and len(subject) > len(choose) + 1:
                    verb, subject = choose, clean(subject[len(choose) :])
                    break
            tokens = self.seg.tokenize(subject)
            if any(self.is_verb(t) and len(t.text) > 1 or t.text in ("可以", "能", "会") for t in tokens):
                continue  # "回报给 router 作为上限", "响应对象可以直接作为参数": what serves as Y is a thing, not an act
            yield Fact(fact.relation, subject, self._role_noun(fact.detail), "", 0, marker=fact.marker,
                       verb=verb), markers

    def _role_noun(self, detail: str) -> str:
        """The role itself: "作为新的元数据 `x` 写进 GGUF" casts the thing as "新的元数据 `x`", then says more."""
        tokens = self.seg.tokenize(detail)
        cut = next((t.start for t in tokens[1:] if self.is_verb(t) or t.text in _NEXT_STEP), None)
        return clean(detail[:cut]) if cut else detail

    def _simple(self, span: Span, used: set[int], relation: Relation,
                markers: frozenset[str]) -> Iterator[tuple[Fact, set[int]]]:
        toks = span.tokens
        for m in span.positions(markers):
            tok = toks[m]
            if m in used or tok.protected or m == 0:
                continue
            after = self._after(span, m, "了", "出")
            left, right = self._left(span, m), self._right(span, after, used)
            if left and right:
                yield Fact(relation, left, right, "", 0, marker=span.cut(m, after), verb=tok.text), {m}


# In this order (earlier matchers claim marker tokens first), each with the words it can
# fire on: a matcher is not run on a span that has none of them.  Unbound, so that a
# finder holds no bound methods of itself: such a cycle outlives its entry until the
# cycle collector runs, and the workers run without it (see deckgen.cache.results).
_MATCHERS: tuple[tuple[Matcher, frozenset[str]], ...] = (
    (RelationFinder._contrast, _CONTRAST_WORDS), (RelationFinder._purpose, _PURPOSE_WORDS | _IN_ORDER_TO),
    (RelationFinder._means, _MEANS_WORDS), (RelationFinder._result, _RESULT_WORDS), (RelationFinder._action, _BA),
    (RelationFinder._show, _SHOW_WORDS), (RelationFinder._solve, _SOLVE_WORDS), (RelationFinder._role, _ROLE_WORDS),
    (RelationFinder._condition, _CONDITION_WORDS), (RelationFinder._cause, _CAUSE_WORDS),
    (RelationFinder._tradeoff, _TRADEOFF_WORDS), (RelationFinder._hence, _ZHEYANG),
)


@lru_cache(maxsize=4)
def finder_for(seg: Segmenter) -> RelationFinder:
    """The finder of *seg*: its word flags then serve every review, not one.

    They grow with the vocabulary, not with the corpus: 300 words after the 36 real reviews.
    """
    return RelationFinder(seg)


def subject_predicate(finder: RelationFinder, text: str) -> tuple[str, str] | None:
    """Split a short practice "S V O" into its subject S and predicate "V O".

    For enumerated practices that carry no connective: ``digest-only COPY 作为缓存键``,
    ``启动期强校验把配置漂移扼杀在握手阶段``, ``oracle 参考路径如何精确模拟激活量化误差``.
    Only single-clause text whose subject is a noun phrase and whose predicate
    starts with a verb qualifies; questions (是否) and relative clauses (V 的 …) don't.
    """
    if _PRACTICE_BREAK.search(text) or units(text) > 30:
        return None
    tokens = finder.seg.tokenize(text)
    words = [t.text for t in tokens]
    split: int | None
    if "把" in words[1:]:
        split = words.index("把", 1)
    elif "如何" in words[1:]:
        split = words.index("如何", 1)
    else:
        split = next((k for k, t in enumerate(tokens)
                      if k > 0 and (finder.is_verb(t) or (finder.is_modifier(t) and k + 1 < len(tokens)
                                                           and finder.is_verb(tokens[k + 1])))), None)
    if split is None or split + 1 >= len(tokens):
        return None
    first, last = tokens[0], tokens[split - 1]
    if finder.is_verb(first) or finder.seg.pos(first.text) in ("p", "r", "m", "d"):
        return None
    if not (last.protected or finder.seg.pos(last.text).startswith(("n", "vn", "eng")) or last.text in ("”", "」")):
        return None
    if words[split + 1 : split + 2] == ["的"]:
        return None
    if words[split] == "如何" and not any(finder.is_verb(t) or finder.is_modifier(t) for t in tokens[split + 1 : split + 2]):
        return None
    subject, predicate = clean(text[: tokens[split].start]), clean(text[tokens[split].start :])
    predicate = _HOW.sub("", predicate)
    if subject and units(predicate) >= 3 and units(subject) <= 12 and not PRONOUN_RE.match(subject):
        return subject, predicate
    return None
