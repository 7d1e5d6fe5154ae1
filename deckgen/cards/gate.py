"""The quality gate: the automatable card checks (``card-quality.md`` §2), and the rank of a card that passes.

Every check is a function of one candidate returning :class:`Finding` values;
severity ``R`` rejects the card, ``W`` lowers its rank.  Which of the cards that
pass a PR keeps, and the deck-level checks (duplicates, near-repeated questions),
are :mod:`deckgen.cards.select`'s.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from ..files.datadir import data_dir
from ..text.markup import anki_cards, cloze_plain, deletions, strip_markdown
from ..text.segment import Segmenter, Token, units
from ..types import Card, CardKind, norm

REJECT, WARN = "R", "W"
INTERROGATIVES = re.compile(r"什么|哪|为什么|为何|如何|怎样|怎么|多少|几|谁|何时")
YES_NO = re.compile(r"吗[？?]$|是否|是不是|能否|可否|有没有|还是")
_WORDS = tomllib.loads((data_dir("rules") / "gate.toml").read_text(encoding="utf-8"))
STOPWORDS = frozenset(_WORDS["stopwords"])
GENERIC = frozenset(_WORDS["generic"]) | frozenset(_WORDS["generic_latin"])
DEICTIC_ENDS = tuple(_WORDS["deictic_ends"])
CONSTRUCTS = frozenset(w.lower() for w in _WORDS["constructs"])
# "提升性能" is as generic as "性能": the verb is stripped before looking the word up.
BOOST_VERB = re.compile("^(?:" + "|".join(map(re.escape, _WORDS["boost_verbs"])) + ")")
BAD_START = tuple(_WORDS["bad_start"])
BAD_END = tuple(_WORDS["bad_end"])
ORPHAN_START = re.compile(r"^(?:其|该(?!\s*PR|不该)|此(?!\s*PR)|这|那|它|它们|上述|前者|后者|此外|另外|同时|因此|所以|但是|然而|而且|并且|并|也"
                          r"|是(?=在|由|用|通过|把|将))")
# "把前者换算成后者": a reference to an earlier clause, which the card does not show, anywhere in a field.
REFERENCE_ANYWHERE = re.compile(r"前者|后者|上述|前面提到|如上所述")
_BOTH = re.compile(r"二者|两者|三者")
_COMPLEMENT_START = ("为", "成", "到", "至")
_THESE = re.compile(r"这些|那些")
"""In a question, "二者靠什么衔接？" names neither; an answer that says "A …，B …，二者…" has named both."""
ENUM_MARKER = re.compile(r"(?:^|[\s：:；;，,])(?:\d{1,2}[.)）、](?!\d)|[①-⑳]|[一二三四五]是)")
"""An enumeration marker (1. 1) ① 一是) in an answer: several facts.  A version (14.1.0) is none."""
_ASCII_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/+#%\-]*")
PAIRS = {"(": ")", "（": "）", "[": "]", "【": "】", "{": "}", "《": "》", "〈": "〉", "“": "”", "‘": "’", "「": "」", "『": "』"}
_CLOSERS = frozenset(PAIRS.values())
_BRACKETS_RE = re.compile("[" + re.escape("".join(PAIRS) + "".join(PAIRS.values())) + "]")
# Every check's patterns compiled once: ``re.sub(str, …)`` pays a cache look-up per call,
# and the gate makes a few hundred thousand of them on a large corpus.
_QUOTED = re.compile(r"「[^」]*」|“[^”]*”")
_ATOMIC = re.compile(r"`[^`]+`|[\x21-\x7e ]+")
_CLAUSE_BREAK = re.compile(r"[，；;。](?!\s*(?:否则|不然|减少|降低|节省|避免))")
"""A break between facts; "超过阈值才按缓存路由，否则退回最短队列" is one rule, its else included, and "保留多份副本，
减少各阶段之间的同步" one effect, what it buys included."""
_EMBEDDED_WHETHER = re.compile(r"(?:检查|判断|校验|确认|验证|决定|看)[^，,？?]{1,30}?是否[^，,？?]{1,12}")
_JOINED = re.compile(r"并|同时|以及")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_COUNTING = re.compile(r"[一二两三四五六七八九十几多\d]+\s*(?:个|点|处|层|项|条|种|类).{0,4}?(?:设计|改动|要点|方面|问题|亮点|原因|决策|做法|模式|点)")
_PRONOUN = re.compile(r"(?<![A-Za-z])(?:其|它)(?!他|中|次|余|实)")
_CLOZE_SYNTAX = re.compile(r"\{\{c\d+::|\}\}")
_NAME_PARTS = re.compile(r"[_.]")
_CODE_SPAN = re.compile(r"`[^`]*`")
_CODE_OR_WORD = re.compile(r"`|[A-Za-z_]{3,}")
_ASKS_WHAT = re.compile(r"(?<!为)什么|哪(?!里|儿)")
_ASKS_OTHERWISE = re.compile(r"为什么|为何|怎么|怎样|如何|什么时候|何时|什么情况|什么条件|什么场景"
                             r"|(?:思路|做法|方式|决策|方案)是什么|什么做法|怎样的设计|什么样的设计"
                             r"|(?:原因|目的|理由|动机|效果|好处|代价)是什么|起什么作用|做什么|负责什么|什么改动|什么问题|什么做法")
