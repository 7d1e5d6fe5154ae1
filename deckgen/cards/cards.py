"""Review → cards: questions and cloze deletions for every fact, then the quality gate picks.

Cards are generated generously (both directions of a relation, several
kinds per fact), :mod:`deckgen.cards.gate` rejects and ranks them, and
:mod:`deckgen.cards.select` keeps a few per decision.  Phrasings rotate by a
stable hash of the card key, so learners recall the fact, not the template.
A question that asks for a name ("这一设计叫什么") is never made: names recalled
from their explanation were the cards learners deleted most.
"""

from __future__ import annotations

import hashlib
import re
import string
import tomllib
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache

from ..extract.extract import extract_review
from ..extract.headline import core_of
from ..extract.slots import GAP
from ..files.datadir import data_dir
from ..text.clauses import PRONOUN_RE, is_self_reference
from ..text.markup import CODE_SPAN, deletion
from ..text.prnumber import own_pr_number
from ..text.segment import PROTECTED_RE, Segmenter, get_segmenter, units
from ..types import Card, CardKind, Entry, Fact, Relation, Review, norm
from .gate import BOOST_VERB, GENERIC, Candidate
from .lists import in_a_list
from .select import MAX_CARDS_PER_PR, select_cards

CLOZE_TERMS = ("step", "code", "headline", "span")
"""Which key phrases found on their own become cloze gaps: procedure steps and code identifiers.  Quoted names,
set members and objects did not: learners deleted most of those cards; the facts of relations make their own
gaps (the chosen option, what was avoided)."""
MAX_STEP_DELETIONS = 3
"""Deletions of one cloze note over a procedure (首先…其次…最后): each step blanked in turn, the others visible."""

_QUESTIONS = tomllib.loads((data_dir("rules") / "questions.toml").read_text(encoding="utf-8"))
TEMPLATES: dict[str, tuple[str, ...]] = {family: tuple(phrasings) for family, phrasings in _QUESTIONS["questions"].items()}
"""Question templates by relation and direction (``rules/questions.toml``), two or three phrasings each."""
LABEL_QUESTIONS: dict[str, str] = dict(_QUESTIONS["labels"])
"""What a unit headed by a reviewer's label (问题, 默认值 …) is asked."""
_TERM_RANK = {"headline": 1.5, "step": 2.4, "code": 1.7, "quote": 2.0, "set": 1.9, "ascii": 1.8, "object": 1.8, "relation": 2.1, "alternative": 1.4, "example": 1.1}
_LEADING_CONNECTIVE = re.compile(r"^(?:但是?|并且?|而且|以及|同时|此外|另外|不过|虽然|因此|所以|特别是|尤其是|而是|于是|"
                                 r"其[一二三四五六七八九十]|第[一二三四五六七八九十])[，,\s]*")
_ASSESSMENT = re.compile(r"^(?:本|此|该|这个|这)\s*(?:PR|改动|变更)?\s*是一个|值得精读|不值得|建议精读")
_LOCATIVE = re.compile(r"(?:中|上|下|时|里|内|后|前)$")
_FIRST_CLAUSE_END = re.compile(r"[，,；;。]")
_LEADING_IT = re.compile(r"^它(?=[\u4e00-\u9fff])")
_AFTER_CLAUSE = re.compile(r"(?<=[；;。])")
_TEST_PATH = re.compile(r"(?:^|[/_`])tests?[/_]")
_PRINTABLE_ASCII = re.compile(r"[\x21-\x7e]+")
_CODE_PUNCT = re.compile(r"[_./:]")
_ENSURE = ("确保", "保证", "保障")
_EFFECT = ("让", "使", "使得")

_HEADLINE_RANK = {"replace": 3.0, "migrate": 2.9, "for": 2.8, "goal": 2.6, "subject": 2.5, "subject_do": 2.5,
                  "fix_cause": 2.4, "fix_problem": 2.3, "let": 2.5, "verb": 1.8,
                  "slot": 2.4, "then_add": 2.4, "colon": 2.3}
"""Headline forms by trust: a replaced thing or an added one is the change itself; a clause after a comma may only
say more about it."""
_WHOLE_RANK = 1.8
"""A unit's whole choice: the card of last resort, below every relation read from the unit."""
_SLOT_RANK = {"object": 2.2, "place": 2.3, "agent": 2.3, "instrument": 2.3}
"""In-place questions: what was moved where, what acts and what is used name a mechanism; an object may be any
thing the decision touches."""
_GOAL_FIRST = frozenset({"for", "replace", "subject", "subject_do", "slot"})
"""Headline forms whose question takes the summary's goal in front ("为提升吞吐，该 PR 为 X 引入了什么？")."""

