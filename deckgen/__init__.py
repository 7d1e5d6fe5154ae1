"""deckgen: turn Chinese review summaries of pull requests into Anki decks of their key design decisions.

In Python::

    from pathlib import Path
    import deckgen

    report = deckgen.build_deck([Path("seeds")], Path("decks/deckgen.apkg"))
    print(report.entries, report.cards, report.output)
"""

from __future__ import annotations

from .errors import DeckgenError, OutputError, SeedError
from .pipeline import build_corpus, build_deck
from .types import BuildReport, Card, Entry, Fact, Review

__version__ = "0.1.0"

__all__ = [
    "BuildReport",
    "Card",
    "DeckgenError",
    "Entry",
    "Fact",
    "OutputError",
    "Review",
    "SeedError",
    "__version__",
    "build_corpus",
    "build_deck",
]
