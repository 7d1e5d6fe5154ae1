"""The quality gate: the automatable card checks (``card-quality.md`` §2), then ranking.

Every check is a function of one candidate returning :class:`Finding` values;
severity ``R`` rejects the card, ``W`` lowers its rank.  Deck-level checks
(duplicate questions, interference) run in :func:`select_cards`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

from ..text.markup import cloze_plain, deletions, strip_markdown
from ..text.segment import Segmenter, units
from ..types import Card, CardKind, norm

REJECT, WARN = "R", "W"
INTERROGATIVES = re.compile(r"什么|哪|为什么|为何|如何|怎样|怎么|多少|几|谁|何时")
YES_NO = re.compile(r"吗[？?]$|是否|是不是|能否|可否|有没有|还是")
STOPWORDS = frozenset("的 了 和 与 及 或 并 而 在 将 对 把 被 从 以 为 其 该 此 等 地 得 着 是 中 上 下".split())
GENERIC = frozenset({
    "安全性", "性能", "效率", "稳定性", "正确性", "开销", "兼容性", "可读性", "问题", "测试", "可能性",
    "提升性能", "提高性能", "性能优化", "优化", "代码", "实现", "逻辑", "设计", "改动", "改进", "意义",
    "默认", "错误", "影响", "细节", "结果", "方案", "价值",
})
# "提升性能" is as generic as "性能": the verb is stripped before looking the word up.
BOOST_VERB = re.compile(r"^(?:提升|提高|降低|减少|保证|确保|改善|增强)")
BAD_START = ("的", "了", "着", "和", "与", "及", "或", "并", "而", "且", "但", "则", "、")
BAD_END = ("的", "和", "与", "及", "或", "并", "而", "将", "在", "对", "把", "被", "从", "向", "以", "为", "、", "，")
ORPHAN_START = re.compile(r"^(?:其|该(?!\s*PR|不该)|此(?!\s*PR)|这|那|它|它们|上述|前者|后者|此外|另外|同时|因此|所以|但是|然而|而且|并且|并|也)")
ENUM_MARKER = re.compile(r"(?:^|[\s：:；;，,])(?:\d{1,2}[.)）、]|[①-⑳]|[一二三四五]是)")
_ASCII_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/+#%\-]*")
PAIRS = {"(": ")", "（": "）", "[": "]", "【": "】", "{": "}", "《": "》", "〈": "〉", "“": "”", "‘": "’", "「": "」", "『": "』"}
_CLOSERS = frozenset(PAIRS.values())
_BRACKETS_RE = re.compile("[" + re.escape("".join(PAIRS) + "".join(PAIRS.values())) + "]")
# Every check's patterns compiled once: ``re.sub(str, …)`` pays a cache look-up per call,
# and the gate makes a few hundred thousand of them on a large corpus.
_QUOTED = re.compile(r"「[^」]*」|“[^”]*”")
_ATOMIC = re.compile(r"`[^`]+`|[\x21-\x7e ]+")
_CLAUSE_BREAK = re.compile(r"[，；;。]")
_JOINED = re.compile(r"并|同时|以及")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_COUNTING = re.compile(r"[一二两三四五六七八九十几多\d]+\s*(?:个|点|处|层|项|条|种|类).{0,4}?(?:设计|改动|要点|方面|问题|亮点|原因|决策|做法|模式|点)")
_PRONOUN = re.compile(r"(?<![A-Za-z])(?:其|它)(?!他|中|次|余|实)")
_CLOZE_SYNTAX = re.compile(r"\{\{c\d+::|\}\}")
_NAME_PARTS = re.compile(r"[_.]")
_CODE_SPAN = re.compile(r"`[^`]*`")
_CODE_OR_WORD = re.compile(r"`|[A-Za-z_]{3,}")


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
    if card.kind != CardKind.CLOZE and YES_NO.search(_QUOTED.sub("", card.prompt)):
        return [Finding("Q2", REJECT, "yes/no or binary-choice question")]
    return []


def check_context_cue(card: Card, seg: Segmenter) -> list[Finding]:
    """Q3: every front carries the PR cue."""
    return [] if card.cue.strip() else [Finding("Q3", REJECT, "no context cue")]


def check_leak(card: Card, seg: Segmenter) -> list[Finding]:
    """Q4/A3: the answer cannot be read off the front (cue included)."""
    if card.kind == CardKind.CLOZE:
        return []
    front = front_of(card)
    folded = norm(front)
    if norm(card.answer) in folded:
        return [Finding("A3", REJECT, "answer appears on the front")]
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
    if containment > 0.6:
        return [Finding("A3", REJECT, f"answer {containment:.0%} visible on the front")]
    if containment > 0.34:
        return [Finding("A3", WARN, f"answer {containment:.0%} visible on the front")]
    return []


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
    if n > 35:
        return [Finding("A1", REJECT, f"answer is {n} units")]
    if n > 20:
        return [Finding("A1", WARN, f"answer is {n} units")]
    return []


def check_one_fact(card: Card, seg: Segmenter) -> list[Finding]:
    """A2: one fact per answer: no clause breaks, no list."""
    if card.kind == CardKind.CLOZE:
        return []
    answer = _plain(card.answer)
    if _CLAUSE_BREAK.search(answer) or ENUM_MARKER.search(answer):
        return [Finding("A2", REJECT, "answer holds more than one fact")]
    if "、" in answer and units(answer) > 12:
        return [Finding("A2", REJECT, "answer is a list")]
    verbs = [t for t in seg.tokenize(answer) if not t.protected and seg.pos(t.text) in ("v", "vd", "vi")]
    # POS tags over-count verbs in technical Chinese (预算, 超时 …): only a long answer with
    # many of them is taken for several facts.
    if len(verbs) > 4 and units(answer) > 16:
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
        if plain in GENERIC or core in GENERIC or plain in STOPWORDS or len(plain) <= 1 and not plain.isascii():
            return [Finding("A4", REJECT, f"'{plain}' is not specific")]
        if _NUMBER.fullmatch(plain):
            return [Finding("A4", REJECT, "bare number")]
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
        if plain.startswith(BAD_START) or (label != "question" and plain.endswith(BAD_END)):
            findings.append(Finding("A5", REJECT, f"{label} is a broken fragment: '{plain}'"))
    source_words = _source_words(card.sentence, card.entry.review)
    for word in _ASCII_WORD.findall(_plain(card.answer)):
        if word not in source_words:
            findings.append(Finding("A5", REJECT, f"'{word}' is a truncated identifier"))
            break
    return findings


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


def _balanced(text: str) -> bool:
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
        if not _balanced(text):
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
    if not 12 <= total <= 100:
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
    check_answer_shape, check_yes_no, check_context_cue, check_leak, check_question_length,
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
_COSTLY = (check_fragments, check_one_fact, check_extractive, check_leak)
_SELECTION_ORDER = tuple(c for c in CHECKS if c not in _COSTLY) + _COSTLY


def _warnings_unless_rejected(card: Card, seg: Segmenter) -> list[Finding] | None:
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


def _trigrams(text: str) -> set[str]:
    text = norm(text)
    return {text[i : i + 3] for i in range(max(len(text) - 2, 1))}


def anki_cards(card: Card) -> int:
    """How many Anki cards a note gives: one per cloze number, one for a Q/A note."""
    return len({i for i, _ in _deletions(card.prompt)}) if card.kind == CardKind.CLOZE else 1


def select_cards(candidates: list[Candidate], seg: Segmenter, limit: int) -> list[Card]:
    """Reject, rank and deduplicate candidates; keep the best, at most *limit* Anki cards, in a stable order.

    Deduplication: one note per question and per key, one Q/A card per answer
    (the best-ranked direction of a fact), no near-identical questions.
    """
    passed: list[tuple[float, int, Card]] = []
    for index, candidate in enumerate(candidates):
        findings = _warnings_unless_rejected(candidate.card, seg)
        if findings is None:
            continue
        passed.append((score(candidate, findings), index, candidate.card))
    passed.sort(key=lambda item: (-item[0], item[1]))
    kept: list[tuple[int, Card]] = []
    decided: set[int] = set()
    kept_grams: list[tuple[Card, set[str]]] = []
    """Kept Q/A cards with their question's trigrams, computed once rather than per comparison."""
    seen: set[str] = set()
    total = 0
    per_sentence: dict[str, int] = {}
    # Two passes: first at most two notes per source sentence, so every decision the
    # review names gets a card before any decision gets a third; then fill up.
    for cap in (2, 3):
        for value, index, card in passed:
            if index in decided or per_sentence.get(card.sentence, 0) >= cap:
                continue
            # Past the cap, the outcome is final: what makes a card redundant or too big (the
            # kept cards, the marks seen, the total) only grows, so the second pass skips it.
            decided.add(index)
            marks = {"q:" + norm(card.prompt), "k:" + card.key}
            if card.kind != CardKind.CLOZE and _same_answer(card, [c for _, c in kept]):
                continue
            if card.kind == CardKind.CLOZE:
                # A phrase is blanked once per PR, whatever sentence carries it.
                marks |= {"d:" + norm(body) for _, body in _deletions(card.prompt)}
            else:
                marks.add("a:" + norm(card.answer))
            if marks & seen:
                continue
            grams = _trigrams(card.prompt) if card.kind != CardKind.CLOZE else set()
            if card.kind != CardKind.CLOZE and any(
                    _jaccard(grams, other_grams) >= 0.8 and norm(other.answer) != norm(card.answer)
                    for other, other_grams in kept_grams):
                continue
            size = anki_cards(card)
            if total + size > limit:
                continue
            seen |= marks
            total += size
            per_sentence[card.sentence] = per_sentence.get(card.sentence, 0) + 1
            kept.append((index, _with_score(card, value)))
            if card.kind != CardKind.CLOZE:
                kept_grams.append((card, grams))
    return [card for _, card in sorted(kept, key=lambda item: item[0])]


def _same_answer(card: Card, kept: list[Card]) -> bool:
    """Another Q/A card already has this answer, give or take a leading word (将 X / X)."""
    mine = norm(card.answer)
    for other in kept:
        theirs = norm(other.answer)
        if other.kind == CardKind.CLOZE or not mine or not theirs:
            continue
        short, long_ = sorted((mine, theirs), key=len)
        if short in long_ and len(short) >= 0.8 * len(long_):
            return True
    return False


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(len(a | b), 1)


def _with_score(card: Card, value: float) -> Card:
    return replace(card, score=value)
