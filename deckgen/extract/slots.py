"""A decision's text in; in-place questions out: the text with one phrase replaced by 什么/哪里/多少.

Chinese asks in place (两端的协调暂时依赖 ETCD → 两端的协调暂时依赖什么？), so such a question keeps the review's own
words and order and reads as well as its source does.  Which phrases may be asked for is rule data
(``rules/slots.toml``): the object of a verb that states a choice, the place something was moved to, what
acts (由 X 负责) and what is used (借助 X 让…).  Each gives a :data:`Relation.SLOT` fact: ``subject`` the question
with :data:`GAP` where the phrase was, ``detail`` the phrase, ``verb`` the question word, ``marker`` the slot.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

from ..files.datadir import data_dir
from ..text.clauses import clean
from ..text.segment import Segmenter, Token, units
from ..types import Fact, Relation

SLOTS_FILE = "slots.toml"
GAP = "\ue003"
"""Where the asked phrase stood in a slot question (a private-use character no review contains)."""
_LONGEST_ANSWER = 16
_SHORTEST_QUESTION = 5
_LONGEST_CLAUSE = 60
_ASPECT = frozenset({"了", "着", "过"})
_TRAILING = "的了，,、；;：: "
_NUMBER = re.compile(r"^[\d.,]+\s*(?:[%％A-Za-z]{0,3}|[个位倍次层块条项])$")
_PATH = re.compile(r"[\w.-]+/[\w./-]+|[\w-]+\.(?:py|h|hpp|c|cc|cpp|cu|cuh|rs|go|ts|js|json|toml|ya?ml|md|sh|txt)\b")
_BREAKS = re.compile(r"[，,；;。！？!?]")
_PRONOUN_START = re.compile(r"^(?:它|其|这|那|此|该(?!\s*PR)|上述|前者|后者)")
_QUOTE = re.compile(r"^[“「`].*[”」`]$")


@dataclass(frozen=True)
class SlotRules:
    object_verbs: frozenset[str]
    place_verbs: frozenset[str]
    place_ends: tuple[str, ...]
    agents: frozenset[str]
    instruments: frozenset[str]
    heads: tuple[str, ...]
    stops: frozenset[str]


@lru_cache(maxsize=1)
def rules() -> SlotRules:
    data = tomllib.loads((data_dir("rules") / SLOTS_FILE).read_text(encoding="utf-8"))
    return SlotRules(frozenset(data["object"]["verbs"]), frozenset(data["place"]["verbs"]),
                     tuple(data["place"]["place_ends"]), frozenset(data["agent"]["words"]),
                     frozenset(data["instrument"]["words"]),
                     tuple(sorted(data["heads"]["nouns"], key=len, reverse=True)), frozenset(data["stop"]["words"]))


class _Clause:
    def __init__(self, text: str, seg: Segmenter) -> None:
        self.text = text
        self.seg = seg
        self.tokens = [t for t in seg.tokenize(text) if t.text.strip()]

    def is_verb(self, token: Token) -> bool:
        return not token.protected and self.seg.pos(token.text).startswith("v") and self.seg.pos(token.text) != "vn"

    def after_aspect(self, k: int) -> int:
        while k < len(self.tokens) and self.tokens[k].text in _ASPECT:
            k += 1
        return k

    def object_end(self, k: int, stops: frozenset[str]) -> int:
        """Token index where an object from *k* ends: the clause's end, or a word that starts another part
        (接入 FlashInfer 作为后端: the object is FlashInfer)."""
        for j in range(k + 1, len(self.tokens)):
            if self.tokens[j].text in stops and not self.tokens[j].protected:
                return j
        return len(self.tokens)

    def np_end(self, k: int, stops: frozenset[str]) -> int | None:
        """End of the noun phrase from *k* that a verb follows (由 X 负责): the index of that verb, or None."""
        for j in range(k + 1, len(self.tokens)):
            token = self.tokens[j]
            if token.text in stops and not token.protected:
                return None
            acts = self.is_verb(token) or self.seg.pos(token.text) in ("p", "vn")
            if acts and self.tokens[j - 1].text != "的":
                return j  # 用 X 在运行时选择: X ends before 在; 用 X 管理 Y: before 管理
        return None


def _content(seg: Segmenter, tokens: list[Token]) -> bool:
    """Whether a phrase names something: a code span or English term, or a Chinese noun."""
    return any(t.protected or seg.pos(t.text).startswith(("n", "eng")) or (not seg.pos(t.text) and len(t.text) > 1)
               for t in tokens)


def slot_facts(text: str, line: int, seg: Segmenter, name: str = "") -> list[Fact]:
    """In-place questions for each phrase of *text* (a decision, its frames cut away) that a learner may be asked."""
    facts: list[Fact] = []
    r = rules()
    for clause_text in _BREAKS.split(text):
        clause_text = clean(clause_text)
        if not 6 <= units(clause_text) <= _LONGEST_CLAUSE or _PRONOUN_START.match(clause_text):
            continue
        clause = _Clause(clause_text, seg)
        tokens = clause.tokens
        for i, token in enumerate(tokens[:-1]):
            if token.protected:
                continue
            word = token.text
            if word in r.object_verbs or word in r.place_verbs:
                start = clause.after_aspect(i + 1)
                end = clause.object_end(start, r.stops)
                slot = "place" if word in r.place_verbs else "object"
            elif word in r.agents or word in r.instruments:
                start = i + 1
                found = clause.np_end(start, r.stops)
                if found is None:
                    continue
                end = found
                slot = "agent" if word in r.agents else "instrument"
            else:
                continue
            if start >= end:
                continue
            span = tokens[start:end]
            if not _content(seg, span) or clause.is_verb(span[0]) or seg.pos(span[0].text) in ("p", "d", "c", "r", "uj", "f") \
                    or span[0].text in ("时", "后", "前", "中"):
                continue  # an act (改为按 X 记账), an adverb, a pronoun or 的 (不支持的 X: a relative clause) is no thing
            a, b = span[0].start, span[-1].end
            answer = clause_text[a:b].rstrip(_TRAILING)
            b = a + len(answer)
            fact = _fact(clause_text, a, b, answer, slot, line, name)
            if fact:
                facts.append(fact)
    return facts


def _fact(clause: str, a: int, b: int, answer: str, slot: str, line: int, name: str) -> Fact | None:
    r = rules()
    if not answer or units(answer) > _LONGEST_ANSWER:
        return None
    wh = "多少" if _NUMBER.match(answer) else "什么"
    if slot == "place" and (answer.endswith(r.place_ends) or _PATH.search(answer)):
        wh = "哪里"
    head = next((h for h in r.heads if answer.endswith(h) and len(answer) > len(h)), "")
    modifier = answer[: len(answer) - len(head)].rstrip() if head else ""
    if head and modifier and (_QUOTE.match(modifier) or modifier.isascii()) and wh == "什么":
        answer, b, wh = modifier, a + len(modifier), "什么"  # 新增了 `stage` 字段 → 新增了什么字段？ → `stage`
        question = clause[:a] + GAP + clause[b:].lstrip()
    else:
        question = clause[:a] + GAP + clause[b:]
    question = question.rstrip(_TRAILING)
    if units(question.replace(GAP, "")) < _SHORTEST_QUESTION:
        if question.startswith(GAP) or units(question.replace(GAP, "")) < 2:
            return None
        question = "该 PR " + question  # 新增 `--chat-template-file` → 该 PR 新增什么？: the cue says which PR
    return Fact(Relation.SLOT, question, answer, clause, line, marker=slot, verb=wh, name=name)