# Relation ranks: why/how questions over contrast and purpose teach the most.
_RELATION_RANK = {
    Relation.CONTRAST: 3.0, Relation.AVOID: 2.8, Relation.PURPOSE: 2.6, Relation.DEFINITION: 2.6,
    Relation.RESULT: 2.4, Relation.MEANS: 2.2, Relation.SOLVE: 2.0, Relation.ROLE: 1.9,
    Relation.ACTION: 1.8, Relation.SHOW: 1.5, Relation.TERM: 1.6, Relation.CONDITION: 1.6, Relation.CAUSE: 2.4, Relation.TRADEOFF: 2.5,
    Relation.WHOLE: 1.8,
}


def cue_for(review: Review) -> str:
    """The context cue on every question: the repository's name and what the PR is about.

    What it is about is the thing the summary changes, when its headline names one (为 X 引入 Y, X 新增 Y, 把 X
    改成 Y: X), or the part before its colon; else the summary's first clause.  Never the change itself: a cue
    that said it would give away the cards asking about it.
    """
    title = core_of(review.entry.title)
    topics = {f.marker: f.subject for f in review.facts if f.relation == Relation.HEADLINE and units(f.subject) >= 2}
    topic = next((topics[form] for form in _TOPIC_FORMS if form in topics), "")
    first = _FIRST_CLAUSE_END.split(title.replace("：", "，").replace(": ", "，"), maxsplit=1)[0].strip()
    label = topic or (first if units(first) >= 6 else title)
    return f"{review.entry.repo.split('/')[-1]} · {label.replace('`', '')}"  # a label: no code markup to render


_TOPIC_FORMS = ("colon", "for", "ba", "migrate", "let", "subject", "subject_do")
"""Headline forms whose shown part names what the PR changes (the cue's topic), the most telling first."""


_PLACE = re.compile(r"^(?:在)?([^\s，,`的]{1,6}[中里])\s*(?=`|[^，,]*的[^，,]*$)")


def _placed(decision: str) -> tuple[str, str]:
    """Where a decision that is a thing applies, and the thing: "测试中 `X` 的轻量级单测手法" → ("测试中", "`X` 的…").

    Asked "为避免 Y，该 PR 怎么做？" such an answer reads as the PR's fix; "测试中，为避免 Y…" says where it is.  A
    decision that is an action ("在构造函数中进行校验") keeps its place: without it the answer says too little.
    """
    match = _PLACE.match(decision)
    if not match or units(decision) - units(match.group()) < 4:
        return "", decision
    return match.group(1), decision[match.end():].strip()


def _pick(key: str, options: tuple[str, ...]) -> str:
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return options[digest[0] % len(options)]


def _bare(text: str) -> str:
    """An argument as it reads inside a question: no enclosing quotes or brackets."""
    text = text.strip().strip("「」")
    if text.startswith("“") and text.endswith("”") and text.count("“") == 1:  # “两库分工” reads 「两库分工」
        text = text[1:-1]
    return text


_ASCII_EDGE = re.compile(r"[A-Za-z0-9`_)\]%]")
_CJK = re.compile(r"[\u3400-\u9fff]")


@lru_cache(maxsize=256)  # a fixed set of templates, parsed for every question otherwise
def _parsed(template: str) -> tuple[tuple[str, str | None], ...]:
    return tuple((literal, field) for literal, field, _, _ in string.Formatter().parse(template))


def fill(template: str, **slots: str) -> str:
    """Fill *template*, spacing English and code off from Chinese where a slot meets the template."""
    out = ""
    for literal, field in _parsed(template):
        for piece in (literal, _bare(slots[field]) if field else ""):
            if not piece:
                continue
            if out and ((_ASCII_EDGE.match(out[-1]) and _CJK.match(piece[0]))
                        or (_CJK.match(out[-1]) and _ASCII_EDGE.match(piece[0]))):
                out += " "
            out += piece
    return out


def is_generic(text: str) -> bool:
    core = BOOST_VERB.sub("", text.strip())
    return text.strip() in GENERIC or core in GENERIC or text.strip().strip("`").lower() in GENERIC


