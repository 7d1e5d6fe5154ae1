"""Entry → Review: the reading verdict, identifiers and the design decisions of one PR.

Pure: no I/O.  Works on any review in the seed format; nothing here knows
about particular PRs.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

from ..files.datadir import data_dir
from ..text.clauses import clean
from ..text.markup import without_markers
from ..text.segment import PROTECTED_RE, Segmenter, get_segmenter, units
from ..text.units import MAX_SENTENCE_CHARS, MAX_UNITS, Unit, cut_overlong, split_units, strip_bold
from ..types import Entry, Fact, Relation, Review, Verdict, norm
from .decisions import decision_score
from .decisions import weights as decision_weights
from .headline import core_of, headline_facts
from .relations import RelationFinder, finder_for, subject_predicate
from .roles import clause_spans, decision_text, has_decision_cue, is_label
from .slots import GAP
from .spans import Site, key_spans
from .whole import whole_facts

# Checked in this order: "不值得精读" contains 精读, "值得快速精读" is a skim.
VERDICT_PATTERNS: tuple[tuple[Verdict, re.Pattern[str]], ...] = (
    (Verdict.SKIP, re.compile(r"不(?:值得|建议|必|需要?|用|推荐)(?:去)?(?:精读|细读|深读|仔细阅读|阅读|一读|细看)"
                              r"|无需(?:精读|细读|阅读)|没(?:有)?必要(?:精读|细读|阅读)|(?:建议|可以|可)直接跳过|跳过即可")),
    (Verdict.SKIM, re.compile(r"快速(?:浏览|精读|阅读|过一遍)|略读|粗读|速读|扫读|浏览即可|简单浏览|泛读|了解即可"
                              r"|选读|扫一眼|粗略(?:看看|浏览)")),
    (Verdict.DEEP, re.compile(r"精读|细读|深读|深入阅读|仔细阅读|逐行阅读|必读|值得一读|推荐阅读|值得细看")),
)
_CODEISH_RE = re.compile(r"`([^`\n]+)`|\b[A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b[A-Za-z_]\w*(?:(?:\.|::|/)[A-Za-z_]\w*)+(?:\(\))?", re.ASCII)
_PR_REF_RE = re.compile(r"(?<![\w#])#(\d{2,7})\b")
_QUOTED_RE = re.compile(r"[“「]([^”」]{2,40})[”」]")
_NAMED_QUOTE_RE = re.compile(r"[“「]([^”」]{2,40})[”」](的?[^，,。；;：:（(\s“]{0,10}?(?:机制|模式|方案|设计|思路|做法|策略|原则|fixture|写法|范式))")
_META_HEAD = re.compile(r"决策|做法|要点|重点|原因|关注|建议|包括|如下|以下|值得|亮点|核心|关键|精读|浏览|总结|总体|问题|注意")
_DESIGN_NOUN = re.compile(r"(?:握手|协议|机制|模式|策略|方案|接口|缓存|队列|锁|池|钩子|抽象|格式|索引|算法|流程|状态机|协商|守卫|校验|回退)$")
_DASH_RE = re.compile(r"\s*——\s*|\s*--\s+")
_VERDICT_HINT = re.compile(r"精读|浏览|略读|值得|建议")
_VERDICT_WORDS = frozenset({"精读", "快速浏览", "略读", "不值得精读", "强烈建议精读"})
_MAX_NAME_UNITS = 20
# Patterns used for every unit or clause, compiled once (re's own cache look-up shows in profiles).
_CODE_SPAN_RE = re.compile(r"`[^`\n]+`")
_CLAUSE_BREAK_RE = re.compile(r"[，,；;。]")
_COMMA_RE = re.compile(r"[，,；;]")
_SENTENCE_BREAK_RE = re.compile(r"[；;。]")
_HEAD_COLON_RE = re.compile(r"^([^，,。：:、]{2,30})[:：]")
_HEAD_END_RE = re.compile(r"(?:是|为|在于|如下|以下|包括|有[两二三四五六七八九十\d]+[点个处项条])$")
_NEW_LEAD_RE = re.compile(r"^(?:新增|引入|添加|增加|采用|提供)(?:了)?\s*")
_REFERS_BACK_RE = re.compile(r"^(?:这样做|此举|这一做法|这种做法|这样)")
_NAMED_COLON_RE = re.compile(r"^([^，,。：:]{0,30}?(?:模式|机制|策略|方案|设计|原则|优化|思路|做法|方式|决策|处理|修复))\s*[:：]\s*(.+)$")
_HEAD_RE = re.compile(r"^([^，,。：:、]{2,30})[:：]\s*")
_FRAMED_RE = re.compile(r"^[^，,。：:]{0,8}?(?:亮点|关键|核心|重点|要点|精髓)(?:是|在于)([^，,。：:]{2,16})\s*[:：]\s*(.+)$")
_PRONOUN_LEAD_RE = re.compile(r"^(?:它|这|此|其|该 ?PR|本 ?PR)")
_SHOWS_RE = re.compile(r"展示|体现|说明")
_LONGEST_EXPLANATION = 42
_CLAUSE_RUN_RE = re.compile(r"[^，,]+")
_WHY_OPENER_RE = re.compile(r"(?:以|为了|为|用于|从而|进而|确保|保证|使|让|避免|防止|便于|因为|由于|因此|所以|于是|这样|这是|既|也|无需|"
                             r"不必|不再需要|减少|降低|提升)")
_ADD_ON_RE = re.compile(r"(?:并且?|同时|此外|另外)(?!且)")
"""A clause adding a second step to a named decision ("…折叠成一个算子，并在 F 中替换"): the answer stops before it."""
_STEP_RE = re.compile(r"第[一二三四五六七八九十]遍|第[一二三四五六七八九十]步|首先|先")
_NEW_COMPONENT_RE = re.compile(r"^(?:此外|另外|同时)?[，,]?\s*(?:新增|引入|添加|增加)了?(?:一个|可选的|新的|独立的)?\s*(`[^`]+`)[，,]\s*(.)")
_MORE_DUTY_RE = re.compile(r"(?:并|再|同时)?(?:重新|自动|负责|生成|下载|更新|记录|检查|维护|提供|导出|注册|把|将)")
_DOES_RE = re.compile(r"(?:自动|负责|专门|用来|由|把|将|统一|在|按|对)")
_MUST_RE = re.compile(r"必须|不得不")
_TURN_RE = re.compile(r"改为|改用|转而|改成")
_PROBLEM_RE = re.compile(r"只能|无法|不得不|导致")
_CONSEQUENCE_RE = re.compile(r"^\s*(?:于是|因此|所以|从而)\s*")
_REFERENCE_RE = re.compile(r"(?:现场|直接|再|并)?(?:把|将)?(?:前者|后者|上述)")
_DECISION_VERB_RE = re.compile(r"(?:新增|引入|改为|改成|改用|采用|加入|增加|统一|把|将|用|让|直接)")
_EXPLANATION_END_RE = re.compile(r"[，,；;。]|而(?:非|不是)|以(?:避免|免|便|确保|保证)")
_PRONOUN_CLAUSE_RE = re.compile(r"^(?:它|其|这)(?!们|些|是)")
_NOT_AGENT_RE = re.compile(r"^(?:展示|体现|把|解决)")
_LIST_SEP_RE = re.compile(r"、(?![^（(]*[）)])")
_EXAMPLE_RE = re.compile(r"[（(]如\s*([^）)、]{2,20}?)(?:\s*PR\s*#\d+)?[）)]")
_PAREN_CHAR_RE = re.compile(r"[（(）)]")
_TOPIC_SUFFIX = re.compile(r"\s*(?:设计|实现|模块|逻辑|部分)$")
_MEMBER_SEP_RE = re.compile(r"、|\s*(?:和|与|及|以及)\s*")
_AUDIENCE_RE = re.compile(r"同学|工程师|开发者|读者|人员|用户|团队")
_NOT_TERM_RE = re.compile(r"[\d.%#]+|PR|[A-Z]")
_PLUS_SEP_RE = re.compile(r"\s\+\s|、|\s/\s")
_OBJECT_END_RE = re.compile(r"与|和|及|的")
_OBJECT_BREAK_RE = re.compile(r"[，,；;、]")


def find_verdict(text: str) -> tuple[Verdict, str]:
    """The reading verdict of a review and the phrase that states it."""
    for verdict, pattern in VERDICT_PATTERNS:
        match = pattern.search(text)
        if match:
            return verdict, match.group(0)
    return Verdict.UNKNOWN, ""


def find_identifiers(text: str) -> tuple[str, ...]:
    """Code identifiers and paths named in *text*, in order of first mention."""
    seen: dict[str, None] = {}
    for match in _CODEISH_RE.finditer(text):
        ident = (match.group(1) or match.group(0)).strip()
        if ident and not re.fullmatch(r"[\d.]+", ident):
            seen.setdefault(ident, None)
    return tuple(seen)


def find_pr_refs(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f"#{n}" for n in _PR_REF_RE.findall(text)))


@dataclass(frozen=True)
class _Reading:
    """A review read down to its decision units: what :func:`extract_review` and the span sites share."""

    plain: str
    units: list[Unit]
    scores: tuple[tuple[str, float], ...]
    long_sentences: tuple[tuple[int, int], ...]
    unread: tuple[int, int] | None
    by_clause: dict[str, float]

    def score_of(self, clause: str) -> float | None:
        return self.by_clause.get(clause.strip(_TRIM))


def _read(entry: Entry, seg: Segmenter) -> _Reading:
    plain, bold = strip_bold(without_markers(entry.review))
    # A sentence too long to read whole is read in pieces, and a review of too many is read in part (see
    # MAX_SENTENCE_CHARS and MAX_UNITS): the build says where.
    written = split_units(plain, bold)
    long_sentences = tuple((entry.review_line + plain.count("\n", 0, u.offset), len(u.text))
                           for u in written if len(u.text) > MAX_SENTENCE_CHARS)
    pieces = [piece for unit in written for piece in cut_overlong(unit)]
    unread = None
    if len(pieces) > MAX_UNITS:
        unread = (entry.review_line + plain.count("\n", 0, pieces[MAX_UNITS].offset), len(pieces) - MAX_UNITS)
        del pieces[MAX_UNITS:]
    # Only decisions become facts: verdicts, advice, discussion, background … are cut out first, of each unit
    # and of the lead of an enumeration, which cards show as context ("其设计决策值得学习" is no context).
    found = [(u, decision_text(u)) for u in pieces]
    scores = tuple(_clause_scores(found, seg))
    by_clause = dict(scores)
    # A unit the role rules cut whole may still state a decision in words their cue lists lack: the clauses the
    # decision model is sure of are kept.
    found = [(u, kept or "，".join(c for c, _ in unit_clauses(u, kept) if by_clause.get(c, 0.0) >= _RESTORED_CLAUSE))
             for u, kept in found]
    units_ = [replace(u, text=kept, lead=decision_text(Unit(u.lead, u.offset)) if u.lead else "")
              for u, kept in found if kept]
    return _Reading(plain, units_, scores, long_sentences, unread, by_clause)


def extract_review(entry: Entry, seg: Segmenter | None = None) -> Review:
    """Everything deckgen understands of *entry*'s review."""
    seg = seg or get_segmenter()
    reading = _read(entry, seg)
    plain = reading.plain
    verdict, phrase = find_verdict(plain)
    finder = finder_for(seg)
    facts: list[Fact] = []
    by_clause = reading.by_clause
    units_ = reading.units

    def is_decision(clause: str) -> bool:
        """A clause the decision model scores as one, or (with no model) one holding a decision cue."""
        chance = by_clause.get(clause.strip(_TRIM))
        return has_decision_cue(clause) if chance is None else chance >= _DECISION_CLAUSE
    previous = ""
    for number, unit in enumerate(units_, start=1):
        line = entry.review_line + plain.count("\n", 0, unit.offset)
        facts.extend(replace(f, unit=number) for f in _unit_facts(unit, line, finder, previous, is_decision))
        facts.extend(replace(f, unit=number) for f in _span_facts(unit, line, seg, reading))
        previous = _summary(unit)
    steps = [number for number, unit in enumerate(units_, start=1) if unit.family == "seq"]
    facts.extend(replace(f, unit=steps[0]) for f in _procedure_facts(units_, entry))
    return Review(entry, verdict, phrase, _dedupe([*headline_facts(entry, seg), *_summary_span_facts(entry, seg), *facts]),
                  find_identifiers(plain), find_pr_refs(plain), reading.scores, reading.long_sentences, reading.unread)


