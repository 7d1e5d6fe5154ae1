"""Sentence roles: which parts of a review state design decisions, and which only judge, advise or narrate.

A review mixes its decisions with the verdict and praise, reading advice, who
argued with whom, the reviewer's checklist, background, follow-ups, audience
notes and benchmark numbers.  Cards are built only from decisions with their
reasons, mechanisms and the alternatives they replaced, so every other part is
cut out of a unit (an enumeration item or a sentence) before facts are looked
for.  The cue lists are data, in ``rules/roles.toml``; this module only applies
them:

* a few praise frames around a description are rewritten to the description
  ("它展示了如何在边界处添加检查" → "在边界处添加检查");
* a unit that *opens* with a role's opener has that role as a whole;
* each clause (cut at ，；：。 and ——, never inside brackets, quotes or code) that
  holds a role's cue has that role; a role's *tails* cut only the end of a
  clause (``X 的判断逻辑是否足够稳健`` keeps ``X 的判断逻辑``);
* what is left is a decision when the unit is one by its form (an item of an
  enumeration whose lead names decisions, a named decision), or when it holds a
  decision cue.  A clause with no clear role is not a decision.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

from ..files.datadir import data_dir
from ..text.units import Unit

ROLES_FILE = "roles.toml"
_CONDITION = re.compile(r"^(?:若|如果|假如|一旦|倘若)")
_LABELLED = re.compile(r"^(?:思路|做法|修复方式|处理方式)$")
"""A clause that is only a frame's label (a rewrite made "思路：X"): what follows the colon is a decision."""
_CONSEQUENCE = re.compile(r"^(?:因此|所以|于是|故而|从而)")
_CONTINUES = re.compile(r"^(?:而(?![是非])|并且|并|且|从而|进而)")
"""A clause that only goes on with the one before ("只需调大 X，而不必修改逻辑") shares its role."""
_LEADING = re.compile(r"^(?:此外|另外|同时|而且|并且|但是|但|不过|然而|其中|最后|首先|其次)[，,\s]*")
_CODE = re.compile(r"`[^`\n]+`")
_OPEN = "（(“「『《【["
_CLOSE = "）)”」』》】]"
_BREAKS = "，,；;。！？：:"  # not ASCII ! or ?: they stand in code (!=, ?:) in Chinese prose
_DASH = "——"
_TRIM = " \t\n，,；;。：:、"


@dataclass(frozen=True)
class RoleCues:
    """How one role that makes no cards is recognised (see ``rules/roles.toml``)."""

    id: str
    opens: tuple[str, ...]
    open_patterns: tuple[re.Pattern[str], ...]
    cues: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]
    tails: tuple[re.Pattern[str], ...]
    speech: tuple[str, ...]

    @property
    def any_cue(self) -> re.Pattern[str]:
        """One search for any cue or pattern: a clause is tested against every role, thousands of times a build."""
        found = _ANY_CUE.get(self.id)
        if found is None:
            found = _ANY_CUE[self.id] = _one_of(self.cues, self.patterns)
        return found

    def in_clause(self, masked: str) -> bool:
        return self.any_cue.search(masked) is not None


_ANY_CUE: dict[str, re.Pattern[str]] = {}


def _one_of(words: tuple[str, ...], patterns: tuple[re.Pattern[str], ...]) -> re.Pattern[str]:
    """A pattern matching where any of *words* or *patterns* would (longest words first, as ``in`` finds any)."""
    parts = [re.escape(w) for w in sorted(words, key=len, reverse=True)] + [f"(?:{p.pattern})" for p in patterns]
    return re.compile("|".join(parts) or r"(?!x)x", re.IGNORECASE)


@dataclass(frozen=True)
class Rules:
    frames: tuple[re.Pattern[str], ...]
    roles: tuple[RoleCues, ...]
    decision_cues: tuple[str, ...]
    decision_patterns: tuple[re.Pattern[str], ...]
    design_leads: tuple[str, ...]
    pivots: tuple[str, ...]
    rewrites: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...]
    """Pattern, replacement, and words one of which the text must hold for the pattern to be tried (none: any text)."""
    labels: frozenset[str]
    label_patterns: tuple[re.Pattern[str], ...]