class CardMaker:
    """Turns the facts of one review into candidate cards."""

    def __init__(self, review: Review, seg: Segmenter) -> None:
        self.review = review
        self.seg = seg
        self.cue = cue_for(review)
        self.candidates: list[Candidate] = []
        self.gaps: dict[tuple[str, str], list[Fact]] = {}
        self.defined: set[str] = set()
        """Names of the decisions whose definition card was offered."""
        """(clause, its sentence) → facts offered as cloze gaps in that clause."""

    def qa(self, fact: Fact, kind: CardKind, family: str, answer: str, anchor: str, phrasing: str = "",
           where: str = "", **slots: str) -> None:
        """Offer a question/answer card of *family* (its key), phrased by the templates of *phrasing* or *family*."""
        key = f"{kind.value}:{family}:{norm(anchor)}"
        options = TEMPLATES[phrasing or family]
        x = slots.get("x", "")
        # "为什么要引入了 X", "为什么要不是…", "为什么要新请求的 grammar 被提交…" read wrong: only a bare verb phrase fits.
        if "了" in x or x.startswith(("不", "没")) or not self.opens_with_verb(x):
            options = tuple(o for o in options if not o.startswith("为什么要")) or options
        question = fill(_pick(key, options), **slots)
        name = fact.name if fact.relation not in (Relation.DEFINITION, Relation.ACTION) else ""
        if _FRAME_LABEL.fullmatch(name):
            name = ""  # "「核心思路」中，…" names nothing
        if name and kind != CardKind.NAME and norm(name) not in norm(question) and units(name) <= 12:
            question = fill("「{n}」中，{q}", n=name, q=question)
        elif where:
            question = fill("{w}，{q}", w=where, q=question)
        rank = _RELATION_RANK.get(fact.relation, 1.0)
        if kind == CardKind.WHY and fact.relation in (Relation.PURPOSE, Relation.AVOID, Relation.RESULT):
            rank -= 0.7  # "为什么要在构造函数中校验？→ 尽早暴露错误" tends to state the obvious; the how way round does not
        if is_self_reference(fact.subject) or _ASSESSMENT.search(fact.sentence):
            rank -= 1.0  # the reviewer's overall judgement ("本 PR 是一个高质量的…"), not a decision
        if family == "definition" and _NAMED_CONTRAST.search(fact.subject):
            return  # 「显式开关而非默认启用」是怎么做的？→ 手动开启: the name said it; its reason teaches more
        self._add(fact, kind, key, question, answer, rank)

    def gap(self, fact: Fact, clause: str, context: str) -> None:
        """Offer *fact*'s subject as a cloze deletion in *clause* (shown in *context* if the clause is short)."""
        # A deep path (a/b/c/d.py) is never worth recalling whole, and it cannot be blanked in part.
        if fact.subject.count("/") >= 3:
            return
        # A member of a list (A、B 和 C) or half of a pair (A 与 B) is guessed from the rest, or not worth recalling;
        # what the summary adds is not (新增 LoRA 能力通告与握手校验: each half is a change).
        if fact.marker not in ("step", "headline") and in_a_list(fact.subject, clause):
            return
        # Recalling a decision's name from its explanation is the name card in disguise.
        if fact.name and norm(fact.subject) in norm(fact.name):
            return
        # An identifier is worth recalling where it acts (由 X 完成, 用 X 把…, 只返回 X), not where it is mentioned.
        if fact.marker == "code" and not acts_in(fact.subject, context):
            return
        if fact.subject in clause and not is_generic(fact.subject):
            self.gaps.setdefault((clause, context), []).append(fact)

    def clozes(self) -> None:
        """A cloze note per gap (a procedure: one note over its steps), each over the text that holds the gap."""
        by_text: dict[str, list[Fact]] = {}
        for (clause, context), facts in self.gaps.items():
            text = _window(clause, context, max(units(f.subject) for f in facts))
            text = _LEADING_IT.sub("该 PR ", _LEADING_CONNECTIVE.sub("", text).strip())
            by_text.setdefault(text, []).extend(f for f in facts if f.subject in text)
        # A clause that sits inside a longer text of the same sentence joins it, so the
        # sentence's gaps form one note instead of competing notes over the same words.
        for text in sorted(by_text, key=len):
            host = next((t for t in by_text if t != text and text in t and units(t) <= 60), None)
            if host:
                by_text[host].extend(by_text.pop(text))
        for text, facts in by_text.items():
            chosen: list[Fact] = []
            for fact in _cloze_order(facts):
                if not any(fact.subject in c.subject or c.subject in fact.subject for c in chosen):
                    chosen.append(fact)
            # One gap a note, so that each card asks one thing; a procedure's steps share a note, each
            # blanked in turn with the others visible.
            steps = [f for f in chosen if f.marker == "step"]
            groups = [steps[:MAX_STEP_DELETIONS]] if steps else [[f] for f in chosen]
            for group in groups:
                group = sorted(group, key=lambda f: text.find(f.subject))
                marked = text
                for ordinal, fact in enumerate(group, start=1):
                    marked = marked.replace(fact.subject, deletion(ordinal, fact.subject))
                rank = max(_term_rank(f, text) for f in group)
                key = "cloze:" + "|".join(sorted(norm(f.subject) for f in group))
                # The summary's own cloze has the repository alone as its cue, as the headline card does.
                cue = self.review.entry.repo.split("/")[-1] if group[0].marker == "headline" else self.cue
                self._add(group[0], CardKind.CLOZE, key, marked, "；".join(f.subject for f in group), rank, cue)

    def _add(self, fact: Fact, kind: CardKind, key: str, prompt: str, answer: str, rank: float, cue: str = "") -> None:
        entry = self.review.entry
        card = Card(entry=entry, kind=kind, key=key, prompt=prompt, answer=answer, cue=cue or self.cue,
                    sentence=fact.sentence, line=fact.line, verdict=self.review.verdict,
                    relation=fact.relation)
        about = f"{fact.relation.value}:{norm(fact.subject)}:{norm(fact.detail)}"
        self.candidates.append(Candidate(card, rank, entry.review, about, unit=fact.unit, marker=fact.marker,
                                         phrase=fact.score))

    # -- one method per relation ------------------------------------------------------

    def headline(self, fact: Fact) -> None:
        """The change the PR summary states, asked from its goal or object under the repository's cue."""
        family = f"headline_{fact.marker}"
        if family not in TEMPLATES:
            return
        key = f"{CardKind.HEADLINE.value}:{fact.marker}:{norm(fact.subject)}"
        shown = fact.subject
        if fact.marker == "slot":  # an in-place question: the summary with 什么 where its answer stood
            before, _, after = shown.partition(GAP)
            shown = fill("{b}{w}{a}", b=before.rstrip(), w=fact.verb, a=after.lstrip())
        question = fill(_pick(key, TEMPLATES[family]), s=shown, v=fact.verb, g=fact.prefix)
        if fact.prefix and fact.marker in _GOAL_FIRST:
            question = fill("为{g}，{q}", g=fact.prefix, q=question)
        entry = self.review.entry
        number = own_pr_number(entry.title, entry.review)
        cue = f"{entry.repo.split('/')[-1]} · PR #{number}" if number else entry.repo.split("/")[-1]
        card = Card(entry=entry, kind=CardKind.HEADLINE, key=key, prompt=question, answer=fact.detail, cue=cue,
                    sentence=fact.sentence, line=fact.line, verdict=self.review.verdict, relation=fact.relation)
        rank = _HEADLINE_RANK.get(fact.marker, 2.0)
        about = f"headline:{norm(fact.detail)}"
        self.candidates.append(Candidate(card, rank, entry.review, about, unit=0, marker=fact.marker))

    def slot(self, fact: Fact) -> None:
        """A phrase of a decision asked in place: the review's clause with 什么/哪里/多少 where the phrase stood."""
        before, _, after = fact.subject.partition(GAP)
        question = fill("{b}{w}{a}？", b=before.rstrip(), w=fact.verb, a=after.lstrip())
        name = fact.name
        if name and not _FRAME_LABEL.fullmatch(name) and norm(name) not in norm(question) and units(name) <= 12:
            question = fill("「{n}」中，{q}", n=name, q=question)
        key = f"{CardKind.WHAT.value}:{fact.marker}:{norm(fact.detail)}"
        self._add(fact, CardKind.WHAT, key, question, fact.detail, _SLOT_RANK.get(fact.marker, 2.0))

    def add_fact(self, fact: Fact) -> None:
        x, y = fact.subject, fact.detail
        rel = fact.relation
        if rel == Relation.HEADLINE:
            self.headline(fact)
            return
        if rel == Relation.SLOT:
            self.slot(fact)
            return
        if rel == Relation.WHOLE:
            if fact.marker == "name" and fact.name in self.defined:
                return  # the named decision's own card already asks what it does
            family = f"whole_{fact.marker}"
            self.qa(fact, CardKind.DECISION, family, y, x, x=x)
            return
        if PRONOUN_RE.match(x) and not is_self_reference(x) and rel != Relation.TRADEOFF:
            return  # an unresolved 它/这/其 makes every question about it ambiguous
        if rel == Relation.DEFINITION:
            self.defined.add(fact.name)
            if fact.marker == "label":  # "**默认值**：保持 False" → 该 PR 的默认值怎么定？
                key = f"{CardKind.DECISION.value}:label:{norm(x)}"
                self._add(fact, CardKind.DECISION, key, LABEL_QUESTIONS[x], y, _RELATION_RANK[rel])
                return
            if fact.marker == "new":  # "新增 `X`，自动下载…": what the new piece does
                self.qa(fact, CardKind.DECISION, "component", y, x, x=x)
                return
            frame = _FRAME_LABEL.fullmatch(x)
            if frame:  # "核心思路是 X": the review says what X is to the PR
                # "该 PR 的思路是什么？" is vague: ask how it did what its summary says, where that is a short verb phrase.
                done = self.summary_action()
                if done:
                    self.qa(fact, CardKind.DECISION, "frame", y, x, phrasing="frame_how", c=done)
                else:
                    self.qa(fact, CardKind.DECISION, "frame", y, x, x=_FRAME_WORDS.get(x, x))
                return
            self.qa(fact, CardKind.DECISION, "definition", y, x, x=x)
        elif rel == Relation.CONTRAST:
            about, chosen = fact.prefix, x
            moved = _BA_TOPIC.match(x) if x.startswith(("把", "将")) or fact.verb in ("把", "将") else None
            if not about and moved and units(moved.group(1)) <= 10:  # "把图的输入张量改为在计算图内分配，而非…"
                about, chosen = moved.group(1).strip(), moved.group(2).strip()
            if fact.marker.startswith(_MIGRATION) and self.in_summary(x):
                return  # "从 A 迁移到 B" where the summary already says B: the PR's headline, not a decision in it
            family = ("migrate" if fact.marker.startswith(_MIGRATION) else "contrast_moved" if moved and about
                      else "contrast_about" if about else "contrast_thing" if self.is_thing(x) else "contrast")
            self.qa(fact, CardKind.CONTRAST, family, chosen, y, y=y, p=about)
            if not fact.marker.startswith(_MIGRATION):  # "从 A 迁移到 B": A is the old format, not an alternative weighed
                self.relation_cloze(fact, y, "alternative")  # what it replaced is worth recalling too
            self.relation_cloze(fact, x)
        elif rel == Relation.PURPOSE:
            family = "ease" if fact.marker in ("便于", "方便", "以便于") else "purpose"
            self.qa(fact, CardKind.WHY, f"{family}_why", y, x, x=x)
            if not is_generic(y) and not _NOT_DOING.match(x):
                # "如何做到保证页大小一致" doubles the verb: a purpose that opens with 保证 is asked "如何保证…".
                phrasing = "purpose_how_verb" if family == "purpose" and y.startswith(_ENSURE + ("保持",)) else ""
                where, done = _placed(x)
                self.qa(fact, CardKind.HOW, f"{family}_how", done, y, phrasing=phrasing, where=where, y=y)
        elif rel == Relation.AVOID:
            family = "eliminate" if fact.verb == "消除" else "avoid"
            self.qa(fact, CardKind.WHY, f"{family}_why", y, x, x=x)
            if not _NOT_DOING.match(x):  # "为避免两份模型数据，怎么做？→ 不再额外拷贝一份": no how, only its negation
                where, done = _placed(x)
                self.qa(fact, CardKind.HOW, f"{family}_how", done, y, where=where, y=y)
            self.relation_cloze(fact, y)
        elif rel == Relation.RESULT:
            if is_self_reference(x):
                return  # "该 PR 的效果是什么？" names no decision: the effect is the whole PR's, a benchmark at best
            if fact.verb == "这样":
                self.qa(fact, CardKind.WHY, "hence_what", y, x, x=x)
            elif fact.verb in ("无需", "不必", "不再需要"):
                self.qa(fact, CardKind.WHY, "spare_why", y, x, x=x)
            elif fact.marker.endswith("了") and fact.verb not in _ENSURE + _EFFECT:
                self.qa(fact, CardKind.WHY, "effect_verb_why", y, x, x=x, v=fact.verb)
            elif fact.verb in _ENSURE:
                self.qa(fact, CardKind.WHY, "ensure_why", y, x, x=x, v=fact.verb)
                self.qa(fact, CardKind.HOW, "ensure_how", x, y, y=y, v=fact.verb)
            elif fact.verb in _EFFECT:
                self.qa(fact, CardKind.WHY, "effect_why", y, x, x=x)
                self.qa(fact, CardKind.HOW, "effect_how", x, y, y=y)
            else:
                self.qa(fact, CardKind.WHY, "result_why", y, x, x=x)
                self.qa(fact, CardKind.HOW, "result_how", x, y, y=y)
        elif rel == Relation.MEANS:
            self._means(fact)
        elif rel == Relation.TRADEOFF:
            owner = x if x and not PRONOUN_RE.match(x) and not is_self_reference(x) else "该 PR 的做法"
            self.qa(fact, CardKind.WHY, "benefit_what" if fact.verb == "好处" else "cost_what", y, owner + fact.verb, x=owner)
        elif rel == Relation.CAUSE:
            if "或" not in y:  # "为什么 A 或 B 时自动关闭？": one reason rarely covers both cases
                self.qa(fact, CardKind.WHY, "cause_why", x, y, y=y)
        elif rel == Relation.CONDITION:
            return  # "什么时候 Y？→ 请求到来时": the when of a step is rarely what a decision is about
        elif rel == Relation.ACTION:
            named = bool(fact.name) and not PRONOUN_RE.match(fact.name) and not _FRAME_LABEL.fullmatch(fact.name)
            agent = fact.name if named else "该 PR"
            if named and _LOCATIVE.search(fact.name):
                agent = f"{fact.name}，该 PR"
            verb = y[: len(fact.verb)] if fact.verb and y.startswith(fact.verb) else ""
            if verb and y[len(verb):len(verb) + 1] in _COMPLEMENTS:  # 扼杀 + 在握手阶段: the complement asks where
                verb = y[: len(verb) + 1]
            if verb.endswith(("成", "为")) and units(y) - units(verb) >= 2:  # 把 X 拆成 Y: ask for Y
                into = _DONE_TAIL.sub("", y[len(verb):].strip())  # "合并成一个通信组完成": the group, not 完成
                self.qa(fact, CardKind.HOW, "action_into", into, x, a=agent, x=x, v=verb)
            elif verb.endswith(("到", "在", "进", "至")) and units(y) - units(verb) >= 2 \
                    and not _GOES_ON.search(y[len(verb):]):  # 收敛到一次并跨层缓存: not a place, two steps
                family = "action_amount" if verb.startswith(_CHANGE_IN_AMOUNT) else "action_where"
                self.qa(fact, CardKind.HOW, family, y[len(verb):].strip(), x, a=agent, x=x, v=verb)
            else:
                self.qa(fact, CardKind.HOW, "action_what", y, x, a=agent, x=x)
            # No "who did it" card: "由什么把 X 转成 FP32？→ X 的 step 会先" read as a garbled fragment (blind review r1).
        elif rel == Relation.SHOW:
            return  # "X 体现了/展示了 Y" judges the PR; it states no decision
        elif rel == Relation.SOLVE:
            subject = "该 PR" if is_self_reference(x) else x
            self.qa(fact, CardKind.WHY, "solve_what", y, subject, x=subject)
            if not is_self_reference(x):
                self.qa(fact, CardKind.HOW, "solve_how", x, y, y=y)
        elif rel == Relation.ROLE:
            if is_generic(y):
                return  # "用什么作为默认？": a role that names nothing specific asks nothing
            self.qa(fact, CardKind.NAME, "role_who", x, y, y=y)
            self.qa(fact, CardKind.WHY, "role_what", y, x, x=x)

    def summary_action(self) -> str:
        """The PR summary's first clause when it is a short verb phrase ("放宽 CuPy 依赖约束"), else ''."""
        first = _FIRST_CLAUSE_END.split(self.review.entry.title.strip().rstrip("。.！!"), maxsplit=1)[0].strip()
        first = first.split("：")[0].split(":")[0].strip()
        tokens = [t for t in self.seg.tokenize(first) if t.text.strip()]
        if not tokens or tokens[0].protected or not 4 <= units(first) <= 16:
            return ""
        return first if self.seg.pos(tokens[0].text).startswith("v") or tokens[0].text in ("为", "把", "将", "让") else ""

    def in_summary(self, text: str) -> bool:
        """Whether the words of *text* that are not Chinese (JSON, a code name) are all in the PR summary."""
        title = self.review.entry.title.lower()
        words = [word.lower() for word in _ASCII_WORDS.findall(text) if len(word) >= 2]
        return bool(words) and all(word in title for word in words)

    def opens_with_verb(self, text: str) -> bool:
        tokens = [t for t in self.seg.tokenize(text) if t.text.strip()]
        return bool(tokens) and not tokens[0].protected and self.seg.pos(tokens[0].text).startswith(("v", "p", "d"))

    def is_thing(self, text: str) -> bool:
        """Whether *text* names a thing (a noun phrase) rather than a way of doing something."""
        tokens = [t for t in self.seg.tokenize(text) if t.text.strip()]
        if not tokens or tokens[0].text in _WAY_OPENERS:
            return False
        verbs = [i for i, t in enumerate(tokens[:-1]) if not t.protected and self.seg.pos(t.text).startswith("v")
                 and tokens[i + 1].text != "的"]
        last = tokens[-1]
        return not verbs and (last.protected or self.seg.pos(last.text).startswith(("n", "eng")))

    def relation_cloze(self, fact: Fact, target: str, kind: str = "relation") -> None:
        """The same fact as a cloze over its sentence, deleting the chosen option or the effect."""
        if 2 <= units(target) <= 12 and target in fact.sentence:
            term = Fact(Relation.TERM, target, fact.sentence, fact.sentence, fact.line, marker=kind, name=fact.name,
                        unit=fact.unit)
            clause = next((c for c in _AFTER_CLAUSE.split(fact.sentence) if target in c), fact.sentence)
            self.gap(term, clause.strip().rstrip("；;。"), fact.sentence)

    def _means(self, fact: Fact) -> None:
        x, y = fact.subject, fact.detail
        code = CODE_SPAN.search(fact.name)
        if is_generic(x) and code:  # "X() 的设计——用最小改动保证 Y": the mechanism is X(), not "最小改动"
            self.qa(replace(fact, subject=code.group(0), name=""), CardKind.HOW, "means_code", code.group(0), y, y=y)
            return
        if fact.marker:
            marker = "通过" if fact.marker == "通过" else "用"
            self.qa(fact, CardKind.HOW, "means_how", x, y, p=fact.prefix, m=marker, y=y)
            if fact.verb and y.startswith(fact.verb):
                obj = y[len(fact.verb) :].strip()
                tokens = self.seg.tokenize(obj)
                nouny = bool(tokens) and (tokens[0].protected or self.seg.pos(tokens[0].text).startswith(("n", "eng")))
                # 重采样器实例复用 is a noun phrase; 入口执行驱逐 (a verb with an object) is not.
                verb_inside = any(not t.protected and self.seg.pos(t.text).startswith("v") and t.text != "vn"
                                  for t in tokens[:-1])
                if nouny and not verb_inside and units(obj) <= 8:
                    self.qa(fact, CardKind.WHY, "means_what", obj, x, m=marker, x=x, v=fact.verb)
        else:
            self.qa(fact, CardKind.HOW, "agent_how", x, y, y=y)


