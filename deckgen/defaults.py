"""Default paths and names, in a module of their own so the CLI can show them without loading the pipeline.

``deckgen --help`` and ``deckgen lint`` must start fast: the pipeline pulls in
genanki, and extraction pulls in jieba (0.4 s and more), so :mod:`deckgen.cli`
imports only this and loads each command's modules when the command runs.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_SOURCES = (Path("seeds"),)
DEFAULT_OUTPUT = Path("decks") / "deckgen.apkg"
DEFAULT_DECK_NAME = "PR 设计决策"
DEFAULT_GRACE = 3
"""Deck versions after the one that marked a card obsolete that still ship it (then it leaves the lock)."""