_PR_NUMBER = re.compile(r"(?:PR|issue|RFC)?\s*#\d+", re.IGNORECASE)
PREPOSITIONS = frozenset({"在", "当", "于", "从", "对", "把", "将", "被", "由", "向", "以", "为", "通过", "用", "按", "随",
                          "自", "到", "给", "跟", "经", "经由", "借助", "依据", "根据", "基于", "针对", "关于"})
MODALS_AND_TIME = frozenset({"会", "必须", "要", "可以", "能", "能够", "需要", "应该", "应", "将", "了", "着", "过", "时",
                             "时候", "后", "之后", "以后", "前", "之前", "以前", "期间", "来", "去", "中", "里", "内",
                             "上", "下"})
_MODALS = frozenset({"需要", "必须", "可以", "应该", "应当", "得以", "可能"})
_VERB_TAGS = frozenset({"v", "vd", "vi", "vg"})
_LONGEST_DECISION = 45
_SHORTEST_SUMMARY_CLOZE = 8
_WHOLE_DECISION = frozenset({CardKind.DECISION, CardKind.HEADLINE})
"""Kinds whose answer is a whole decision, which may take a few short clauses: what a named decision does, and
the change a PR summary states."""
_WORDLIKE = re.compile(r"[A-Za-z0-9\u3400-\u9fff]")
_FILE_PATH = re.compile(r"[\w.-]*(?:/[\w.-]+)+/?|[\w-]+\.(?:py|pyi|h|hpp|c|cc|cpp|cu|cuh|m|mm|metal|rs|go|java|txt|json|md|toml"
                        r"|ya?ml|sh|cmake)", re.I)
_FLAG = re.compile(r"--?[A-Za-z][\w.-]*(?:[= ]\S+)?")
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.:]*(?:\(\))?")
_NAME_LIST_SEP = re.compile(r"\s*(?:、|与|和|及|以及|/|,|，)\s*")
_ADVERB_TAGS = frozenset({"d", "ad", "c", "u", "uj", "ul", "uz", "p"})
_ASKS_WHEN = re.compile(r"什么时候|何时|什么情况|什么条件|什么场景|哪个阶段|哪一步")
_TIME_ENDS = ("后", "时", "前", "时候", "之后", "之前", "以后", "以前", "期间")


@dataclass(frozen=True)
class Finding:
    check: str
    severity: str
    message: str


@dataclass(frozen=True)
class Candidate:
    """A card before the gate, with its base rank and the review paragraph it came from."""

    card: Card
    rank: float
    source: str
    fact: str = ""
    """Which fact the card asks about; two cards of one fact ask it both ways (a mirror pair)."""
    unit: int = 0
    """The decision unit of the review the card comes from (1, 2 … in review order; 0: the summary's headline)."""
    marker: str = ""
    """How the card's fact was found (a connective, a headline form, ``span`` for a key phrase …)."""
    phrase: float = 0.0
    """For a key phrase's card: how likely the phrase is one a learner should recall (the span model)."""


def front_of(card: Card) -> str:
    return f"【{card.cue}】{card.prompt}"


@lru_cache(maxsize=16384)  # the same answer, prompt or deletion is made plain by several checks
def _plain(text: str) -> str:
    return strip_markdown(text)


@lru_cache(maxsize=4096)  # a cloze prompt's deletions are read by seven checks and again in selection
def _deletions(prompt: str) -> tuple[tuple[int, str], ...]:
    return tuple(deletions(prompt))


@lru_cache(maxsize=16384)  # fronts and answers are checked against each other many times per PR
def content_tokens(seg: Segmenter, text: str) -> frozenset[str]:
    """Tokens that carry meaning: no punctuation, whitespace or function words."""
    out: set[str] = set()
    for token in seg.tokenize(_plain(text)):
        word = token.text.strip("`")
        if not word or word in STOPWORDS or all(unicodedata.category(c).startswith("P") for c in word):
            continue
        out.add(word.lower())
    return frozenset(out)


# -- single-card checks -----------------------------------------------------------------

