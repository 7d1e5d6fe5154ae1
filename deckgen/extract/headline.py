"""An entry's summary line in; the facts of its headline change out (:data:`Relation.HEADLINE`).

Every PR gets a card on the change its one-line summary states.  That card's cue is the repository alone, so
its question must carry the summary's goal or object and its answer the change, which then never shows on the
front.  The forms a summary takes, and the words that tell them apart, are rule data
(``rules/headline.toml``); each form that fits gives one fact, and the quality gate and the ranking choose.

A fact here has ``subject`` the part the question shows (goal, object, what was replaced, the head before a
colon), ``detail`` the answer, ``marker`` the form, ``verb`` the change verb and ``prefix`` a goal the question
may add ("为提升吞吐，…").
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

from ..files.datadir import data_dir
from ..text.clauses import clean
from ..text.segment import PROTECTED_RE, Segmenter, units
from ..types import Entry, Fact, Relation
from .slots import slot_facts

HEADLINE_FILE = "headline.toml"
_LONGEST_ANSWER = 35
"""Units an answer may have: a summary's change is one fact, told in a clause or two."""
_PR_SUFFIX = re.compile(r"\s*[（(]\s*#\d+\s*[)）]\s*$|^\s*(?:PR\s*)?#\d+\s*[:：]?\s*", re.IGNORECASE)
_LABEL = re.compile(r"^[^，,：:\s]{1,4}\s*[：:]\s*(?=\S)")
"""A label heading a summary ("文档：…", "CI: …"), like a [tag]: what kind of PR, not what it changes."""
_TAG_PREFIX = re.compile(r"^\s*(?:\[[^\]]{1,24}\]\s*)+")
_END = "。.！!；;，, "
_CODE = re.compile(r"`[^`]*`")
_ALSO = re.compile(r"^(?:并且|并|同时|还|另外|此外|顺带|顺便)\s*")
_WHEN = re.compile(r"^[^，,；;]{1,24}?时\s*(?:可以|能|能够|会|将)?\s*(?:显著|大幅|明显|进一步|大大|有效)?\s*")
_FIX_PROBLEM = re.compile(r"^(?:修复|解决)了?\s*(.+?)\s*的(?:问题|错误|缺陷|bug)$", re.IGNORECASE)
_OBJECT_FORMS = frozenset({"for", "replace", "migrate", "ba", "subject", "subject_do", "let"})
_LET = re.compile(r"^(?:在[^，,]{2,40}?上)?\s*(?:让|使)(?!用|得)\s*(.+?)\s*(?:也|都)?(支持|兼容|可以使用|能使用|接入|适配)(?=\s*\S)")
_FIX_CAUSE = re.compile(r"^(?:修复|解决)了?\s*(.+?)\s*(?:因为?|由于)\s*(.+?)\s*而?(?:导致|引起|造成|引发)的\s*(.+)$")


@dataclass(frozen=True)
class HeadlineRules:
    goal_openers: tuple[str, ...]
    weak_goals: tuple[str, ...]
    adding: tuple[str, ...]
    replacing: tuple[str, ...]
    replace_openers: tuple[str, ...]
    moving: tuple[str, ...]
    adverbs: tuple[str, ...]
    verb_adverbs: frozenset[str]
    goal_ends: tuple[str, ...]


@lru_cache(maxsize=1)
def rules() -> HeadlineRules:
    data = tomllib.loads((data_dir("rules") / HEADLINE_FILE).read_text(encoding="utf-8"))
    longest_first = lambda words: tuple(sorted(words, key=len, reverse=True))  # noqa: E731
    return HeadlineRules(longest_first(data["goal"]["openers"]), tuple(data["goal"]["weak"]),
                         longest_first(data["change"]["adding"]), longest_first(data["change"]["replacing"]),
                         longest_first(data["change"]["replace_openers"]), longest_first(data["change"]["moving"]),
                         longest_first(data["lead"]["adverbs"]), frozenset(data["change"]["verb_adverbs"]),
                         tuple(data["goal"]["ends"]))


