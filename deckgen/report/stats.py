"""The numbers a maintainer watches as the corpus grows: ``deckgen stats``.

Everything is counted on the cards ``build`` would write (:func:`deckgen.pipeline.build_corpus`),
in Anki cards: a Q/A note is one card, a cloze note one card per deletion number.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from ..deck.notes import MIN_CARDS_PER_PR, Corpus, card_tags
from ..options import DEFAULT_SOURCES
from ..pipeline import build_corpus
from ..text.markup import anki_cards, deletions, strip_markdown
from ..text.segment import units
from ..types import Card, CardKind

TOPIC_PREFIX = "topic::"
# Answer-length buckets in units (one per CJK character or English word), after card-quality.md A1:
# ≤ 20 is the target, 21–35 a warning, longer is rejected by the gate.
LENGTH_BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("1-5", 1, 5), ("6-10", 6, 10), ("11-20", 11, 20), ("21-35", 21, 35), ("36+", 36, 1 << 30),
)


@dataclass(frozen=True)
class PrCount:
    """A PR and how many cards it gave."""

    where: str
    title: str
    cards: int


@dataclass(frozen=True)
class Decision:
    """A statement of a review that carries at least one fact: an enumeration item or a sentence."""

    where: str
    sentence: str


@dataclass(frozen=True)
class AnswerLengths:
    count: int
    min: int
    median: float
    p90: int
    max: int
    buckets: Mapping[str, int]


@dataclass(frozen=True)
class Stats:
    files: int
    prs: int
    decisions: int
    """Statements carrying facts; :attr:`facts` counts the relations found inside them."""
    facts: int
    notes: int
    cards: int
    cards_by_kind: Mapping[str, int]
    cards_by_topic: Mapping[str, int]
    """Cards per ``topic::<id>`` tag; a card with several topics counts in each."""
    cards_by_verdict: Mapping[str, int]
    prs_by_verdict: Mapping[str, int]
    answer_length: AnswerLengths
    prs_with_few_cards: tuple[PrCount, ...]
    decisions_without_card: tuple[Decision, ...]
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-able values (``deckgen stats --json``)."""
        return asdict(self)


def collect_stats(sources: Iterable[Path] = DEFAULT_SOURCES) -> Stats:
    """Stats for the deck ``build`` would make from *sources*; nothing is written."""
    return corpus_stats(build_corpus(sources))


def answer_units(card: Card) -> list[int]:
    """Length of the answer of each Anki card of *card* (a cloze note: one per deletion number)."""
    if card.kind != CardKind.CLOZE:
        return [units(strip_markdown(card.answer))]
    bodies: dict[int, list[str]] = {}
    for ordinal, body in deletions(card.prompt):
        bodies.setdefault(ordinal, []).append(strip_markdown(body))
    return [units("".join(parts)) for _, parts in sorted(bodies.items())]


def corpus_stats(corpus: Corpus) -> Stats:
    by_kind: Counter[str] = Counter()
    by_topic: Counter[str] = Counter()
    by_verdict: Counter[str] = Counter()
    per_pr: Counter[str] = Counter()
    lengths: list[int] = []
    carded: set[tuple[Path, int, str]] = set()
    for card in corpus.cards:
        count = anki_cards(card)
        by_kind[card.kind.value] += count
        if card.kind != CardKind.GLOSSARY:  # glossary cards have no reading verdict (nor a verdict tag)
            by_verdict[card.verdict.value] += count
        for tag in card_tags(card):
            if tag.startswith(TOPIC_PREFIX):
                by_topic[tag[len(TOPIC_PREFIX):]] += count
        per_pr[card.entry.pr_key] += count
        lengths.extend(answer_units(card))
        carded.add((card.entry.path, card.line, card.sentence))
    decisions: dict[tuple[Path, int, str], None] = {}
    for review in corpus.reviews:
        for fact in review.facts:
            decisions.setdefault((review.entry.path, fact.line, fact.sentence), None)
    return Stats(
        files=len(corpus.files),
        prs=len(corpus.reviews),
        decisions=len(decisions),
        facts=sum(len(r.facts) for r in corpus.reviews),
        notes=len(corpus.cards),
        cards=sum(by_kind.values()),
        cards_by_kind=_sorted(by_kind),
        cards_by_topic=_sorted(by_topic),
        cards_by_verdict=_sorted(by_verdict),
        prs_by_verdict=_sorted(Counter(r.verdict.value for r in corpus.reviews)),
        answer_length=_lengths(lengths),
        prs_with_few_cards=tuple(
            PrCount(f"{r.entry.path}:{r.entry.title_line}", r.entry.title, per_pr[r.entry.pr_key])
            for r in corpus.reviews if per_pr[r.entry.pr_key] < MIN_CARDS_PER_PR),
        decisions_without_card=tuple(Decision(f"{path}:{line}", sentence)
                                     for path, line, sentence in decisions if (path, line, sentence) not in carded),
        warnings=corpus.warnings,
    )


def _sorted(counter: Counter[str]) -> dict[str, int]:
    """Largest first, then by name: stable output for equal counts."""
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def _lengths(values: list[int]) -> AnswerLengths:
    buckets = {name: sum(1 for v in values if low <= v <= high) for name, low, high in LENGTH_BUCKETS}
    if not values:
        return AnswerLengths(0, 0, 0, 0, 0, buckets)
    ordered = sorted(values)
    p90 = ordered[max(0, -(-9 * len(ordered) // 10) - 1)]  # nearest-rank 90th percentile
    return AnswerLengths(len(values), ordered[0], statistics.median(ordered), p90, ordered[-1], buckets)


def format_stats(stats: Stats) -> str:
    """The stats as a short report for the terminal."""
    def counts(mapping: Mapping[str, int]) -> str:
        return " · ".join(f"{name} {count}" for name, count in mapping.items()) or "none"

    lengths = stats.answer_length
    widest = max(lengths.buckets.values(), default=0) or 1
    lines = [
        f"{stats.prs} PRs in {stats.files} seed file(s): {stats.decisions} decisions ({stats.facts} facts), "
        f"{stats.notes} notes, {stats.cards} cards",
        f"cards by kind:     {counts(stats.cards_by_kind)}",
        f"cards by topic:    {counts(stats.cards_by_topic)}",
        f"cards by verdict:  {counts(stats.cards_by_verdict)}",
        f"PRs by verdict:    {counts(stats.prs_by_verdict)}",
        f"answer length (units): min {lengths.min} · median {lengths.median:g} · p90 {lengths.p90} · max {lengths.max}",
    ]
    lines += [f"  {name:>5}  {'█' * round(24 * n / widest):<24} {n}" for name, n in lengths.buckets.items()]
    lines.append(f"PRs without a card: {len(stats.prs_with_few_cards)}")
    lines += [f"  {pr.where}  {pr.cards} card(s)  {pr.title}" for pr in stats.prs_with_few_cards]
    lines.append(f"decisions that produced no card: {len(stats.decisions_without_card)}")
    lines += [f"  {d.where}  {d.sentence}" for d in stats.decisions_without_card]
    lines.append(f"warnings: {len(stats.warnings)}")
    lines += [f"  {warning}" for warning in stats.warnings]
    return "\n".join(lines)