def span_sites(entry: Entry, seg: Segmenter) -> Iterator[tuple[str, Site]]:
    """Every clause the span model reads in *entry* (its summary's, then each decision unit's), with its site."""
    for clause in _clauses(core_of(entry.title)):
        yield clean(clause), Site("title")
    reading = _read(entry, seg)
    for unit in reading.units:
        yield from _unit_sites(unit, reading)


def _unit_sites(unit: Unit, reading: _Reading) -> Iterator[tuple[str, Site]]:
    """The clauses of a decision unit the span model reads: those of its explanation when it is named."""
    text = unit.text.replace("\n", "")
    name, body = _named_part(unit, text)
    where = "named" if name and not is_label(name) else "item" if unit.ordinal else "prose"
    for position, clause in enumerate(_clauses(body)):
        yield clean(clause), Site(where, position == 0, reading.score_of(clause))


def _span_facts(unit: Unit, line: int, seg: Segmenter, reading: _Reading) -> list[Fact]:
    """The key phrases of a decision unit's clauses: each a cloze gap in its clause (``marker`` "span"), and a thing
    (a noun phrase) also asked in place (a :data:`Relation.SLOT` fact: 两端的协调暂时依赖什么？)."""
    text = unit.text.replace("\n", "")
    name = _named_part(unit, text)[0]
    name = "" if is_label(name) else name
    facts = []
    for clause, site in _unit_sites(unit, reading):
        if site.where == "prose" and (site.decision or 0.0) < _SPAN_CLAUSE:
            continue  # prose also tells what went wrong and what followed: only its decisions are asked
        for span in key_spans(clause, seg, site, limit=_SPANS_PER_CLAUSE, floor=_SPAN_FLOOR):
            facts.append(Fact(Relation.TERM, span.text, clause, text, line, marker="span", name=name, lead=unit.lead,
                              score=span.probability))
            if span.askable and units(clause) - units(span.text) >= _SHORTEST_SLOT_REST:
                asked = clause[:span.start] + GAP + clause[span.end:]
                facts.append(Fact(Relation.SLOT, asked, span.text, text, line, marker="span", verb="什么", name=name,
                                  score=span.probability))
    return facts