def core_of(title: str) -> str:
    """The summary without its PR number, a leading [tag] or label (文档：, CI:) and the full stop."""
    core = _TAG_PREFIX.sub("", _PR_SUFFIX.sub("", title.strip())).strip().rstrip(_END).strip()
    label = _LABEL.match(core)
    return core[label.end():].strip() if label else core


def _mask(text: str) -> str:
    return _CODE.sub(lambda m: "`" + "x" * (len(m.group()) - 2) + "`", text) if "`" in text else text


def _split(text: str, breaks: str) -> list[str]:
    """*text* cut at any of *breaks* outside code spans and brackets."""
    masked, out, depth, start = _mask(text), [], 0, 0
    for i, char in enumerate(masked):
        if char in "（(“「":
            depth += 1
        elif char in "）)”」":
            depth = max(depth - 1, 0)
        elif depth == 0 and char in breaks:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [c.strip() for c in out if c.strip()]


def _colon(text: str) -> tuple[str, str]:
    """``HEAD：BODY`` → (HEAD, BODY); ('', text) when there is no such colon."""
    masked = _mask(text)
    match = re.search(r"：|:(?=\s)", masked)
    if not match:
        return "", text
    head, body = text[: match.start()].strip(), text[match.end():].strip()
    return (head, body) if units(head) >= 3 and units(body) >= 3 else ("", text)


