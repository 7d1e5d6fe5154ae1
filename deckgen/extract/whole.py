"""A decision unit in; the facts of a card on its whole choice out, for a unit no finer card covers.

A review states many decisions as a plain clause with no connective a relation could be read from
(`NGramWorker` 只负责查找; 启用 FA 时 V 缓存改为非转置布局存放).  Each such clause gives a :data:`Relation.WHOLE`
fact: ``subject`` the unit's head the question shows (its name, the thing the clause is about, or where and when
it applies), ``detail`` the clause's choice, ``marker`` which head.  The ranking takes one only where it beats the
unit's finer cards.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable

from ..files.datadir import data_dir
from ..text.clauses import clean
from ..text.markup import CODE_SPAN
from ..text.segment import Segmenter, units
from ..types import Fact, Relation
from .roles import has_decision_cue

_LONGEST_ANSWER = 35
_CLAUSES = re.compile(r"[，,；;。：]|:(?=\s)")
_RULES = tomllib.loads((data_dir("rules") / "whole.toml").read_text(encoding="utf-8"))


def _any(name: str, head: str = "", tail: str = "") -> re.Pattern[str]:
    """The alternatives of the rule list *name*, between *head* and *tail*."""
    return re.compile(f"{head}(?:{'|'.join(_RULES[name])}){tail}")


_NOT_A_CHOICE = _any("not_a_choice", "^")
_PLACE = _any("place_ends", tail="$")
_PLACE_OPENER = _any("place_openers", "^")
_MANNER = frozenset(_RULES["manner"])
_PURPOSE_HEAD = re.compile(_RULES["purpose_head"])
_CODE = CODE_SPAN
_HEDGE = _any("hedges", "^")
_SPEECH = _any("speech")
_TOPIC_VERBS = tuple(_RULES["topic_verbs"])
_LATIN = re.compile(r"[A-Za-z_]{2,}")
_THEN = _any("then", "^", r"\s*")
_FRAME_WORD = re.compile(_RULES["frame_word"])
_CONTRAST_NAME = _any("contrast")
_LEADING = _any("leading", "^", r"\s*")


def whole_facts(body: str, line: int, seg: Segmenter, name: str = "", item: bool = False,
                is_decision: Callable[[str], bool] = has_decision_cue) -> list[Fact]:
    """Whole-choice facts of a decision unit's *body* (its name, if any, cut off and given as *name*; *item*: an
    item of an enumeration).  Outside a named decision or a list item, only a clause that *is_decision* (by
    default: holds a decision cue, 采用, 改为, 新增 …) is a choice: prose also says what went wrong and what
    followed."""
    facts: list[Fact] = []
    raw = [c.strip() for c in _CLAUSES.split(body)]
    clauses = [(clean(_LEADING.sub("", c)), c) for c in raw if c]
    for position, (clause, as_written) in enumerate(clauses):
        if not 4 <= units(clause) <= _LONGEST_ANSWER or _NOT_A_CHOICE.match(clause) or _NOT_A_CHOICE.match(as_written):
            continue
        if name and position == 0:
            if _CONTRAST_NAME.search(name) or _FRAME_WORD.fullmatch(name.strip()):
                continue  # 「显式开关而非默认启用」: the name says what; its reason is the card
            facts.append(Fact(Relation.WHOLE, name, clause, body, line, marker="name", name=name))
            continue
        if not (name or item or is_decision(as_written)):
            continue
        head, rest = _head(clause, seg)
        place = bool(head) and bool(_PLACE.search(head) or _PLACE_OPENER.match(head))
        if place and units(rest) >= 3:
            facts.append(Fact(Relation.WHOLE, head, rest, body, line, marker="place", name=name))
        elif head and _CODE.search(head) and units(rest) >= 3 and not _HEDGE.match(rest) \
                and not _SPEECH.search(head):
            # What a named piece of code now does ("`SchedulingBudget` 的增减改为按 request id 记账去重"); a head with
            # no name ("远程后端是怎么处理的？") was too vague for learners (blind review r1).
            verb = next((v for v in _TOPIC_VERBS if rest.startswith(v)), "")
            facts.append(Fact(Relation.WHOLE, head, rest, body, line, marker="code", verb=verb, name=name))
        elif position and _THEN.match(as_written) and not is_decision(clauses[position - 1][1]):
            # "连续更新次数过多说明图不稳定，此时自动停用 graph": the clause before says when, this one what is done.
            before = clauses[position - 1][0]
            done = clean(_THEN.sub("", as_written))
            if 4 <= units(before) <= 30 and units(done) >= 3:
                facts.append(Fact(Relation.WHOLE, before, done, body, line, marker="after", name=name))
    return facts


def _head(clause: str, seg: Segmenter) -> tuple[str, str]:
    """What *clause* is about, and what it says of it: the words before its first verb (or adverb and verb)."""
    tokens = [t for t in seg.tokenize(clause) if t.text.strip()]
    for k in range(1, len(tokens) - 1):
        token = tokens[k]
        if token.protected:
            continue
        tag = seg.pos(token.text)
        verb = tag.startswith("v") and tag != "vn" and tokens[k - 1].text != "的"
        adverb = (tag in ("d", "ad", "b") or token.text in _MANNER) and k + 1 < len(tokens) \
            and seg.pos(tokens[k + 1].text).startswith("v")
        if verb or adverb:
            if k + 1 < len(tokens) and tokens[k + 1].text == "的":
                return "", ""  # 资源预算的计算入口: a verb before 的 modifies a noun, it is no predicate
            head, rest = clean(clause[: token.start]), clean(clause[token.start:])
            last = tokens[k - 1]
            nounish = last.protected or seg.pos(last.text).startswith(("n", "f", "eng")) or not seg.pos(last.text) \
                or last.text in ("”", "」", "）", ")") or (k >= 2 and tokens[k - 2].text == "的")  # X 的增减
            # What a clause is about is a noun phrase: it opens with a noun, a name or a place, and holds no verb
            # but inside a modifier (X 的增减): not 给分布式部署文档, 注明当时…, can_allocate 才从 freeable 里.
            opener = tokens[0]
            opens_np = opener.protected or seg.pos(opener.text).startswith(("n", "f", "s", "t", "eng", "r")) \
                or not seg.pos(opener.text) or opener.text in ("在", "当", "对于", "对", "针对", "“", "「")
            verbs = [j for j in range(k) if not tokens[j].protected and seg.pos(tokens[j].text) in ("v", "vd", "vi")
                     and not (j + 1 < k and tokens[j + 1].text == "的") and not (j and tokens[j - 1].text in ("在", "当"))]
            adverbs = [j for j in range(1, k) if seg.pos(tokens[j].text) in ("d", "c")]
            if 2 <= units(head) <= 16 and nounish and opens_np and not verbs and not adverbs and _balanced(head) \
                    and not _PURPOSE_HEAD.match(head):
                return head, rest
            return "", ""
    return "", ""


_PAIRS = {"“": "”", "「": "」", "（": "）", "(": ")", "《": "》", "`": "`"}


def _balanced(text: str) -> bool:
    """Whether every quote and bracket opened in *text* is closed in it: a head never ends inside a name."""
    return all(text.count(a) == text.count(b) if a != b else text.count(a) % 2 == 0 for a, b in _PAIRS.items())