def _compiled(patterns: list[str]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


@lru_cache(maxsize=1)
def rules() -> Rules:
    """The cue lists of ``rules/roles.toml``."""
    data = tomllib.loads((data_dir("rules") / ROLES_FILE).read_text(encoding="utf-8"))
    roles = tuple(RoleCues(r["id"], tuple(o.lower() for o in r.get("opens", ())), _compiled(r.get("open_patterns", [])),
                           tuple(c.lower() for c in r.get("cues", ())),
                           _compiled(r.get("patterns", [])), _compiled(r.get("tails", [])), tuple(r.get("speech", ())))
                  for r in data["role"])
    decision = data["decision"]
    rewrites = tuple((re.compile(rule[0]), rule[1], tuple(rule[2]) if len(rule) > 2 else ())
                     for rule in data["rewrites"]["rules"])
    return Rules(_compiled(data["frames"]["patterns"]), roles, tuple(decision["cues"]),
                 _compiled(decision.get("patterns", [])), tuple(decision["leads"]), tuple(decision.get("pivots", ())),
                 rewrites, frozenset(data["names"]["labels"]), _compiled(data["names"]["patterns"]))


def is_label(name: str) -> bool:
    """Whether a heading or quoted name is the reviewer's label (做法, 三处改动, 不必细读), not a decision's name."""
    bare = name.strip().strip("“”「」*:： ")
    r = rules()
    return bare in r.labels or any(p.search(bare) for p in r.label_patterns)


def mask_code(text: str) -> str:
    """*text* with the inside of code spans blanked: a cue or a break inside code counts for nothing."""
    if "`" not in text:
        return text
    return _CODE.sub(lambda m: "`" + "x" * (len(m.group()) - 2) + "`", text)


def clause_spans(text: str) -> list[tuple[int, int, str]]:
    """The clauses of *text* (see :func:`_clause_spans`); a fresh list each call, the work done once per text."""
    return list(_clause_spans(text))


@lru_cache(maxsize=8192)  # the role rules, the decision model and whole choices cut the same texts
def _clause_spans(text: str) -> tuple[tuple[int, int, str], ...]:
    """The clauses of *text*, each as start, end and the break after it: cut at ，；。！？ and ——, never inside
    brackets, quotes or code (``名称：说明`` is two clauses, and keeps its colon)."""
    masked = mask_code(text)
    spans: list[tuple[int, int, str]] = []
    depth, start, i = 0, 0, 0
    while i < len(masked):
        char = masked[i]
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
        elif depth == 0 and (char in _BREAKS or masked.startswith(_DASH, i)) and not _in_a_token(masked, i):
            cut = _DASH if masked.startswith(_DASH, i) else char
            spans.append((start, i, cut))
            i += len(cut)
            start = i
            continue
        i += 1
    spans.append((start, len(masked), ""))
    return tuple((a, b, cut) for a, b, cut in spans if masked[a:b].strip())


def _in_a_token(text: str, i: int) -> bool:
    """Whether the ASCII colon at *i* sits inside a token (``javascript:x``, ``a::b``), not between clauses."""
    return text[i] == ":" and i + 1 < len(text) and not text[i + 1].isspace()


@lru_cache(maxsize=16384)  # the stages and the decision model ask about the same clauses
def role_of(clause: str) -> str:
    """The role that makes no cards found in *clause* (``verdict``, ``advice`` …), or '' for none."""
    masked = mask_code(clause).lower()
    return next((role.id for role in rules().roles if role.in_clause(masked)), "")


def opening_role(text: str) -> str:
    """The role a unit has as a whole because of how it opens, or ''.

    The past ("以前…") is background only when the unit does not turn to what was done ("现在不再…，而是…").
    """
    opened = _LEADING.sub("", mask_code(text).lstrip(_TRIM)).lower()
    role = next((role.id for role in rules().roles
                 if opened.startswith(role.opens) or any(p.match(opened) for p in role.open_patterns)), "")
    if role == "background" and any(pivot in opened for pivot in rules().pivots):
        return ""
    return role


def has_decision_cue(text: str) -> bool:
    return _decision_cue().search(mask_code(text)) is not None


@lru_cache(maxsize=1)
def _decision_cue() -> re.Pattern[str]:
    r = rules()
    return _one_of(r.decision_cues, r.decision_patterns)


def lead_names_decisions(lead: str) -> bool:
    """Whether an enumeration's lead announces design decisions (its items then need no cue of their own).

    Leads often praise what they announce ("两个设计决策值得关注"): the design word decides, not the praise.
    """
    return any(word in lead for word in rules().design_leads)


@lru_cache(maxsize=4096)  # pure; a unit's clauses recur in its lead, summary and lists
def _without_frame(clause: str) -> tuple[str, bool]:
    """*clause* without the frame that introduces it, and whether the frame had a label: a label stays as the
    decision's name (``思路：X``)."""
    for frame in rules().frames:
        match = frame.match(clause)
        if match and match.end() < len(clause):
            label = match.groupdict().get("label")
            return (f"{label}：{clause[match.end():]}", True) if label else (clause[match.end():], False)
    return clause, _LABELLED.match(clause) is not None


@lru_cache(maxsize=4096)  # pure; a unit's clauses recur in its lead, summary and lists
def _cut_tails(clause: str) -> str:
    masked = mask_code(clause)
    for role in rules().roles:
        for tail in role.tails:
            match = tail.search(masked)
            if match:
                return clause[: match.start(1) if match.re.groups else match.start()].rstrip(_TRIM)
    return clause


@lru_cache(maxsize=4096)  # pure; a unit's clauses recur in its lead, summary and lists
def _reports_speech(clause: str) -> bool:
    masked = mask_code(clause).rstrip(_TRIM)
    return any(masked.endswith(verb) for role in rules().roles for verb in role.speech)


@lru_cache(maxsize=4096)  # pure; units recur as leads and in lists
def _rewritten(text: str) -> str:
    for pattern, replacement, needs in rules().rewrites:
        if not needs or any(word in text for word in needs):
            text = pattern.sub(replacement, text)
    return text


def decision_text(unit: Unit) -> str:
    """*unit*'s text with every part that is not a decision (or its reason, mechanism, alternative) cut out.

    Empty when the unit states no decision.  The parts kept stay in order, each with the punctuation after it.
    """
    text = _rewritten(unit.text)
    if opening_role(text):
        return ""
    kept: list[str] = []
    cut_any = reported = framed = cut_last = False
    for start, end, cut in clause_spans(text):
        clause = text[start:end].strip(_TRIM)
        if reported and _CONSEQUENCE.match(clause):
            reported = False
        unframed, labelled = _without_frame(clause)
        core = _cut_tails(unframed)
        framed = framed or labelled  # "修复方式是 X": the frame itself says X is a decision
        if core and not role_of(core) and not reported and not (cut_last and _CONTINUES.match(clause)):
            space = text[start:end][: len(text[start:end]) - len(text[start:end].lstrip())]  # "名称: 说明" keeps its space
            kept.append(space + core + cut)
            cut_last = False
        else:
            cut_any = cut_last = True
        reported = reported or _reports_speech(clause)
    if cut_any and _CONDITION.match(text.lstrip(_TRIM)):
        return ""  # "若…，建议…": a condition whose main clause was advice or a follow-up is not a decision
    joined = "".join(kept).strip(_TRIM)
    if not joined:
        return ""
    # A step of a procedure (首先…其次…最后) is a step of the PR's design unless its lead says otherwise.
    steps = unit.family == "seq" and not role_of(unit.lead)
    by_form = framed or steps or bool(unit.heading) or (bool(unit.ordinal) and lead_names_decisions(unit.lead))
    return joined if by_form or has_decision_cue(joined) else ""