def check_answer_shape(card: Card, seg: Segmenter) -> list[Finding]:
    """Q1: a question ends with a question mark and asks something."""
    if card.kind == CardKind.CLOZE:
        return []
    if not card.prompt.endswith(("？", "?")) or not INTERROGATIVES.search(card.prompt):
        return [Finding("Q1", REJECT, "question has no answer shape")]
    return []


def check_yes_no(card: Card, seg: Segmenter) -> list[Finding]:
    """Q2: no yes/no or either/or questions."""
    # Quoted source text (「…是否…」) is not the question's own wording.
    question = _QUOTED.sub("", card.prompt)
    if card.kind == CardKind.CLOZE or not YES_NO.search(question):
        return []
    # "靠什么检查词表是否兼容？" asks by what: 是否 there only names what is checked.
    if _EMBEDDED_WHETHER.search(question) and _ASKS_WHAT.search(_EMBEDDED_WHETHER.sub("", question)):
        return []
    return [Finding("Q2", REJECT, "yes/no or binary-choice question")]


def check_context_cue(card: Card, seg: Segmenter) -> list[Finding]:
    """Q3: every front carries the PR cue."""
    return [] if card.cue.strip() else [Finding("Q3", REJECT, "no context cue")]


_CONTEXT_FREE = re.compile("|".join(sorted(map(re.escape, _WORDS["context_free"]), key=len, reverse=True)))
_LEAST_CONTEXT = 4
_REPO_PARTS = re.compile(r"[^A-Za-z0-9]+")


def check_context_free(card: Card, seg: Segmenter) -> list[Finding]:
    """Q8: a question under a cue that names only the repository (and the PR's number) still says which PR it is
    about: its goal, object or area, not "该 PR 新增什么？" (blind reviews of unseen reviews: 13 of 66 headline
    cards)."""
    if card.kind in (CardKind.CLOZE, CardKind.GLOSSARY) or not is_bare_cue(card.cue):
        return []
    question = _CONTEXT_FREE.sub(" ", _plain(card.prompt).replace("`", ""))
    for part in _REPO_PARTS.split(card.entry.repo):
        if len(part) >= 2:
            question = re.sub(re.escape(part), " ", question, flags=re.IGNORECASE)
    if units(question) < _LEAST_CONTEXT:
        return [Finding("Q8", REJECT, f"'{card.prompt}' would fit any PR of {card.entry.repo}")]
    return []


def is_bare_cue(cue: str) -> bool:
    """Whether a context cue names only the repository (and maybe the PR's number), not what the PR is about."""
    topic = cue.split(" · ", 1)[1] if " · " in cue else ""
    return not topic or bool(_PR_NUMBER.fullmatch(topic.strip()))


def check_leak(card: Card, seg: Segmenter) -> list[Finding]:
    """Q4/A3: the answer cannot be read off the front (cue included)."""
    if card.kind == CardKind.CLOZE:
        return []
    front = front_of(card)
    folded = norm(front)
    if norm(card.answer) in folded:
        return [Finding("A3", REJECT, "answer appears on the front")]
    shown = _shown_inside(card.answer, front)
    if shown:
        return [Finding("A3", REJECT, f"'{shown}' on the front is most of an answer name")]
    # Answer words are looked for inside the front's text rather than among its tokens:
    # the front is a fresh string for every candidate, and segmenting each one was the
    # gate's main cost.  One-character words match almost anywhere, so they only count
    # when the answer has nothing longer.
    words = content_tokens(seg, card.answer)
    answer_tokens = frozenset(t for t in words if len(norm(t)) >= 2) or words
    if not answer_tokens:
        return []
    shared = frozenset(t for t in answer_tokens if norm(t) in folded)
    if card.kind == CardKind.NAME:
        # Recalling a name: any word of it on the front gives it away (as a word, not as
        # part of a longer one: 编码 in 编码器 is no clue to 位置编码).
        named = _named_on_front(seg, card, words)
        if named:
            return [Finding("A3", REJECT, f"term recall card shows part of its answer: {sorted(named)}")]
    containment = len(shared) / len(answer_tokens)
    # The headline's question names the PR's goal or object, whose words its change may well repeat ("修复 DP
    # 多引擎启动时 CPU 线程超订阅" → "均分启动线程数"): only an answer nearly all on the front gives itself away.
    if containment > (_HEADLINE_LEAK if card.kind == CardKind.HEADLINE else 0.6):
        return [Finding("A3", REJECT, f"answer {containment:.0%} visible on the front")]
    if containment > 0.34:
        return [Finding("A3", WARN, f"answer {containment:.0%} visible on the front")]
    return []


_HEADLINE_LEAK = 0.75
_LATIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,}")


