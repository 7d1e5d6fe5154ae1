"""Which new card is which old card, when a card's key changed but the fact it tests did not.

A card's GUID comes from its PR key and card key (:func:`deckgen.deck.notes.card_guid`),
and a card key is made from the text of one side of the fact.  Rewording that
side, or correcting a PR summary, would therefore re-key the card, and Anki
would add it as a new note and orphan the old one with its reviews.  The lock
file remembers every shipped card, so a build can recognise such a card and
keep its old GUID.  This module holds the rules; :mod:`deckgen.deck.lock` applies them.

The rules are deliberately conservative: a wrong match carries one fact's
review history to another fact, a missed match only costs a duplicate the
user can delete (the old card is shipped as obsolete).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from ..types import norm

# Two cards of the same PR and kind test the same fact when their answers or
# questions are equal, or when question and answer are, on average, this similar.
SIMILAR = 0.7
# A PR whose summary changed is the same PR when at least half of the smaller
# side's cards match, and either the summaries are this similar or at least
# half of the larger side's cards match too.
SIMILAR_TITLE = 0.5

_TAG_RE = re.compile(r"<[^>]+>")
_CLOZE_RE = re.compile(r"\{\{c\d+::(.*?)\}\}", re.DOTALL)


@dataclass(frozen=True)
class Sides:
    """What a card asks and answers, as comparable text."""

    pr: str
    key: str
    kind: str
    question: str
    answer: str
    title: str

    @classmethod
    def of(cls, pr: str, key: str, kind: str, named: dict[str, str]) -> Sides:
        """Sides from a note's fields by name (``Question``/``Answer``, or the cloze ``Text``)."""
        if "Text" in named:
            text = named["Text"]
            question = _CLOZE_RE.sub("…", text)
            answer = "；".join(_CLOZE_RE.findall(text))
        else:
            question, answer = named.get("Question", ""), named.get("Answer", "")
        return cls(pr, key, kind, norm(_plain(question)), norm(_plain(answer)), norm(_plain(named.get("Summary", ""))))


def _plain(field: str) -> str:
    return html.unescape(_TAG_RE.sub("", field))


def _ratio(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b, autojunk=False).ratio() if a and b else 0.0


def score(new: Sides, old: Sides) -> float:
    """How surely *new* tests the fact *old* tested: 0 (not at all) to 3 (same key)."""
    if new.kind != old.kind:
        return 0.0
    if new.key == old.key:
        return 3.0
    if new.answer and new.answer == old.answer:
        return 2.0
    if new.question and new.question == old.question:
        return 2.0
    similar = (_ratio(new.question, old.question) + _ratio(new.answer, old.answer)) / 2
    return similar if similar >= SIMILAR else 0.0


def pair_cards(new: Sequence[Sides], old: Sequence[Sides]) -> list[tuple[int, int]]:
    """One-to-one (new index, old index) pairs of cards that test the same fact, best first.

    Greedy on the score; ties go to the earlier keys, so the result never
    depends on the order of the inputs beyond their keys.
    """
    scored = [(-s, new[i].key, old[j].key, i, j)
              for i in range(len(new)) for j in range(len(old)) if (s := score(new[i], old[j])) > 0]
    taken_new: set[int] = set()
    taken_old: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for _, _, _, i, j in sorted(scored):
        if i not in taken_new and j not in taken_old:
            taken_new.add(i)
            taken_old.add(j)
            pairs.append((i, j))
    return pairs


def pair_prs(new: dict[str, list[Sides]], old: dict[str, list[Sides]]) -> dict[str, str]:
    """New PR key → old PR key for PRs whose summary was reworded (same repository, mostly the same cards).

    Cards count as matching here only on exact signals (same kind and the same
    key, answer or question): they can be looked up, so the cost grows with the
    cards, not with pairs of new and removed PRs, and a corrected summary leaves
    the review, hence the keys, as they were.
    """
    def signals(cards: list[Sides]) -> set[tuple[str, str, str]]:
        return {s for c in cards for s in (("k", c.kind, c.key), ("a", c.kind, c.answer), ("q", c.kind, c.question))
                if s[2]}

    old_signals = {pr: signals(cards) for pr, cards in old.items()}
    # Only old PRs sharing at least one signal can match (no shared signal: matched == 0), so look
    # those up instead of trying every pair: linear in the cards, not in new PRs × removed PRs.
    having: dict[tuple[str, str, str], set[str]] = {}
    for old_pr, found in old_signals.items():
        for signal in found:
            having.setdefault(signal, set()).add(old_pr)
    scored = []
    for new_pr, new_cards in new.items():
        candidates = set().union(*(having.get(s, ()) for s in signals(new_cards)))
        for old_pr in sorted(candidates):
            old_cards = old[old_pr]
            if new_pr.split("#")[0] != old_pr.split("#")[0]:
                continue
            known = old_signals[old_pr]
            matched = sum(1 for c in new_cards if signals([c]) & known)
            smaller, larger = sorted((len(new_cards), len(old_cards)))
            if not matched or 2 * matched < smaller:
                continue
            title = _ratio(new_cards[0].title, old_cards[0].title)
            if title >= SIMILAR_TITLE or 2 * matched >= larger:
                scored.append((-matched, -title, new_pr, old_pr))
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    for _, _, new_pr, old_pr in sorted(scored):
        if new_pr not in mapping and old_pr not in taken:
            mapping[new_pr] = old_pr
            taken.add(old_pr)
    return mapping
