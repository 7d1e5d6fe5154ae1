"""deckgen: turn Chinese review summaries of pull requests into Anki decks of their key design decisions.

In Python::

    from pathlib import Path
    import deckgen

    report = deckgen.build_deck([Path("seeds")], Path("decks/deckgen.apkg"))
    print(report.entries, report.cards, report.output)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import DeckgenError, OutputError, SeedError
from .types import BuildReport, Card, Entry, Fact, Review

if TYPE_CHECKING:
    from .pipeline import build_corpus, build_deck

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


def __getattr__(name: str) -> Any:
    # The pipeline (and genanki with it) loads on first use, so `import deckgen.cli` stays light.
    if name in ("build_corpus", "build_deck"):
        from . import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'deckgen' has no attribute {name!r}")