def check_restated_name(card: Card, seg: Segmenter) -> list[Finding]:
    """A3n: what a named decision does is more than its name said ("「V 缓存不再转置」是什么做法？→ V 缓存改为非转置
    布局存放" only restates it)."""
    if card.kind != CardKind.DECISION:
        return []
    name = _NAME_IN_QUESTION.search(card.prompt)
    if not name:
        return []
    words = [t for t in content_tokens(seg, name.group(1)) if len(norm(t)) >= 2]
    answer = norm(card.answer)
    if len(words) >= 2 and sum(norm(t) in answer for t in words) / len(words) >= 2 / 3:
        return [Finding("A3n", REJECT, f"the answer restates the name '{name.group(1)}'")]
    return []


_NAME_IN_QUESTION = re.compile(r"^「([^」]+)」")


def _shown_inside(answer: str, front: str) -> str:
    """A name of the front inside the answer's own Latin name, when little else is in the answer: "独立的
    CMakeLists.txt" under a cue saying CMake, "-DNVCC_THREADS=8 这样的 CMake define" under a question saying
    NVCC_THREADS.  The answer is guessed from the question, though the two never match as words."""
    names = _LATIN_NAME.findall(answer)
    if not names:
        return ""
    shown = {m.group().lower() for m in _LATIN_NAME.finditer(front)}
    # Guessed when the front shows its start (CMake → CMakeLists.txt) or most of it (NVCC_THREADS → -DNVCC_THREADS=8);
    # a shared ending (guard manager → CheckFnManager) gives nothing away.
    inside = [p for name in names for p in shown
              if p != name.lower() and p in name.lower()
              and (len(p) >= 0.7 * len(name) or (name.lower().startswith(p) and len(p) >= 0.5 * len(name)))]
    if not inside:
        return ""
    rest = _CJK_CHAR.findall(_LATIN_OR_CODE.sub("", _plain(answer)))
    return inside[0] if len(rest) <= 4 else ""


_EITHER_OR = re.compile(r"要么.+、\s*要么")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")
_LATIN_OR_CODE = re.compile(r"`[^`]*`|[A-Za-z0-9_.=+-]+")


def _named_on_front(seg: Segmenter, card: Card, words: frozenset[str]) -> list[str]:
    """The words of *words* (the answer's) of two units or more that are also tokens of the front.

    Segmenting every fresh front was most of the gate's jieba time; two facts avoid most of it.
    jieba never joins words across the ``】`` that closes the cue, so without markup in the cue
    (which could pair with markup in the prompt) the front's tokens are the cue's, the same for
    every card of a PR, plus the prompt's.  And every token is a lower-cased piece of the plain
    text, with ``str.lower`` mapping each character on its own except the Greek capital sigma,
    so a part that does not contain a word as a substring cannot hold it as a token.
    """
    long_words = [t for t in words if units(t) >= 2]
    if not long_words:
        return []
    cue = f"【{card.cue}】"
    parts = (cue + card.prompt,) if "`" in cue or "*" in cue else (cue, card.prompt)
    found: set[str] = set()
    for part in parts:
        plain = strip_markdown(part)  # a fresh string: not worth a cache slot
        if "Σ" in plain or any(word in plain.lower() for word in long_words):
            found |= words & content_tokens(seg, part)
    return [t for t in found if units(t) >= 2]


def check_answer_phrase(card: Card, seg: Segmenter) -> list[Finding]:
    """Q6: a 什么/哪 question is answered by a noun phrase: not a PR number, a bare verb or modal, nor a
    prepositional or time phrase (questions asking 为什么, 怎么 or 什么时候 are answered otherwise)."""
    if card.kind in (CardKind.CLOZE, CardKind.GLOSSARY):  # what a term means may well be a way of doing things
        return []
    question = _QUOTED.sub("", card.prompt)
    if not _ASKS_WHAT.search(question) or _ASKS_OTHERWISE.search(question):
        return []
    answer = _plain(card.answer).strip()
    if _PR_NUMBER.fullmatch(answer):
        return [Finding("Q6", REJECT, f"'{answer}' is a PR or issue number")]
    tokens = [t for t in seg.tokenize(answer) if t.text.strip()]
    if not tokens:
        return []
    first, last = tokens[0], tokens[-1]
    if not first.protected and (first.text in PREPOSITIONS or seg.pos(first.text) == "p") and not _noun_after_de(tokens, seg):
        return [Finding("Q6", REJECT, f"'{answer}' is a prepositional phrase, not a thing")]
    if not first.protected and first.text.startswith("是") and len(tokens) > 1:
        return [Finding("Q6", REJECT, f"'{answer}' is the rest of a 是 clause, not a thing")]  # (而)是在 X 上用 Y
    if not last.protected and (last.text in MODALS_AND_TIME or seg.pos(last.text) in _ADVERB_TAGS):
        return [Finding("Q6", REJECT, f"'{answer}' ends in '{last.text}': not a noun phrase")]
    if any(t.text in _MODALS for t in tokens if not t.protected):
        return [Finding("Q6", REJECT, f"'{answer}' holds a modal verb: a clause, not a thing")]  # 方需要记得
    if len(tokens) <= 2 and not last.protected and seg.pos(last.text) in _VERB_TAGS and not first.protected \
            and not (len(tokens) == 2 and seg.pos(first.text).startswith(("n", "eng"))):  # safetensors 序列化 names a thing
        return [Finding("Q6", REJECT, f"'{answer}' is a bare verb")]
    return []