def make_candidates(review: Review, seg: Segmenter | None = None) -> list[Candidate]:
    """Every card deckgen could make for *review*, before the gate."""
    maker = CardMaker(review, seg or get_segmenter())
    for fact in review.facts:
        if fact.relation != Relation.TERM:
            maker.add_fact(fact)
        elif fact.marker in CLOZE_TERMS:
            maker.gap(fact, fact.detail, fact.sentence)
    maker.clozes()
    return maker.candidates


_WAY_OPENERS = frozenset({"在", "当", "于", "从", "对", "把", "将", "被", "由", "向", "以", "为", "通过", "用", "按", "只",
                          "直接", "先", "再", "每", "各", "不", "自动", "统一"})
_BA_TOPIC = re.compile(r"^(?:把|将)?(.+?)((?:改为|改成|换成|放在|放到|移到|挪到|交给|统一到|集中到|改由).+)$")
_ASCII_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*")
_DONE_TAIL = re.compile(r"\s*(?:来)?(?:完成|实现|进行)$")
_NAMED_CONTRAST = re.compile(r"而非|而不是|不再|取代|替代")
_MIGRATION = ("从", "原先")
"""Markers of a move from an old form to a new one (从 A 迁移到 B, 原先的 A 改为 B): A was replaced, not weighed."""
_NOT_DOING = re.compile(r"^(?:不再|不|无需|不必|没有|避免|防止)")
_GOES_ON = re.compile(r"并|再|然后|同时")
_COMPLEMENTS = ("到", "在", "进", "至", "成", "为")
_CHANGE_IN_AMOUNT = ("降", "减", "缩", "升", "增", "提", "压", "扩")
_FRAME_LABEL = re.compile(r"(?:核心|关键|主要|整体)?(?:思路|做法|设计决策|决策|修复方式|处理方式|解决方式|处理思路|修复思路|方案|处理|修复)")
_FRAME_WORDS = {"处理": "处理方式", "修复": "修复方式", "决策": "设计决策"}


