"""The whole pipeline as one call: seed files in, an .apkg out."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .cards import make_cards
from .extract import extract_review
from .gate import anki_cards
from .lint import review_findings
from .package import DEFAULT_DECK_NAME, DeckPlan, write_apkg
from .parse import read_corpus
from .segment import get_segmenter
from .types import BuildReport, Card, Review

DEFAULT_SOURCES = (Path("seeds"),)
DEFAULT_OUTPUT = Path("decks") / "deckgen.apkg"
MIN_CARDS_PER_PR = 3


@dataclass(frozen=True)
class Corpus:
    """What the extract and card stages made of a set of seed files."""

    files: tuple[Path, ...]
    reviews: tuple[Review, ...]
    cards: tuple[Card, ...]
    warnings: tuple[str, ...]


def build_corpus(sources: Iterable[Path] = DEFAULT_SOURCES) -> Corpus:
    """Parse, extract and make cards for every entry named by *sources*; nothing is written.

    Bad input (any error ``deckgen lint`` reports) raises :class:`~deckgen.errors.SeedError`
    before any card is made.
    """
    scan = read_corpus(sources)
    seg = get_segmenter()
    reviews: list[Review] = []
    cards: list[Card] = []
    warnings: list[str] = []
    for entry in scan.entries:
        review = extract_review(entry, seg)
        made = make_cards(review, seg)
        reviews.append(review)
        cards.extend(made)
        where = f"{entry.path}:{entry.title_line}"
        count = sum(anki_cards(c) for c in made)
        if count < MIN_CARDS_PER_PR:
            warnings.append(f"{where}: only {count} card(s) for this PR; the review names few decisions deckgen can read")
        warnings.extend(f"{finding.where}: {finding.text}" for finding in review_findings(review))
    return Corpus(scan.files, tuple(reviews), tuple(cards), tuple(warnings))


def build_timestamp() -> int:
    """The build's clock: ``SOURCE_DATE_EPOCH`` when set (reproducible builds), else now."""
    value = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    return int(value) if value.isdigit() else int(time.time())


def build_deck(
    sources: Sequence[Path] = DEFAULT_SOURCES,
    output: Path = DEFAULT_OUTPUT,
    *,
    deck_name: str = DEFAULT_DECK_NAME,
    timestamp: int | None = None,
) -> BuildReport:
    """Build the deck for the seed files or folders in *sources* and write it to *output*.

    Raises :class:`~deckgen.errors.DeckgenError` with a message naming the file
    and line for bad input; nothing is written then.
    """
    corpus = build_corpus(sources)
    stamp = build_timestamp() if timestamp is None else timestamp
    written = write_apkg(DeckPlan(corpus.cards, deck_name=deck_name, timestamp=stamp), output)
    return BuildReport(
        output=written,
        entries=len(corpus.reviews),
        cards=sum(anki_cards(c) for c in corpus.cards),
        files=len(corpus.files),
        warnings=corpus.warnings,
    )