def _noun_after_de(tokens: list[Token], seg: Segmenter) -> bool:
    """Whether a phrase opening with a preposition is a noun phrase all the same: 基于 Metal 的完整 GPU 推理."""
    words = [t.text for t in tokens]
    if "的" not in words[1:-1]:
        return False
    last = tokens[-1]
    return last.protected or not (last.text in MODALS_AND_TIME or seg.pos(last.text) in _ADVERB_TAGS)


def check_time_answer(card: Card, seg: Segmenter) -> list[Finding]:
    """Q7: only a question asking when is answered by a time phrase ("归一化后" does not say how)."""
    if card.kind == CardKind.CLOZE or _ASKS_WHEN.search(_QUOTED.sub("", card.prompt)):
        return []
    answer = _plain(card.answer).strip()
    if (units(answer) <= 6 or card.kind == CardKind.WHY) and answer.endswith(_TIME_ENDS):  # "运行队列混入预填充后"
        return [Finding("Q7", REJECT, f"'{answer}' is a time phrase, and the question does not ask when")]
    return []


def check_summary_leak(card: Card, seg: Segmenter) -> list[Finding]:
    """Q4b: the answer (or gap) is not what the PR summary already says: a learner who studied the PR knows it,
    and the cue shows the summary's first clause."""
    if card.kind == CardKind.HEADLINE:
        return []  # its cue is the repository alone, and the summary's change is what it asks by design
    frame = card.key.startswith("decision:frame")
    # What the PR did as a whole ("该 PR 的核心思路是什么？") must be news beyond the whole summary, not a rewording
    # of it; any other card only must not ask what its cue shows.
    title = norm(card.entry.title if frame else card.cue)
    limit = 0.3 if frame else 0.5
    for target in tested(card):
        words = [t for t in content_tokens(seg, target) if len(norm(t)) >= 2]
        weight = {t: 2 if t.isascii() else 1 for t in words}  # a name in Latin script is what a reader remembers
        if words and sum(weight[t] for t in words if norm(t) in title) / sum(weight.values()) >= limit:
            return [Finding("Q4b", REJECT, f"'{_plain(target)}' is in the PR summary")]
    return []


def check_trivia(card: Card, seg: Segmenter) -> list[Finding]:
    """A4b: the answer is more than names: not a file path, a pair or list of identifiers, nor an
    everyday programming construct (try/finally, a lock)."""
    for target in tested(card):
        plain = _plain(target).strip().replace("`", "")
        if plain.lower() in CONSTRUCTS:
            return [Finding("A4b", REJECT, f"'{plain}' is an everyday construct, not this PR's decision")]
        if _FILE_PATH.fullmatch(plain) and not _FLAG.fullmatch(plain) and card.kind != CardKind.HEADLINE:
            return [Finding("A4b", REJECT, f"'{plain}' is a file name")]  # unless it is what the PR adds
        # A flag is how a user turns a decision on or off (--enable-auto-tool-choice): an entry point worth recalling.
        names = _NAME_LIST_SEP.split(plain)
        if len(names) >= 2 and all(_IDENTIFIER.fullmatch(n.strip()) for n in names):
            return [Finding("A4b", REJECT, f"'{plain}' only lists identifiers")]
    return []


def tested(card: Card) -> list[str]:
    """What *card* asks the learner to recall: its answer, or its cloze gaps."""
    return [b for _, b in _deletions(card.prompt)] if card.kind == CardKind.CLOZE else [card.answer]


def check_question_length(card: Card, seg: Segmenter) -> list[Finding]:
    """Q5: questions short enough to read at a glance."""
    if card.kind == CardKind.CLOZE:
        return []
    n = units(card.prompt)
    if n > 80:
        return [Finding("Q5", REJECT, f"question is {n} units")]
    if n > 50 or n < 6:
        return [Finding("Q5", WARN, f"question is {n} units")]
    return []