def _summary_span_facts(entry: Entry, seg: Segmenter) -> list[Fact]:
    """The summary's key phrases, each a cloze gap in the whole summary (``marker`` "headline")."""
    title = core_of(entry.title)
    facts = []
    # A gap hides at most a third of the summary, or it says too little to be recalled from (card-quality A9).
    longest = int(_LARGEST_GAP * units(title))
    for clause, site in ((clean(c), Site("title")) for c in _clauses(title)):
        for span in key_spans(clause, seg, site, limit=_SPANS_PER_CLAUSE, floor=_SPAN_FLOOR, longest=longest):
            facts.append(Fact(Relation.TERM, span.text, title, entry.title, entry.title_line, marker="headline",
                              score=span.probability))
    return facts


_SPAN_CLAUSE = 0.2
"""The decision score from which a clause of prose has its key phrases asked."""
_SPANS_PER_CLAUSE = 2
_SPAN_FLOOR = 0.1
"""The least probability of a key phrase that is offered as a gap."""
_LARGEST_GAP = 0.35
_SHORTEST_SLOT_REST = 4
"""Units a clause must keep around a phrase asked in place: "依赖什么？" alone asks nothing."""


_TRIM = " \t\n，,；;。：:、"
_DECISION_CLAUSE = 0.5
"""The decision score from which a clause of prose counts as stating a choice (deckgen.extract.decisions)."""
_RESTORED_CLAUSE = 0.7
"""The decision score from which a clause the role rules cut is kept all the same."""


