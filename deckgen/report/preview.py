"""See the deck before importing it: ``deckgen preview`` in the terminal.

The cards are the ones ``build`` writes (:func:`deckgen.pipeline.build_corpus`),
one entry per Anki card (a cloze note with deletions c1 and c2 is two cards),
with the tags the deck gives them.  Filters narrow them by topic tag, kind,
text and count.  The HTML page is :mod:`deckgen.report.preview_html`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..deck.notes import card_tags
from ..options import DEFAULT_SOURCES
from ..pipeline import build_corpus
from ..text.markup import (
    DELETION_CLOSE,
    DELETION_OPEN,
    DELETION_SEP,
    deletions,
    strip_markdown,
)
from ..types import Card, CardKind

TOPIC_PREFIX = "topic::"


@dataclass(frozen=True)
class DeckCard:
    """One Anki card: its note's :class:`Card`, which deletion it asks (1 for Q/A) and the note's tags."""

    card: Card
    ordinal: int
    tags: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"cloze c{self.ordinal}" if self.card.kind == CardKind.CLOZE else self.card.kind.value

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(t[len(TOPIC_PREFIX):] for t in self.tags if t.startswith(TOPIC_PREFIX))

    def front(self, gap: str = "[…]") -> str:
        """The question as plain text: the cue, then the prompt (this card's deletion shown as *gap*)."""
        return f"【{self.card.cue}】{strip_markdown(self._prompt(gap))}"

    def back(self) -> str:
        """The answer as plain text (the deleted text for a cloze card)."""
        if self.card.kind != CardKind.CLOZE:
            return strip_markdown(self.card.answer)
        return "；".join(strip_markdown(body) for n, body in deletions(self.card.prompt) if n == self.ordinal)

    def search_text(self) -> str:
        """Everything a reader sees on the card, case-folded, for ``--grep``."""
        entry = self.card.entry
        return " ".join((self.front(), self.back(), strip_markdown(self.card.sentence), entry.title,
                         entry.source, " ".join(self.tags))).casefold()

    def _prompt(self, gap: str) -> str:
        if self.card.kind != CardKind.CLOZE:
            return self.card.prompt
        text = self.card.prompt
        for number, body in deletions(text):
            marked = f"{DELETION_OPEN}{number}{DELETION_SEP}{body}{DELETION_CLOSE}"
            text = text.replace(marked, gap if number == self.ordinal else body)
        return text


@dataclass(frozen=True)
class CardFilter:
    """Which cards to show; an empty filter shows all."""

    topics: tuple[str, ...] = ()
    """Topic ids: a card is shown when it has a ``topic::<id>`` tag (or a sub-topic ``topic::<id>::…``)."""
    kinds: tuple[str, ...] = ()
    grep: str = ""
    """Case-insensitive text anywhere on the card, its PR summary or its tags."""
    limit: int | None = None

    def accepts(self, deck_card: DeckCard) -> bool:
        if self.topics and not any(t == want or t.startswith(f"{want}::")
                                   for t in deck_card.topics for want in self.topics):
            return False
        if self.kinds and deck_card.card.kind.value not in self.kinds:
            return False
        return not self.grep or self.grep.casefold() in deck_card.search_text()


@dataclass(frozen=True)
class Preview:
    """The cards to show, in deck order, and how many the whole deck has."""

    cards: tuple[DeckCard, ...]
    total: int
    prs: int

    @property
    def summary(self) -> str:
        # Glossary cards hang on a per-repository pseudo-PR; they are cards, not PRs.
        shown = len({c.card.entry.pr_key for c in self.cards if c.card.kind != CardKind.GLOSSARY})
        return f"{len(self.cards)} of {self.total} cards, from {shown} of {self.prs} PRs"


def deck_cards(cards: Iterable[Card]) -> Iterator[DeckCard]:
    """Each note's Anki cards, in deck order."""
    for card in cards:
        tags = tuple(card_tags(card))
        ordinals = sorted({n for n, _ in deletions(card.prompt)}) if card.kind == CardKind.CLOZE else [1]
        for ordinal in ordinals:
            yield DeckCard(card, ordinal, tags)


def make_preview(sources: Sequence[Path] = DEFAULT_SOURCES, card_filter: CardFilter = CardFilter()) -> Preview:
    """The cards ``build`` would write from *sources* that pass *card_filter*; nothing is written."""
    corpus = build_corpus(sources)
    every = list(deck_cards(corpus.cards))
    shown = [c for c in every if card_filter.accepts(c)][: card_filter.limit]
    return Preview(tuple(shown), len(every), len(corpus.reviews))


Style = Callable[..., str]
"""Styles a piece of text for a terminal as ``click.style(text, fg=…, bold=…, dim=…)`` does."""


def plain(text: str, **how: object) -> str:
    """The :data:`Style` of a file or pipe: text as it is."""
    return text


def format_preview(preview: Preview, *, style: Style = plain) -> str:
    """The cards as text, grouped by PR, ending in a newline (empty when no card); *style* colours them for a terminal."""

    per_pr = Counter(c.card.entry.pr_key for c in preview.cards)
    lines: list[str] = []
    current = None
    for deck_card in preview.cards:
        card, entry = deck_card.card, deck_card.card.entry
        if entry.pr_key != current:
            current = entry.pr_key
            if lines:
                lines.append("")
            lines += [style(f"━━ {entry.title}", bold=True),
                      style(f"   {entry.repo} · {entry.path}:{entry.title_line} · {card.verdict.label} · "
                            f"{per_pr[current]} card(s)", dim=True)]
        tags = " ".join(t for t in deck_card.tags if t != "deckgen")
        lines += [f"  {style(f'[{deck_card.label}]', fg='cyan', bold=True)} {style(tags, dim=True)}",
                  f"    {style('Q', fg='yellow')} {deck_card.front(style('[…]', fg='yellow', bold=True))}",
                  f"    {style('A', fg='green')} {style(deck_card.back(), fg='green')}"]
    return "".join(f"{line}\n" for line in lines)