_ACTS_BEFORE = re.compile(r"(?:由|通过|借助|返回|改用|采用)\s*$")
_ACTS_AFTER = re.compile(r"^\s*(?:负责|完成|统一|把|来|做|实现|接管|保证|确保)")


def acts_in(term: str, text: str) -> bool:
    """Whether *term* (an identifier) does something in *text*: an agent or an instrument, not a mention."""
    at = text.find(term)
    return at >= 0 and bool(_ACTS_BEFORE.search(text[:at]) or _ACTS_AFTER.match(text[at + len(term):]))


_BREAKS = re.compile(r"[，,；;。：:]")
_LONGEST_WINDOW = 60


def _window(clause: str, context: str, largest: int) -> str:
    """The text a gap of *largest* units in *clause* is shown in: the clause when it is long enough to hide it in,
    else its sentence *context*, or, when that is long, the clause with the clauses beside it up to a length a
    cloze holds."""
    size = units(clause)
    if size >= 12 and largest / size <= 0.3:
        return clause
    at = context.find(clause)
    if at < 0:
        return clause
    if units(context) <= _LONGEST_WINDOW:
        return context
    breaks = [m.end() for m in _BREAKS.finditer(context)]
    start, end = at, at + len(clause)
    while units(context[start:end]) < 12 or largest / max(units(context[start:end]), 1) > 0.3:
        before = max((b for b in breaks if b < start), default=0) if start > 0 else None
        after = min((b for b in breaks if b > end), default=len(context)) if end < len(context) else None
        grown = [(a, b) for a, b in ((before, end), (start, after)) if a is not None and b is not None]
        grown = [(a, b) for a, b in grown if units(context[a:b]) <= _LONGEST_WINDOW]
        if not grown:
            break
        start, end = min(grown, key=lambda span: span[1] - span[0])
    return context[start:end].strip().rstrip("，,；;：:")