def unit_clauses(unit: Unit, kept: str) -> Iterator[tuple[str, bool]]:
    """The clauses of *unit* the decision model scores, each with whether the role rules keep it: those of what
    they keep (after their rewrites), or, of a unit they cut whole, its own."""
    text = kept or unit.text
    for a, b, _ in clause_spans(text):
        clause = text[a:b].strip(_TRIM)
        if clause:
            yield clause, bool(kept)


def _clause_scores(units_: list[tuple[Unit, str]], seg: Segmenter) -> Iterator[tuple[str, float]]:
    """How likely each clause of each unit (with what the role rules keep of it) states a decision."""
    if not decision_weights():
        return
    for number, (unit, kept) in enumerate(units_):
        for clause, is_kept in unit_clauses(unit, kept):
            chance = decision_score(clause, seg, first=number == 0, item=bool(unit.ordinal), named=bool(unit.heading),
                                    kept=is_kept)
            yield clause, round(chance, 3)


@lru_cache(maxsize=1)
def label_questions() -> frozenset[str]:
    """The reviewer's labels a question asks by what they say (``[labels]`` of ``rules/questions.toml``)."""
    return frozenset(tomllib.loads((data_dir("rules") / "questions.toml").read_text(encoding="utf-8"))["labels"])


def _summary(unit: Unit) -> str:
    """What "这样做 / 此举" in the next sentence refers to: the unit's name or short first clause."""
    if unit.heading:
        return unit.heading
    masked = _mask_code(unit.text)
    colon = _HEAD_COLON_RE.match(masked)
    if colon:  # "新增 `Negotiate` 握手：…"
        head = unit.text[: colon.end(1)]
        return _NEW_LEAD_RE.sub("", head).strip() if units(head) <= 12 else ""
    # Otherwise only a one-clause sentence is a safe antecedent.
    return unit.text if not _COMMA_RE.search(masked) and 2 <= units(unit.text) <= 16 else ""


