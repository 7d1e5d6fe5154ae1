"""A clause of a decision in; its key phrases out: the spans a learner should recall, scored by a small model.

A review states a decision in its own words, and the phrase a good card asks for (``lru_cache``, 只负责查找,
默认开启, 回退到非 GPU 的 runner) is a run of whole words of one clause.  Relation templates find some of them;
this model finds them anywhere: every run of one to :data:`LONGEST_TOKENS` words that may start and end a phrase
is scored by a logistic model over the words at its edges and around it, its length and shape, and where its
clause stands (the summary line, a named decision, an item of a list, prose) and how likely the clause states a
decision.  Its weights are data (``rules/spans.json``), trained by ``benchmarks/train_spans.py`` on the
development half of the labelled corpus only, whose gold keys are such spans; a word the model names is one
seen in many reviews, never a name of one PR.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from ..files.datadir import model_weights, read_model
from ..text.segment import Segmenter, Token, units

SPANS_FILE = "spans.json"
LONGEST_TOKENS = 7
"""Words a span may hold: 96% of the development half's gold keys hold at most 7."""
LONGEST_UNITS = 14
_SIZES = (1, 2, 3, 4, 6, 8, 11)
"""Edges of a span's size buckets, in units."""
_OPENERS = frozenset("（(“「《")
_CLOSERS = frozenset("）)”」》")
_PUNCT = frozenset("，,；;。：:、！？!?…—·")
_THING_ENDS = frozenset({"n", "C", "L", "e"})
_OBJECT_AFTER = frozenset({"为", "成", "到", "是", "了"})
"""Shapes (:func:`_shape`, first letter) of a phrase's last word when it names a thing: nouns, code, English."""
_NEVER_FIRST = frozenset({"的", "了", "着", "和", "与", "及", "或", "并", "而", "且", "但", "则", "是", "地", "得", "也",
                          "就", "都", "又", "还", "把", "将", "被", "让", "使"})
_NEVER_LAST = frozenset({"的", "和", "与", "及", "或", "并", "而", "将", "在", "对", "把", "被", "从", "向", "以", "为",
                         "让", "使", "由", "给", "用", "通过", "是", "地", "得"})


@dataclass(frozen=True, slots=True)
class Site:
    """Where a clause stands: ``title`` (the summary line), ``named`` (a named decision's explanation), ``item``
    (an item of a list) or ``prose``; whether it is its unit's first clause; its decision score (None: unknown)."""

    where: str
    first: bool = True
    decision: float | None = None


@dataclass(frozen=True, slots=True)
class KeySpan:
    text: str
    start: int
    end: int
    probability: float
    askable: bool
    """Whether the phrase can be asked for in place with 什么: it names a thing (it ends in a noun or a name and
    opens with no verb) where an object stands (after a verb or a preposition: 依赖 ETCD, 用 X 管理).  A thing
    asked where a subject stands read as vague ("什么只负责查找？": round 1 of the verdicts)."""


def _shape(token: Token, seg: Segmenter) -> str:
    if token.protected:
        return "C" if token.text.startswith("`") else "L"
    if token.text.isdigit():
        return "D"
    if token.text in _OPENERS or token.text in _CLOSERS:
        return "Q"
    if token.text in _PUNCT:
        return "P"
    return (seg.pos(token.text) or "x")[:2]


def _bucket(n: float, edges: tuple[float, ...]) -> str:
    return next((f"<={edge}" for edge in edges if n <= edge), "more")


class _Words:
    """The tokens of one clause with what every span's features read of them, computed once."""

    def __init__(self, clause: str, seg: Segmenter) -> None:
        self.tokens = [t for t in seg.tokenize(clause) if t.text.strip()]
        self.shapes = [_shape(t, seg) for t in self.tokens]
        self.texts = [t.text for t in self.tokens]
        self.verbs = [s.startswith("v") and s != "vn" for s in self.shapes]
        self.units = [1 if t.protected else units(t.text) for t in self.tokens]
        """Each word's length in units (:func:`~deckgen.text.segment.units`): a span's is their sum, as the words
        of a clause hold all of its code spans and English words and no CJK character lies between them."""

    def starts(self, i: int) -> bool:
        text = self.texts[i]
        return text not in _NEVER_FIRST and text not in _PUNCT and text not in _CLOSERS

    def ends(self, j: int) -> bool:
        text = self.texts[j]
        return text not in _NEVER_LAST and text not in _PUNCT and text not in _OPENERS


def _balanced(texts: list[str]) -> bool:
    depth = 0
    for text in texts:
        if text in _OPENERS:
            depth += 1
        elif text in _CLOSERS:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0 and sum(t.count("`") for t in texts) % 2 == 0