def _term_rank(fact: Fact, text: str) -> float:
    """How much a deletion teaches: mechanisms over names, names over asides."""
    rank = _TERM_RANK.get(fact.marker, 1.4)
    before = text[: max(text.find(fact.subject), 0)]
    if max(before.rfind("（"), before.rfind("(")) > max(before.rfind("）"), before.rfind(")")):
        rank -= 0.5  # blanked inside a parenthetical aside
    if units(text) > 60:
        rank -= 0.3
    if _TEST_PATH.search(fact.subject):
        rank -= 0.3  # a test file's name is rarely what a reader needs to recall
    return rank


def _is_code(term: str) -> bool:
    return term.startswith("`") or bool(_PRINTABLE_ASCII.fullmatch(term) and _CODE_PUNCT.search(term))


def _cloze_order(terms: Iterable[Fact]) -> list[Fact]:
    """Most specific terms first: code, then English terms, then the rest; longer before shorter."""
    def rank(fact: Fact) -> tuple[int, int]:
        term = fact.subject
        ascii_term = bool(PROTECTED_RE.fullmatch(term))
        return (0 if _is_code(term) else 1 if ascii_term else 2, -units(term))
    return sorted(terms, key=rank)


Result = tuple[Review, tuple[Card, ...]]
"""An entry's review and its (untagged) cards: what :func:`make_result` makes."""


def make_result(entry: Entry) -> Result:
    """One entry's review and cards (the segmenter is set up on first use, once per process)."""
    seg = get_segmenter()
    review = extract_review(entry, seg)
    return review, tuple(make_cards(review, seg))


def make_cards(review: Review, seg: Segmenter | None = None) -> list[Card]:
    """The cards of one review that pass the quality gate and are selected (:func:`~deckgen.cards.select.select_cards`)."""
    seg = seg or get_segmenter()
    return select_cards(make_candidates(review, seg), seg, limit=MAX_CARDS_PER_PR, verdict=review.verdict,
                        scores=review.clause_scores)