def _unit_facts(unit: Unit, line: int, finder: RelationFinder, previous: str = "",
                is_decision: Callable[[str], bool] = has_decision_cue) -> list[Fact]:
    text = unit.text.replace("\n", "")
    facts: list[Fact] = []
    name, body = _named_part(unit, text)
    if name and is_label(name):
        # "**默认值**：X" names nothing: X is read as plain text, and a listed label asks what it says.
        explanation = _explanation(body) if name.strip() in label_questions() else ""
        if explanation:
            facts.append(Fact(Relation.DEFINITION, name.strip(), explanation, text, line, marker="label"))
        name = ""
    if name:
        explanation = _explanation(body)
        # "合并层的 scale 统一：各分片 scale 不同时只能循环调用 X" says what went wrong, not what the decision does.
        if explanation and not _PROBLEM_RE.search(explanation):
            # How the review named it: a bold heading and "名称——说明" are the author's own names.
            how = "heading" if unit.heading else "——" if text[len(name):].lstrip().startswith("——") else "："
            facts.append(Fact(Relation.DEFINITION, name, explanation, text, line, marker=how, name=name))
    if not name:
        new = _NEW_COMPONENT_RE.match(_mask_code(text))
        if new and _DOES_RE.match(text[new.start(2):]):
            # "新增 `X`，自动下载各模型的分词器，…": what the new piece does is its first clause.
            rest = text[new.start(2):]
            clauses = _clauses(rest)
            does = clean(clauses[0])
            # "自动下载各模型的分词器，重新生成哈希分支…": duties listed on are part of the answer, or there is none.
            for more in clauses[1:]:
                if not _MORE_DUTY_RE.match(more):
                    break
                does = clean(f"{does}，{more}")
            if 4 <= units(does) <= 30:
                component = text[new.start(1):new.end(1)]
                facts.append(Fact(Relation.DEFINITION, component, does, text, line, marker="new"))
    topic = name or _quoted_topic(text) or _noun_topic(body, finder)
    if not topic and _REFERS_BACK_RE.match(text):
        topic = previous
    # A name covers its explanation up to the first ；/。, not what the unit says next.
    named_span = _SENTENCE_BREAK_RE.split(body, maxsplit=1)[0] if name else ""
    head, parts = _list_parts(body, finder)
    quoted = [p for m in _QUOTED_RE.finditer(body) if units(m.group(1)) >= 6 for p in _plus_parts(m.group(1))]
    # (text to search, sentence shown with its facts): a list member is shown with
    # the clause that introduces the list, not with the whole list.
    if parts:
        intro = clean(_clauses(head)[-1]) if head else ""
        segments = [(head, head)] + [(p, f"{intro}：{p}" if intro else p) for p in parts]
    else:
        segments = [(body, text)]
    for piece, context in segments + [(q, text) for q in quoted]:
        found = finder.find(piece, line, topic=topic)
        # Steps of a procedure (首先…其次…) have no subject to ask about.
        is_item = piece in parts or piece in quoted or bool(unit.ordinal and piece is body and unit.family != "seq")
        if not found and is_item:
            split = subject_predicate(finder, piece)
            if split:
                found = [Fact(Relation.MEANS, split[0], split[1], piece, line)]
            elif piece in parts:
                found = [Fact(Relation.TERM, t, context, context, line, marker="ascii") for t in _ascii_terms(piece)]
        facts.extend(_in_context(f, context, name if f.subject in named_span or f.detail in named_span else "",
                                 unit.lead) for f in found)
    facts.extend(_in_context(f, text, name, unit.lead)
                 for f in whole_facts(body, line, finder.seg, name, item=bool(unit.ordinal), is_decision=is_decision))
    agent = _pronoun_agent(body, topic, finder)
    if agent:
        facts.append(_in_context(Fact(Relation.MEANS, topic, agent, body, line), text, name, unit.lead))
    relation_facts = bool(facts)
    for _, context in (segments if parts else [(body, text)]):
        facts.extend(_term_facts(context, line, unit, name, finder, relation_facts))
    return facts


_STEP_WORDS = ("首先", "其次", "然后", "最后")