def check_answer_length(card: Card, seg: Segmenter) -> list[Finding]:
    """A1/A1c: short answers; cloze deletions of 2–12 units."""
    if card.kind == CardKind.CLOZE:
        findings = []
        for _, body in _deletions(card.prompt):
            n = units(body)
            atomic = bool(_ATOMIC.fullmatch(body))
            if n > 20 or (n < 2 and not atomic):
                findings.append(Finding("A1c", REJECT, f"deletion '{body}' is {n} units"))
            elif n > 12:
                findings.append(Finding("A1c", WARN, f"deletion '{body}' is {n} units"))
        return findings
    n = units(card.answer)
    if n > (_LONGEST_DECISION if card.kind in _WHOLE_DECISION else 35):  # what a named decision does: a few clauses
        return [Finding("A1", REJECT, f"answer is {n} units")]
    if n > 20:
        return [Finding("A1", WARN, f"answer is {n} units")]
    return []


def check_one_fact(card: Card, seg: Segmenter) -> list[Finding]:
    """A2: one fact per answer: no clause breaks, no list."""
    if card.kind == CardKind.CLOZE:
        return []
    answer = _plain(card.answer)
    # What a named decision does may take a few short clauses ("每步保留 K 个候选，最终只挑 M 个"); nothing else may.
    decision = card.kind in _WHOLE_DECISION
    breaks = len(_CLAUSE_BREAK.findall(answer))
    if breaks > (3 if decision else 0) or ENUM_MARKER.search(answer):
        return [Finding("A2", REJECT, "answer holds more than one fact")]
    if "、" in answer and units(answer) > 12 and not decision and not _EITHER_OR.search(answer):
        # a mechanism may name its parts (A、B 与 C); "要么不支持、要么更慢" is one reason
        return [Finding("A2", REJECT, "answer is a list")]
    verbs = [t for t in seg.tokenize(answer) if not t.protected and seg.pos(t.text) in ("v", "vd", "vi")]
    # POS tags over-count verbs in technical Chinese (预算, 超时 …): only a long answer with
    # many of them is taken for several facts.
    if len(verbs) > 4 and units(answer) > 16 and card.kind not in _WHOLE_DECISION:
        return [Finding("A2", REJECT, f"answer has {len(verbs)} verbs")]
    if len(verbs) >= 4:
        return [Finding("A2", WARN, f"answer has {len(verbs)} verbs")]
    if _JOINED.search(answer) and len(verbs) >= 2:
        return [Finding("A2", WARN, "answer joins two predicates")]
    return []


def check_specific(card: Card, seg: Segmenter) -> list[Finding]:
    """A4: no answer (or deletion) that is a generic word or a lone character."""
    targets = [b for _, b in _deletions(card.prompt)] if card.kind == CardKind.CLOZE else [card.answer]
    for target in targets:
        plain = _plain(target).strip()
        core = BOOST_VERB.sub("", plain)
        if plain in GENERIC or core in GENERIC or plain.strip("`").lower() in GENERIC or plain in STOPWORDS \
                or len(plain) <= 1 and not plain.isascii():
            return [Finding("A4", REJECT, f"'{plain}' is not specific")]
        if _NUMBER.fullmatch(plain):
            return [Finding("A4", REJECT, "bare number")]
        if not _WORDLIKE.search(plain):
            return [Finding("A4", REJECT, f"'{plain}' is only symbols")]
        if len(plain) <= 2 and seg.pos(plain) in _VERB_TAGS:
            return [Finding("A4", REJECT, f"'{plain}' is a bare verb")]  # "…怎么处理？→ 完成"
        if plain.endswith(DEICTIC_ENDS):
            return [Finding("A4", REJECT, f"'{plain}' points back at the review instead of naming the place")]
        if _COUNTING.fullmatch(plain):
            return [Finding("A4", REJECT, f"'{plain}' only counts things")]
    return []


def check_fragments(card: Card, seg: Segmenter) -> list[Finding]:
    """A5: nothing starts or ends mid-phrase; code tokens keep their boundaries."""
    pieces = {"answer": card.answer}
    if card.kind == CardKind.CLOZE:
        pieces = {f"deletion {i}": b for i, b in _deletions(card.prompt)}
    else:
        pieces["question"] = card.prompt
    findings = []
    for label, text in pieces.items():
        plain = _plain(text).strip()
        if plain.startswith(BAD_START) or (label != "question" and ends_mid_phrase(plain, seg)):
            findings.append(Finding("A5", REJECT, f"{label} is a broken fragment: '{plain}'"))
        elif label.startswith("deletion") and plain.startswith(_COMPLEMENT_START):
            # "内建被替换{{为解释器版本的 builder}}": the gap took the verb's complement along
            findings.append(Finding("A5", REJECT, f"{label} starts with a verb's complement: '{plain}'"))
    source_words = _source_words(card.sentence, card.entry.review)
    for word in _ASCII_WORD.findall(_plain(card.answer)):
        if word not in source_words:
            findings.append(Finding("A5", REJECT, f"'{word}' is a truncated identifier"))
            break
    return findings


