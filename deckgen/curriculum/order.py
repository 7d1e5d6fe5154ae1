"""Study order: the new-card position (``due``) of every note in a package.  Pure.

Anki shows new cards by position, and an import takes the package's position
verbatim for new cards while never moving cards a user already has.  So the
order is decided here, once per package, by these keys in turn:

1. **Generation.** A unit (a PR, or one glossary term) first seen in an earlier
   build comes before one first seen later, so a new PR goes after the
   existing ones.  ``first_seen`` maps a card's identity (PR key, card key)
   to the time the deck's lock file first saw it; a unit none of whose cards
   is known is new.  Without a lock, every unit is in the same generation.
2. **Topic.** The first of the card's topics in the package's topic order (the
   taxonomy order, or the topics asked for); cards without a topic go last.
3. **Glossary before PRs** within a topic.  A glossary card carries every
   topic of every PR that uses it, so it always lands in or before the topic
   of each of those PRs: terms are explained before they are used.
4. **PR order**: the order the PRs come in the corpus (glossary: file order).
5. **Card kind** within a PR: decision cards first (what a named decision
   does, then its reverse), then the derived how/why/contrast cards, then
   cloze cards; within a kind, the quality gate's order (best first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..types import Card, CardKind
from .topics import card_topics

KIND_RANK: Mapping[CardKind, int] = {
    CardKind.GLOSSARY: 0,
    CardKind.HEADLINE: 0,
    CardKind.DECISION: 0,
    CardKind.NAME: 1,
    CardKind.HOW: 2,
    CardKind.WHY: 2,
    CardKind.CONTRAST: 2,
    CardKind.WHAT: 2,
    CardKind.CLOZE: 3,
}
NEW = float("inf")
"""The first-seen time of a card no build has seen: after every time there is."""


def unit_of(card: Card) -> tuple[str, str]:
    """What moves as one block through the order: the PR, or the single glossary card."""
    return (card.entry.pr_key, card.key if card.kind == CardKind.GLOSSARY else "")


def study_order(cards: Sequence[Card], topic_order: Sequence[str],
                first_seen: Mapping[tuple[str, str], int] | None = None) -> list[Card]:
    """*cards* in study order (see the module docstring); deterministic for the same inputs."""
    return [cards[i] for i in study_positions(cards, topic_order, first_seen)]


def study_positions(cards: Sequence[Card], topic_order: Sequence[str],
                    first_seen: Mapping[tuple[str, str], int] | None = None) -> list[int]:
    """The positions in *cards* in study order, so what goes with each card (its note) can follow it."""
    seen = first_seen or {}
    return positions_in_order(cards, topic_order, [seen.get((card.entry.pr_key, card.key), NEW) for card in cards])


def positions_in_order(cards: Sequence[Card], topic_order: Sequence[str], first_seen: Sequence[float]) -> list[int]:
    """:func:`study_positions`, with each card's first-seen time given by position (:data:`NEW`: never seen)."""
    topic_rank = {topic: rank for rank, topic in enumerate(topic_order)}
    # Per unit, [generation, rank]: one lookup per card in each pass.  The generation is final only after the
    # last card of the unit, hence two passes.
    units: dict[tuple[str, str], list[float]] = {}
    unit_per_card = []
    for card, first in zip(cards, first_seen):
        unit = unit_of(card)
        unit_per_card.append(unit)
        known = units.get(unit)
        if known is None:
            units[unit] = [first, len(units)]
        elif first < known[0]:
            known[0] = first

    by_tags: dict[tuple[str, ...], int] = {}  # a PR's cards share their tags: rank them once
    other_kinds = len(KIND_RANK)
    keys = []
    for index, (card, unit) in enumerate(zip(cards, unit_per_card)):
        topic = by_tags.get(card.tags)
        if topic is None:
            topic = by_tags[card.tags] = min((topic_rank[t] for t in card_topics(card) if t in topic_rank),
                                             default=len(topic_rank))
        generation, rank = units[unit]
        keys.append((generation, topic, 0 if card.kind == CardKind.GLOSSARY else 1, rank,
                     KIND_RANK.get(card.kind, other_kinds), index))
    return sorted(range(len(cards)), key=keys.__getitem__)