def _procedure_facts(units_: list[Unit], entry: Entry) -> list[Fact]:
    """Steps of a 首先…其次…最后 procedure: one overlapping cloze over the whole sequence.

    Order matters in a procedure, so each step is blanked in turn with the others visible.
    """
    steps = [u for u in units_ if u.family == "seq"]
    if len(steps) < 2:
        return []
    words = [_STEP_WORDS[0]] + [_STEP_WORDS[2 if 0 < i < len(steps) - 2 else 1] for i in range(len(steps) - 2)] + [_STEP_WORDS[3]]
    bodies = [clean(u.text) for u in steps]
    text = "，".join(f"{w}{b}" for w, b in zip(words, bodies))
    if steps[0].lead:
        text = f"{steps[0].lead}：{text}"
    line = entry.line_of(steps[0].offset)
    return [Fact(Relation.TERM, body, text, text, line, marker="step", lead=steps[0].lead)
            for body in bodies if 2 <= units(body) <= 12]


def _in_context(fact: Fact, sentence: str, name: str, lead: str) -> Fact:
    return replace(fact, sentence=sentence, name=fact.name or name, lead=lead)


def _named_part(unit: Unit, text: str) -> tuple[str, str]:
    """A decision's name and its explanation: ``名称: 说明`` or ``名称——说明``."""
    if unit.heading:
        body = text[len(unit.heading) :].lstrip().lstrip(":：").strip()
        return unit.heading.strip(), body
    colon = _NAMED_COLON_RE.match(text)
    if colon and units(colon.group(1)) <= _MAX_NAME_UNITS:
        return colon.group(1), colon.group(2)
    # "新增 `Negotiate` 握手：宿主声明…" — a short head naming a mechanism, then how it works.
    head = _HEAD_RE.match(_mask_code(text))
    if head and units(head.group(1)) <= 12 and not _META_HEAD.search(head.group(1)):
        named = _NEW_LEAD_RE.sub("", text[: head.end(1)]).strip()
        # A short head with no clause of its own names what follows: "证书轮换：服务端…" (the review's frame,
        # "亮点是", was cut before); a longer one needs code or a design noun to be a name.
        short = units(named) <= 6 and not _HEAD_END_RE.search(named)
        if (short or PROTECTED_RE.search(named) or _DESIGN_NOUN.search(named)) and text[head.end() :].strip():
            return named, text[head.end() :].strip()
    # "亮点是证书轮换：服务端…" — a short name after the reviewer's frame.
    framed = _FRAMED_RE.match(text)
    if framed and units(framed.group(1)) <= 10:
        return clean(framed.group(1)), framed.group(2)
    dash = _DASH_RE.search(text)
    if dash:
        left, right = text[: dash.start()].strip(), text[dash.end() :].strip()
        if left and right and units(left) <= _MAX_NAME_UNITS and not _COMMA_RE.search(_mask_code(left)):
            if not _PRONOUN_LEAD_RE.match(left) and not _SHOWS_RE.search(left):
                return left, right
    return "", text


def _explanation(body: str) -> str:
    """The mechanism part of a named decision's explanation.

    The clauses of its first sentence that say how, up to one that says why
    (以/从而/确保 …) or :data:`_LONGEST_EXPLANATION` units; a 既…又… pair is
    kept whole, since either half alone misstates the decision.  A first clause
    that only sets the scene ("X 按 token 索引，而 Y 需要…，于是新增 Z") gives
    way to the clause that says what was done (于是/因此 Z).
    """
    if body.startswith("既") and "又" in body:
        return _SENTENCE_BREAK_RE.split(body, maxsplit=1)[0].strip()
    masked = _mask_code(body)
    sentence = _SENTENCE_BREAK_RE.split(masked, maxsplit=1)[0]
    spans = [(m.start(), m.end()) for m in _CLAUSE_RUN_RE.finditer(sentence) if m.group().strip()]
    if not spans:
        return clean(body)
    consequence = next((i for i, (a, b) in enumerate(spans[1:], 1) if _CONSEQUENCE_RE.match(sentence[a:b].strip())), None)
    if consequence is not None:
        a, b = spans[consequence]
        done = _CONSEQUENCE_RE.sub("", body[a:b].strip())
        if _DECISION_VERB_RE.match(done):  # "于是新增 Z" says what was done; "于是所有组可以…" only what followed
            return clean(_REFERENCE_RE.split(done, maxsplit=1)[0])
    # "FlashAttention-1 把 K/V 切给 4 个 warp，…必须经共享内存汇总，FA2 改为切分 Q": the old way and its problem
    # set the scene; the decision is the clause that turns to the new way.
    if any(_PROBLEM_RE.search(sentence[a:b]) or _MUST_RE.search(sentence[a:b]) for a, b in spans[:-1]):
        turn = next((i for i, (a, b) in enumerate(spans[1:], 1) if _TURN_RE.search(sentence[a:b])), None)
        if turn is not None:
            spans = spans[turn:]
    start, end = spans[0]
    connective = _EXPLANATION_END_RE.search(masked, start, end)
    if connective:
        return clean(body[start:connective.start()])  # a connective inside the first clause: what precedes it says how
    # The clauses of the first sentence that say how, up to one that says why (以/从而/确保 …) or a length a card holds.
    for a, b in spans[1:]:
        following = sentence[a:b].strip()
        if _EXPLANATION_END_RE.match(following) or _WHY_OPENER_RE.match(following) or _ADD_ON_RE.match(following):
            break
        if units(body[start:b]) > _LONGEST_EXPLANATION:
            # Cut for length, the answer would stop mid-procedure ("第一遍…，第二遍利用收集到的节点" without what
            # the second pass does): a learner rates that worse than no card.
            return "" if _STEP_RE.search(body[start:end]) else clean(body[start:end])
        end = b
    return clean(body[start:end])