def ends_mid_phrase(text: str, seg: Segmenter) -> bool:
    """Whether *text* ends in a word that needs more after it (的, 和, 将, 向 …): as a word, so 前向 ends in none."""
    if not text.endswith(BAD_END):
        return False
    tokens = [t for t in seg.tokenize(text) if t.text.strip()]
    return not tokens or (not tokens[-1].protected and tokens[-1].text in BAD_END) or text.endswith(("、", "，"))


@lru_cache(maxsize=256)  # one review serves all the candidates of its PR
def _review_words(review: str) -> frozenset[str]:
    return frozenset(_ASCII_WORD.findall(strip_markdown(review)))


@lru_cache(maxsize=256)  # a PR's candidates come from a few sentences
def _source_words(sentence: str, review: str) -> frozenset[str]:
    """The identifiers of ``sentence + " " + review`` (plain), without re-reading the review per card."""
    if "`" in sentence or "*" in sentence:
        # Markup in the sentence could pair with markup in the review: read them as one text.
        return frozenset(_ASCII_WORD.findall(strip_markdown(sentence + " " + review)))
    # Otherwise stripping markup and finding words both stop at the joining space
    # (no pattern looks behind it), so the two halves can be read apart.
    return _review_words(review).union(_ASCII_WORD.findall(sentence))


@lru_cache(maxsize=4096)  # the same prompts, answers and deletions are checked for several candidates
def balanced(text: str) -> bool:
    """Whether brackets and quotes pair up in *text* (backticks and ASCII quotes come in even numbers)."""
    stack: list[str] = []
    for ch in _BRACKETS_RE.findall(text):  # only brackets and quotes matter: skip the rest in C
        if ch in PAIRS:
            stack.append(PAIRS[ch])
        elif ch in _CLOSERS:
            if not stack or stack.pop() != ch:
                return False
    return not stack and text.count("`") % 2 == 0 and text.count('"') % 2 == 0


def check_balanced(card: Card, seg: Segmenter) -> list[Finding]:
    """A6: brackets and quotes pair up in question, answer, cloze text and every deletion."""
    texts = [card.prompt, card.answer] + [b for _, b in _deletions(card.prompt)]
    texts[0] = cloze_plain(card.prompt, style="blank")
    for text in texts:
        if not balanced(text):
            return [Finding("A6", REJECT, f"unbalanced brackets or quotes in '{text}'")]
    return []


def check_orphans(card: Card, seg: Segmenter) -> list[Finding]:
    """A7: no field opens with a pronoun or connective whose referent is missing."""
    texts = [card.answer] if card.kind == CardKind.CLOZE else [card.prompt, card.answer]
    findings = []
    for text in texts:
        plain = _plain(text).strip().lstrip("「“")
        if ORPHAN_START.match(plain):
            findings.append(Finding("A7", REJECT, f"starts with an orphan pronoun or connective: '{plain[:12]}'"))
        if REFERENCE_ANYWHERE.search(plain):
            findings.append(Finding("A7", REJECT, f"refers back to text the card does not show: '{plain[:12]}'"))
    if card.kind != CardKind.CLOZE and _THESE.search(_plain(card.answer)):
        findings.append(Finding("A7", REJECT, "the answer refers to things the card does not name"))  # 把这些区域…
    if card.kind != CardKind.CLOZE and _BOTH.search(_plain(card.prompt)):
        findings.append(Finding("A7", REJECT, "the question refers to two things it does not name"))
    if card.kind != CardKind.CLOZE and _PRONOUN.search(_plain(card.answer)):
        findings.append(Finding("A7", WARN, "pronoun in the answer"))
    return findings


def check_cloze_syntax(card: Card, seg: Segmenter) -> list[Finding]:
    """A8: a cloze note has 1–3 deletions and no Anki syntax inside a deletion."""
    if card.kind != CardKind.CLOZE:
        return []
    found = _deletions(card.prompt)
    ordinals = {i for i, _ in found}
    if not found or len(ordinals) > 3:
        return [Finding("A8", REJECT, f"{len(ordinals)} cloze deletions")]
    for _, body in found:
        if "::" in body or "{{" in body or "}}" in body:
            return [Finding("A8", REJECT, f"Anki cloze syntax inside deletion '{body}'")]
    return []