def spans(clause: str, seg: Segmenter, site: Site) -> Iterator[tuple[int, int, list[str]]]:
    """Every span of *clause* a phrase may be (token indices ``i:j`` of its words), with its features."""
    return _spans(clause, _Words(clause, seg), site)


def _context(site: Site) -> list[str]:
    """The features every span of a clause at *site* shares."""
    context = ["bias", f"site={site.where}", f"first={site.first}"]
    if site.decision is not None:
        context.append(f"decision{_bucket(round(10 * site.decision), (2, 4, 6, 8))}")
    return context


def _start(words: _Words, i: int) -> list[str]:
    """The features of a span that starts at word *i*: the word before it, and its first word."""
    return [f"p={words.shapes[i - 1]}" if i else "p=^", f"pw={words.texts[i - 1]}" if i else "pw=^",
            f"f={words.shapes[i]}", f"fw={words.texts[i]}"]


def _end(words: _Words, j: int) -> list[str]:
    """The features of a span that ends before word *j*: the word after it, and its last word."""
    n = len(words.tokens)
    return [f"x={words.shapes[j]}" if j < n else "x=$", f"xw={words.texts[j]}" if j < n else "xw=$",
            f"l={words.shapes[j - 1]}", f"lw={words.texts[j - 1]}"]


def _pairs(clause: str, words: _Words) -> Iterator[tuple[int, int, list[str]]]:
    """Every span a phrase may be, with the features that depend on both its ends."""
    n = len(words.tokens)
    for i in range(n):
        if not words.starts(i):
            continue
        before = words.shapes[i - 1] if i else "^"
        for j in range(i + 1, min(n, i + LONGEST_TOKENS) + 1):
            if not words.ends(j - 1) or not _balanced(words.texts[i:j]):
                continue
            size = units(clause[words.tokens[i].start:words.tokens[j - 1].end])
            if size > LONGEST_UNITS:
                break
            if size < 2 and not words.tokens[i].protected:
                continue
            found = [f"fl={words.shapes[i]}_{words.shapes[j - 1]}", f"n={j - i}",
                     f"u{_bucket(size, _SIZES)}", f"verbs={min(sum(words.verbs[i:j]), 2)}",
                     f"px={before}_{words.shapes[j] if j < n else '$'}"]
            if i == 0 and j == n:
                found.append("whole")
            elif i == 0:
                found.append("at_start")
            elif j == n:
                found.append("at_end")
            if "的" in words.texts[i:j]:
                found.append("has_de")
            yield i, j, found


def _spans(clause: str, words: _Words, site: Site) -> Iterator[tuple[int, int, list[str]]]:
    context = _context(site)
    for i, j, pair in _pairs(clause, words):
        yield i, j, [*context, *_start(words, i), *_end(words, j), *pair]


class _PairWeights:
    """The weights of the features of :func:`_pairs` that depend on both ends of a span, looked up by their parts
    (a shape, a length) instead of by a name made for every span: filled as they are asked for, for one *table*."""

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table
        get = table.get
        self.lengths = [get(f"n={n}", 0.0) for n in range(LONGEST_TOKENS + 1)]
        self.sizes = [get(f"u{_bucket(size, _SIZES)}", 0.0) for size in range(LONGEST_UNITS + 1)]
        self.verbs = [get(f"verbs={min(count, 2)}", 0.0) for count in range(LONGEST_TOKENS + 1)]
        self.whole, self.at_start, self.at_end, self.has_de = (get(name, 0.0)
                                                               for name in ("whole", "at_start", "at_end", "has_de"))
        self._by_first: dict[str, _Filled] = {}

    def first_last(self, first: str) -> _Filled:
        """The weight of ``fl=<first>_<last>`` by the shape of the last word."""
        return self._by_second(f"fl={first}_")

    def around(self, before: str) -> _Filled:
        """The weight of ``px=<before>_<after>`` by the shape after the span."""
        return self._by_second(f"px={before}_")

    def _by_second(self, prefix: str) -> _Filled:
        found = self._by_first.get(prefix)
        if found is None:
            get = self.table.get
            found = self._by_first[prefix] = _Filled(lambda second: get(prefix + second, 0.0))
        return found


class _Filled(dict[str, float]):
    """A dict that fills a missing key from *fill* the first time it is asked for."""

    def __init__(self, fill: Callable[[str], float]) -> None:
        super().__init__()
        self.fill = fill

    def __missing__(self, key: str) -> float:
        value = self[key] = self.fill(key)
        return value


_LAST_PAIRS: list[_PairWeights] = []


def _pair_weights(table: dict[str, float]) -> _PairWeights:
    """The pair weights of *table*, made once for the table last asked about (in a build, the shipped one): a dict
    is no cache key, so it is known by identity."""
    if not _LAST_PAIRS or _LAST_PAIRS[0].table is not table:
        _LAST_PAIRS[:] = [_PairWeights(table)]
    return _LAST_PAIRS[0]