def _mask_code(text: str) -> str:
    """*text* with the inside of code spans blanked, so punctuation in code splits nothing."""
    if "`" not in text:  # most text has no code span: nothing to blank
        return text
    return _CODE_SPAN_RE.sub(lambda m: "`" + "x" * (len(m.group()) - 2) + "`", text)


def _clauses(text: str) -> list[str]:
    masked = _mask_code(text)
    out: list[str] = []
    pos = 0
    for match in _CLAUSE_BREAK_RE.finditer(masked):
        out.append(text[pos : match.start()].strip())
        pos = match.end()
    out.append(text[pos:].strip())
    return [c for c in out if c]


def _quoted_topic(text: str) -> str:
    match = _NAMED_QUOTE_RE.search(text)
    return f"“{match.group(1)}”{match.group(2)}" if match else ""


def _noun_topic(body: str, finder: RelationFinder) -> str:
    """The first clause when it is a bare noun phrase (``X 中的 Y 设计，它展示了…``)."""
    clauses = _clauses(body)
    if len(clauses) < 2:
        return ""
    first = clean(clauses[0])
    tokens = finder.seg.tokenize(first)
    if not tokens or units(first) > 16 or any(finder.is_verb(t) for t in tokens):
        return ""
    last = tokens[-1]
    if not (last.protected or finder.seg.pos(last.text).startswith(("n", "vn"))):
        return ""
    # "`a/b/cpu_router.py` 中的 `CPURouter` 设计" is about `CPURouter`: where it lives and what it is do not name it.
    core = _TOPIC_SUFFIX.sub("", first.rsplit("中的", 1)[-1]).strip()
    return core if core != first and (_CODE_SPAN_RE.fullmatch(core) or units(core) >= 2) else first


def _pronoun_agent(body: str, topic: str, finder: RelationFinder) -> str:
    """The predicate of ``TOPIC，它为 Y 提供了 Z`` (a clause whose subject is a pronoun)."""
    if not topic:
        return ""
    clauses = _clauses(body)
    for clause in clauses[1:2]:
        match = _PRONOUN_CLAUSE_RE.match(clause)
        if match:
            predicate = clean(clause[match.end() :])
            if units(predicate) >= 4 and not _NOT_AGENT_RE.match(predicate):
                return predicate
    return ""


def _list_parts(body: str, finder: RelationFinder) -> tuple[str, list[str]]:
    """An inline list of practices, after a colon or alone (``…做法：A 实现 B、C 作为 D、E 校验 F``).

    Returns the text before the colon and the members; no members when the
    text (after the colon) is not such a list.
    """
    masked = _mask_code(body)
    colon = max(masked.rfind("："), masked.rfind(":"))
    # Without a colon the whole text may be the list, its lead having been the reviewer's judgement (cut out).
    head, tail = (body[:colon].strip(), body[colon + 1 :]) if colon >= 0 else ("", body)
    tail = tail.strip().rstrip("。")
    parts = [p.strip() for p in _LIST_SEP_RE.split(tail)]
    if len(parts) < 2 or any(units(p) < 4 for p in parts):
        return "", []
    if any(_COMMA_RE.search(_mask_code(p)) for p in parts) or (colon < 0 and len(parts) < 3):
        # Members of a list of practices are short; and with no colon to announce it, a list needs three of them.
        return "", []
    with_verbs = [p for p in parts if any(finder.is_verb(t) or t.text == "把" for t in finder.seg.tokenize(p)[1:])]
    if len(with_verbs) < len(parts) / 2:
        return "", []
    return head, parts