def check_cloze_context(card: Card, seg: Segmenter) -> list[Finding]:
    """A9/A3c: enough visible context; the hidden text is not visible elsewhere."""
    if card.kind != CardKind.CLOZE:
        return []
    visible = cloze_plain(card.prompt, style="blank")
    total = units(_CLOZE_SYNTAX.sub("", cloze_plain(card.prompt)))
    # A summary is the PR's one line: a short one still says what the gap is about (packing_samples 模式下显式忽略 X).
    if not (_SHORTEST_SUMMARY_CLOZE if card.sentence == card.entry.title else 12) <= total <= 100:
        return [Finding("A9", REJECT, f"cloze text is {total} units")]
    found = _deletions(card.prompt)
    folded = norm(visible)
    for ordinal, body in found:
        hidden = sum(units(b) for i, b in found if i == ordinal)
        if hidden / max(total, 1) > 0.35:
            return [Finding("A9", REJECT, f"deletion {ordinal} hides {hidden}/{total} units")]
        if norm(body) in folded:
            return [Finding("A3c", REJECT, f"'{body}' is still visible")]
        if norm(body) in norm(card.cue):
            return [Finding("A3c", REJECT, f"'{body}' is visible in the context cue")]
        if _shown_inside(body, visible + " " + card.cue):
            return [Finding("A3c", REJECT, f"'{body}' is guessed from a name shown beside it")]
        for part in _NAME_PARTS.split(body.strip("`")):
            if len(part) >= 5 and part in _CODE_SPAN.sub("", visible) and part.lower() not in ("cache",):
                return [Finding("A3c", WARN, f"part '{part}' of '{body}' is visible")]
    return []


def check_extractive(card: Card, seg: Segmenter) -> list[Finding]:
    """A10: every content word of the answer occurs in the review it came from."""
    targets = [b for _, b in _deletions(card.prompt)] if card.kind == CardKind.CLOZE else [card.answer]
    raw = _source_text(card.sentence, card.entry.review)
    for target in targets:
        # Most words are found verbatim; the review is normalised only when one is not.
        missing = [t for t in content_tokens(seg, target) if t not in raw and norm(t) not in norm(raw)]
        if missing:
            return [Finding("A10", REJECT, f"answer words not in the review: {missing}")]
    return []


@lru_cache(maxsize=256)  # a PR's candidates share a few source sentences
def _source_text(sentence: str, review: str) -> str:
    return (sentence + review).lower()


def check_typography(card: Card, seg: Segmenter) -> list[Finding]:
    """A15: no doubled spaces, no raw Markdown bold."""
    for text in (card.prompt, card.answer):
        if "  " in text or "**" in text:
            return [Finding("A15", WARN, "doubled space or raw Markdown")]
    return []


CHECKS: tuple[Callable[[Card, Segmenter], list[Finding]], ...] = (
    check_answer_shape, check_yes_no, check_context_cue, check_context_free, check_leak, check_restated_name, check_summary_leak,
    check_trivia,
    check_answer_phrase, check_time_answer,
    check_question_length,
    check_answer_length, check_one_fact, check_specific, check_fragments, check_balanced,
    check_orphans, check_cloze_syntax, check_cloze_context, check_extractive, check_typography,
)


def review_card(card: Card, seg: Segmenter) -> list[Finding]:
    """All findings of the single-card checks for *card*."""
    findings: list[Finding] = []
    for check in CHECKS:
        findings.extend(check(card, seg))
    return findings


# Selection only needs to know whether a card is rejected, and its warnings if it is not.
# Checks are pure, so their order is free: the ones that segment text (or read the whole
# review) go last, and a card rejected by a cheap check never pays for them.
_COSTLY = (check_fragments, check_one_fact, check_answer_phrase, check_extractive, check_leak, check_summary_leak)
_SELECTION_ORDER = tuple(c for c in CHECKS if c not in _COSTLY) + _COSTLY


def warnings_unless_rejected(card: Card, seg: Segmenter) -> list[Finding] | None:
    """The findings :func:`review_card` gives *card*, or None if any of them rejects it."""
    findings: list[Finding] = []
    for check in _SELECTION_ORDER:
        found = check(card, seg)
        if found and any(f.severity == REJECT for f in found):
            return None
        findings.extend(found)
    return findings


def score(candidate: Candidate, findings: list[Finding]) -> float:
    """Rank: relation trust, a short specific answer, minus warnings; a cloze pays for each extra gap."""
    card = candidate.card
    value = candidate.rank
    if card.kind == CardKind.CLOZE:
        value -= 0.2 * (anki_cards(card) - 1)
    else:
        if 2 <= units(card.answer) <= 15:
            value += 0.5
        if _CODE_OR_WORD.search(card.answer):
            value += 0.3
    value -= 0.6 * sum(1 for f in findings if f.severity == WARN)
    return round(value, 4)


def deletions_of(card: Card) -> tuple[tuple[int, str], ...]:
    """The cloze deletions of *card* (none for a Q/A card)."""
    return _deletions(card.prompt) if card.kind == CardKind.CLOZE else ()