class _Summary:
    def __init__(self, entry: Entry, seg: Segmenter) -> None:
        self.entry = entry
        self.seg = seg
        self.rules = rules()
        self.facts: list[Fact] = []

    def fact(self, form: str, shown: str, answer: str, verb: str = "", goal: str = "") -> None:
        shown, answer = clean(shown), clean(answer)
        # A name (CMake, NCCL) is one unit and a whole answer; a single Chinese character never is.
        if shown and answer and units(answer) <= _LONGEST_ANSWER and (units(answer) >= 2 or answer.isascii()):
            self.facts.append(Fact(Relation.HEADLINE, shown, answer, self.entry.title, self.entry.title_line,
                                   marker=form, verb=verb, prefix=goal))

    def opens_with(self, clause: str, words: tuple[str, ...]) -> str:
        return next((w for w in words if clause.startswith(w)), "")

    def is_goal(self, clause: str) -> bool:
        if clause.startswith("为") and clause.endswith(self.rules.goal_ends):  # 为 PyTorch 2.3 做准备
            return True
        when = _WHEN.match(clause)
        if when and not self.opens_with(clause, self.rules.goal_openers):
            # 开启 Flash Attention 时显著降低上下文显存: what it buys, in that case
            return bool(self.opens_with(clause[when.end():], self.rules.goal_openers))
        opener = self.opens_with(clause, self.rules.goal_openers)
        if not opener:
            return False
        if opener in ("使", "让", "以"):  # 使用, 让步, 以及 open no goal; 以 X 降低 Y says how, not what for
            tokens = [t for t in self.seg.tokenize(clause) if t.text.strip()]
            if not tokens or tokens[0].text != opener:
                return False
            return opener != "以" or (len(tokens) > 1 and self.seg.pos(tokens[1].text).startswith("v"))
        return True

    def goal_text(self, clause: str) -> str:
        """A goal clause as it reads after 为 in a question: 以提升吞吐 → 提升吞吐."""
        return re.sub(r"^(?:以便|以|从而|进而|为了)\s*", "", clause).strip() if not clause.startswith("为") or \
            clause.startswith("为了") else clause[1:].strip()

    def read(self) -> list[Fact]:
        title = core_of(self.entry.title)
        head, body = _colon(title)
        clauses = [self.without_adverb(c) for c in _split(head or title, "，,；;")]
        goals = [c for c in clauses if self.is_goal(c)]
        changes = [c for c in clauses if c not in goals]
        if not [c for c in changes if not _ALSO.match(c)]:  # 修复 X(，并修正 Y): a fix with no other change is the change
            weak = [c for c in goals if self.opens_with(c, self.rules.weak_goals) or _LET.match(c)]
            changes, goals = weak + changes, [c for c in goals if c not in weak]
        goal = self.goal_text(goals[0]) if goals else ""
        main = [c for c in changes if not _ALSO.match(c)]
        for clause in changes:
            self.change_forms(self.without_adverb(_ALSO.sub("", clause)), goal)
        if goal and main and not any(f.marker in _OBJECT_FORMS for f in self.facts):
            self.fact("goal", goal, main[0])  # the whole change, when no form asks for the thing it adds or replaces
        if head:  # the body whole when it is short enough: its first clause alone often says half (r1)
            first = _split(body, "；;")[0]
            self.fact("colon", head, first if units(first) <= _LONGEST_ANSWER else _split(body, "，,；;")[0])
        for number, clause in enumerate(main):
            for slot in slot_facts(_ALSO.sub("", clause), self.entry.title_line, self.seg):
                if slot.marker in ("object", "instrument", "place"):
                    shown = slot.subject if not number else f"{main[0]}，{slot.subject}"
                    self.fact("slot", shown, slot.detail, slot.verb, goal)  # 接入什么作为新的注意力后端？
        if not goals and len(main) >= 2:  # the summary's second clause, when it adds a thing: what was added for it
            then = _ALSO.sub("", main[1])
            words = [t for t in self.seg.tokenize(then) if t.text.strip()]
            verb = words[0].text if words and words[0].text in self.rules.adding else ""  # 加载 is no 加
            if verb:  # "MRV2 支持 prompt embeds，新增 Triton 叠加 kernel" (a second clause that says how or why the
                # first was done is no card of its own: asked "具体怎么做？", it answered with an effect or motive)
                self.fact("then_add", main[0], re.sub(r"^了\s*", "", then[len(verb):]), verb)
        # For a summary no form above fits: a cloze over its longest name, and 该 PR V了什么 (the gate refuses it when
        # the object says too little of which PR it is).
        self.cloze(title)
        if main:
            self.verb_object(main[0])
        return self.facts

    def verb_object(self, clause: str) -> None:
        """A summary that is only "V O" (拆分存储层的读写路径): 该 PR 拆分了什么？ → O."""
        tokens = [t for t in self.seg.tokenize(clause) if t.text.strip()]
        if len(tokens) >= 2 and not tokens[0].protected and self.seg.pos(tokens[0].text).startswith("v") \
                and tokens[1].text not in ("了", "的", "得"):
            self.fact("verb", tokens[0].text, clause[tokens[1].start:], tokens[0].text)

    def cloze(self, title: str) -> None:
        """The summary as a cloze over its longest name of code or English words, for a summary no question form
        fits (a name of a few letters, V1 or worker, is no gap worth a card)."""
        names = sorted((m.group() for m in PROTECTED_RE.finditer(title)), key=len, reverse=True)
        gap = next((n for n in names if len(n.strip("`")) >= 6 and units(title) - units(n) >= 6), "")
        if gap:
            self.facts.append(Fact(Relation.TERM, gap, title, self.entry.title, self.entry.title_line, marker="headline"))

    def without_adverb(self, clause: str) -> str:
        adverb = self.opens_with(clause, self.rules.adverbs)
        return clause[len(adverb):].lstrip() if adverb else clause

    def first_change(self, clause: str) -> str:
        """The thing a clause adds, without a second step joined by 并 (X 并设为默认 → X); 并行 is no 并."""
        for token in self.seg.tokenize(clause):
            if token.text in ("并", "并且", "同时") and not token.protected and token.start > 0:
                return clause[: token.start]
        return clause

    def first_verb(self, masked: str, verbs: tuple[str, ...], start: int = 0) -> tuple[int, str]:
        """The earliest of *verbs* in *masked* from *start* (the longer one at a tie), or (-1, '')."""
        found = [(at, -len(v), v) for v in verbs if (at := masked.find(v, start)) >= 0]
        return (min(found)[0], min(found)[2]) if found else (-1, "")

    def change_forms(self, clause: str, goal: str) -> None:
        r = self.rules
        masked = _mask(clause)
        fix = _FIX_CAUSE.match(masked)
        if fix:
            thing, cause, harm = (clause[fix.start(i):fix.end(i)] for i in (1, 2, 3))
            self.fact("fix_cause", f"{thing}的{harm}", cause)
            return
        problem = _FIX_PROBLEM.match(masked)
        if problem:  # 修复长 prompt 之后 CUDA graph 被误关的问题 → 长 prompt 之后 CUDA graph 出了什么问题？→ 被误关
            what = clause[problem.start(1):problem.end(1)]
            tokens = [t for t in self.seg.tokenize(what) if t.text.strip()]
            turn = next((t for t in tokens[1:] if not t.protected and (t.text == "被" or self.seg.pos(t.text) in ("v", "vd", "d"))), None)
            if turn is not None and units(what[: turn.start]) >= 2:
                self.fact("fix_problem", what[: turn.start], what[turn.start:])
            return
        at, verb = self.first_verb(masked, r.replacing, 1)
        opener = next(((o, masked.rfind(o, 0, at)) for o in r.replace_openers if at > 0 and masked.rfind(o, 0, at) >= 0),
                      ("", -1))
        if opener[0] and at > opener[1] + len(opener[0]):  # (S) 用 A 取代 B
            replaced = re.sub(r"^了\s*", "", clause[at + len(verb):])
            self.fact("replace", self.first_change(replaced), clause[opener[1] + len(opener[0]):at], verb, goal)
            return
        at, verb = self.first_verb(masked, r.moving)
        origin = masked.find("从")
        if 0 <= origin < at:
            thing = re.sub(r"^(?:将|把)\s*", "", clause[:origin])
            self.fact("migrate", thing, clause[at + len(verb):], verb, goal=clause[origin + 1: at].strip())
            return
        let = _LET.match(masked)
        if let and units(let.group(1)) >= 1:  # 让可扩展段支持私有内存池 → 该 PR 让可扩展段支持了什么？
            self.fact("let", clause[let.start(1):let.end(1)], clause[let.end():], let.group(2), goal)
            return
        ba = re.match(r"^(?:把|将)(.+?)(" + "|".join(map(re.escape, r.moving)) + r")(.+)$", masked)
        if ba and units(ba.group(1)) >= 2:  # 把 A 收拢成 B
            self.fact("ba", clause[ba.start(1):ba.end(1)], clause[ba.start(3):], ba.group(2), goal)
            return
        if masked.startswith("为"):
            tokens = self.seg.tokenize(clause[1:])
            if tokens and not self.seg.pos(tokens[0].text).startswith("v"):  # 为 X 引入 Y, not 为提升 X
                at, verb = self.first_verb(masked, r.adding, 2)
                if at > 0:
                    added = self.first_change(re.sub(r"^了\s*", "", clause[at + len(verb):]))
                    self.fact("for", clause[1:at], added, verb, goal)
                    return
        tokens = [t for t in self.seg.tokenize(clause) if t.text.strip()]
        if not tokens or not (tokens[0].protected or self.seg.pos(tokens[0].text) == "" or self.seg.pos(tokens[0].text).startswith(("n", "eng"))):
            return  # "S V Y" needs a noun phrase S first: not 对尚未适配的…, 基于它…
        for token in tokens[1:]:
            if (token.text in r.adding or token.text in r.moving) and not token.protected:
                before = [t for t in tokens if t.end <= token.start]
                verb = token.text
                while before and before[-1].text in r.verb_adverbs:  # X 默认改用 Y: 默认 goes with the verb
                    verb = before[-1].text + verb
                    before.pop()
                subject = clean(clause[: before[-1].end]) if before else ""
                ends_open = bool(before) and self.seg.pos(before[-1].text) == "p"  # "X 在支持 Y 时…": not a subject yet
                if ends_open or re.search(r"[为对把将从]", _mask(subject)):
                    continue
                if units(subject) >= 2 or (subject.isascii() and subject):
                    rest = self.first_change(re.sub(r"^了\s*", "", clause[token.end:]))
                    after = [t for t in self.seg.tokenize(rest) if t.text.strip()]
                    acts = bool(after) and not after[0].protected and self.seg.pos(after[0].text)[:1] in ("v", "p", "d")
                    self.fact("subject_do" if acts else "subject", subject, rest, verb, goal)  # 改为从环境变量读取 X
                return


def headline_facts(entry: Entry, seg: Segmenter) -> list[Fact]:
    """The headline change of *entry*'s summary, once per form of the summary that states it."""
    return _Summary(entry, seg).read()