def _term_facts(text: str, line: int, unit: Unit, name: str, finder: RelationFinder,
                has_relations: bool) -> list[Fact]:
    """Key phrases worth a cloze: quoted terms, code identifiers, members of short sets."""
    facts: list[Fact] = []

    if unit.ordinal and unit.lead and units(text) < 12:
        text = f"{unit.lead}：{text}"

    def add(phrase: str, clause: str, kind: str) -> None:
        # TERM facts: subject = the phrase, detail = its clause (the cloze text),
        # sentence = the whole unit (context when the clause alone is too short).
        phrase = phrase.strip()
        if phrase and phrase not in _VERDICT_WORDS:
            facts.append(Fact(Relation.TERM, phrase, clause, text, line, marker=kind, name=name, lead=unit.lead))

    for clause in _clauses(text):
        for match in _QUOTED_RE.finditer(clause):
            for piece in _plus_parts(match.group(1)):
                if units(piece) <= 12:
                    add(piece, clause, "quote")
        for match in PROTECTED_RE.finditer(clause):
            token = match.group(0)
            if token.startswith("`") or _CODEISH_RE.fullmatch(token):
                add(token, clause, "code")
        if not _VERDICT_HINT.search(clause):
            for member in _set_members(clause, finder):
                add(member, clause, "set")
        example = _EXAMPLE_RE.search(clause)
        if example:
            add(clean(example.group(1)), clause, "example")
        if clause.startswith(("以及", "并且", "还有")):
            rest = clean(clause)
            tokens = finder.seg.tokenize(rest)
            if len(tokens) > 1 and finder.seg.pos(tokens[0].text).startswith("v"):
                obj = clean(rest[tokens[1].start :])
                if 2 <= units(obj) <= 12:
                    add(obj, clause, "object")
    if unit.ordinal and not has_relations and not facts:
        obj = _object_phrase(text, finder)
        if obj:
            add(obj, text, "object")
    return facts


_SET_INTRO_RE = re.compile(r"(?:通过|包括|包含了?|涵盖|特别是|尤其是)\s*")


def _set_members(clause: str, finder: RelationFinder) -> list[str]:
    """Members of an inline set ``A、B 和 C`` introduced by 通过/包括/特别是 …."""
    intro = None
    for intro in _SET_INTRO_RE.finditer(clause):
        pass
    if intro is None:
        return []
    tail = _PAREN_CHAR_RE.split(clause[intro.end() :])[0]
    members = [clean(m) for m in _MEMBER_SEP_RE.split(tail)]
    if len(members) < 2 or any(not 2 <= units(m) <= 10 for m in members):
        return []
    if any(_AUDIENCE_RE.search(m) for m in members):
        return []  # an audience ("尤其是负责调度与资源管理的同学"), not a design
    return [_head_phrase(m) for m in members]


def _head_phrase(member: str) -> str:
    """严格的条件守卫 → 条件守卫: drop a leading adjective with 的."""
    parts = member.split("的", 1)
    return parts[1] if len(parts) == 2 and units(parts[0]) <= 3 and units(parts[1]) >= 2 else member


def _ascii_terms(text: str) -> list[str]:
    """English terms and code in *text* (``Python dataclass``, ``sccache``), the usual key phrases of a practice."""
    return [m.group(0) for m in PROTECTED_RE.finditer(text) if not _NOT_TERM_RE.fullmatch(m.group(0))]


def _plus_parts(phrase: str) -> list[str]:
    """“A + B + C” names a combination: each part is its own key phrase."""
    parts = [p.strip() for p in _PLUS_SEP_RE.split(phrase)]
    return parts if len(parts) > 1 and all(units(p) >= 2 for p in parts) else [phrase.strip()]


def _object_phrase(text: str, finder: RelationFinder) -> str:
    """The object after the last verb of a short item (在并发敏感路径上主动控制线程状态 → 线程状态)."""
    text = clean(text)
    tokens = finder.seg.tokenize(text)
    for k in range(len(tokens) - 2, -1, -1):
        if finder.is_verb(tokens[k]):
            obj = clean(text[tokens[k + 1].start :])
            if obj.startswith("的"):
                # 守护进程新增的错误报告协议与现有客户端的兼容性 → 错误报告协议
                obj = _OBJECT_END_RE.split(obj[1:], maxsplit=1)[0]
            if 2 <= units(obj) <= 12 and not _OBJECT_BREAK_RE.search(obj) and not obj.startswith(("的", "了")):
                return obj
            return ""
    return ""


def _dedupe(facts: list[Fact]) -> tuple[Fact, ...]:
    seen: set[tuple[str, str, str]] = set()
    out: list[Fact] = []
    for fact in facts:
        subject = norm(fact.subject)
        key = (fact.relation.value, subject, norm(fact.detail))
        if key not in seen and subject:
            seen.add(key)
            out.append(fact)
    return tuple(out)
