"""deckgen: turn Chinese review summaries of pull requests into Anki decks of their key design decisions.

In Python::

    from pathlib import Path
    import deckgen

    report = deckgen.build_deck([Path("seeds")], Path("decks/deckgen.apkg"))
    print(report.entries, report.cards, report.output)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .curriculum.glossary import load_glossary
    from .curriculum.topics import load_taxonomy
    from .errors import DataFileError, DeckgenError, OutputError, SeedError, UnknownTopic
    from .options import BuildOptions, PushOptions
    from .pipeline import (
        build_corpus,
        build_deck,
        build_topic_deck,
        build_topic_decks,
        list_topics,
        push_deck,
    )
    from .types import BuildReport, Card, Entry, Fact, Review

__version__ = "0.1.0"

__all__ = [
    "BuildOptions",
    "BuildReport",
    "Card",
    "DataFileError",
    "DeckgenError",
    "Entry",
    "Fact",
    "OutputError",
    "PushOptions",
    "Review",
    "SeedError",
    "UnknownTopic",
    "__version__",
    "build_corpus",
    "build_deck",
    "build_topic_deck",
    "build_topic_decks",
    "list_topics",
    "load_glossary",
    "load_taxonomy",
    "push_deck",
]
_LAZY = {**dict.fromkeys(("DataFileError", "DeckgenError", "OutputError", "SeedError", "UnknownTopic"), "errors"),
         **dict.fromkeys(("BuildOptions", "PushOptions"), "options"),
         **dict.fromkeys(("BuildReport", "Card", "Entry", "Fact", "Review"), "types"),
         "build_corpus": "pipeline", "build_deck": "pipeline", "build_topic_deck": "pipeline",
         "build_topic_decks": "pipeline", "list_topics": "pipeline", "push_deck": "pipeline",
         "load_glossary": "curriculum.glossary",
         "load_taxonomy": "curriculum.topics"}


def __getattr__(name: str) -> Any:
    # Every name loads on first use: the pipeline (and genanki with it), and even the data types, so that
    # `deckgen --help` imports Click and the CLI's options only.
    if name in _LAZY:
        from importlib import import_module

        value = globals()[name] = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        return value
    raise AttributeError(f"module 'deckgen' has no attribute {name!r}")