def _sums(clause: str, words: _Words, site: Site, table: dict[str, float]) -> Iterator[tuple[int, int, int, float]]:
    """What :func:`_spans` gives, each span's weights summed instead of its feature names, with its size in units.

    The spans of :func:`_pairs`, of the sizes it measures, in one loop: the weights of a span's clause, start and
    end are looked up once, not once per span, those of its ends together (:class:`_PairWeights`) by their parts, a
    span's balance, size and verb count grow with its end, and no name list is made per span.  Every clause of every
    review is scored: name lists were most of a build's time.  A span's weights are added as the loop this one
    replaced added them (the clause's, the start's, the end's, then those of :func:`_pairs`' names in their order):
    the same floats.  :func:`_spans`, which training reads, sums them flat: the same within rounding.
    """
    get = table.get
    pairs = _pair_weights(table)
    context = sum(get(name, 0.0) for name in _context(site))
    n = len(words.tokens)
    shapes, texts, verbs = words.shapes, words.texts, words.verbs
    starts = [sum(get(name, 0.0) for name in _start(words, i)) for i in range(n)]
    ends = [0.0] + [sum(get(name, 0.0) for name in _end(words, j)) for j in range(1, n + 1)]
    may_end = [words.ends(j) for j in range(n)]
    backticks = [text.count("`") for text in texts]
    sizes = words.units
    lengths, size_weights, verb_weights = pairs.lengths, pairs.sizes, pairs.verbs
    for i in range(n):
        if not words.starts(i):
            continue
        by_last, by_after = pairs.first_last(shapes[i]), pairs.around(shapes[i - 1] if i else "^")
        protected = words.tokens[i].protected
        opened = ticks = verb_count = size = 0
        has_de = False
        for j in range(i + 1, min(n, i + LONGEST_TOKENS) + 1):
            text = texts[j - 1]
            if text in _OPENERS:
                opened += 1
            elif text in _CLOSERS:
                opened -= 1
                if opened < 0:
                    break  # a closer with no opener: no longer span is balanced either
            ticks += backticks[j - 1]
            verb_count += verbs[j - 1]
            size += sizes[j - 1]
            has_de = has_de or text == "的"
            if not may_end[j - 1] or opened or ticks % 2:
                continue
            if size > LONGEST_UNITS:
                break
            if size < 2 and not protected:
                continue
            pair = by_last[shapes[j - 1]]
            pair += lengths[j - i]
            pair += size_weights[size]
            pair += verb_weights[verb_count]
            pair += by_after[shapes[j] if j < n else "$"]
            if i == 0 and j == n:
                pair += pairs.whole
            elif i == 0:
                pair += pairs.at_start
            elif j == n:
                pair += pairs.at_end
            if has_de:
                pair += pairs.has_de
            yield i, j, size, context + starts[i] + ends[j] + pair


@lru_cache(maxsize=1)
def weights() -> dict[str, float]:
    """The model's weights (``rules/spans.json``); empty when there is none, and then no span is found."""
    return model_weights(read_model(SPANS_FILE))


def probability(names: list[str], table: dict[str, float]) -> float:
    return _logistic(sum(table.get(name, 0.0) for name in names))


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


def key_spans(clause: str, seg: Segmenter, site: Site, limit: int = 2, floor: float = 0.0,
              longest: int = LONGEST_UNITS) -> list[KeySpan]:
    """The *limit* likeliest key phrases of *clause* of at most *longest* units that do not overlap, each but the
    first at least *floor* likely."""
    return list(_key_spans(clause, seg, site, limit, floor, longest))


@lru_cache(maxsize=4096)  # pure; reviews repeat their clauses (a summary's in its review, lists in prose)
def _key_spans(clause: str, seg: Segmenter, site: Site, limit: int, floor: float, longest: int) -> tuple[KeySpan, ...]:
    table = weights()
    if not table:
        return ()
    scored = []
    words = _Words(clause, seg)
    tokens = words.tokens
    for i, j, size, z in _sums(clause, words, site, table):
        if size <= longest:
            scored.append((-_logistic(z), tokens[i].start, tokens[j - 1].end, i, j))
    found: list[KeySpan] = []
    for chance, a, b, i, j in sorted(scored):
        if len(found) >= limit or (found and -chance < floor):
            break  # the likeliest phrase of a clause is always offered: most clauses of a decision hold one
        if all(b <= k.start or a >= k.end for k in found):
            thing = words.shapes[j - 1][:1] in _THING_ENDS and not words.verbs[i]
            placed = i > 0 and (words.verbs[i - 1] or words.shapes[i - 1] == "p" or words.texts[i - 1] in _OBJECT_AFTER)
            found.append(KeySpan(clause[a:b], a, b, round(-chance, 3), thing and placed))
    return tuple(found)
