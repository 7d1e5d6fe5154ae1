"""How a build is made: :class:`BuildOptions`, and the defaults the CLI shows without loading the pipeline.

``deckgen --help`` and ``deckgen lint`` must start fast: the pipeline pulls in
genanki, and extraction pulls in jieba (0.4 s and more), so :mod:`deckgen.cli`
imports only this and loads each command's modules when the command runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_SOURCES = (Path("seeds"),)
DEFAULT_OUTPUT = Path("decks") / "deckgen.apkg"
DEFAULT_DECK_NAME = "PR 设计决策"
DEFAULT_GRACE = 3
"""Deck versions after the one that marked a card obsolete that still ship it (then it leaves the lock)."""
DEFAULT_ANKICONNECT_URL = "http://127.0.0.1:8765"
"""Where AnkiConnect listens unless its config says otherwise."""
ANKICONNECT_KEY_ENV = "DECKGEN_ANKICONNECT_KEY"


@dataclass(frozen=True)
class BuildOptions:
    """Everything about a build but its seeds and its output, passed along whole by the CLI, the pipeline and the plan.

    None of these changes which cards a PR gets; ``cache`` and ``jobs`` do not change a byte of the output.
    """

    deck_name: str = DEFAULT_DECK_NAME
    """The top-level Anki deck; each repository gets a subdeck."""
    timestamp: int | None = None
    """When this build's changes are dated: ``SOURCE_DATE_EPOCH``, else now, when None (see :func:`deckgen.pipeline.build_timestamp`)."""
    grace: int = DEFAULT_GRACE
    """Deck versions that still ship a card whose source was removed."""
    prune: bool = False
    """Drop cards already shipped as obsolete now."""
    taxonomy: Path | None = None
    """The topic taxonomy, laid over the built-in one unless it says ``use_builtin = false``; None: ``topics.toml``
    beside the seeds, else the built-in taxonomy alone."""
    glossary: Path | None = None
    """The glossary, laid over the built-in one unless it says ``use_builtin = false``; None: ``glossary.toml``
    beside the seeds, else the built-in glossary alone."""
    cache: bool = True
    """Reuse and keep each entry's cards in the per-user cache."""
    jobs: int = 1
    """Make the cards of entries the cache lacks in this many processes."""


@dataclass(frozen=True)
class PushOptions:
    """Where ``deckgen push`` sends a deck, and how; the deck itself is a build's (:class:`BuildOptions`)."""

    url: str = DEFAULT_ANKICONNECT_URL
    """AnkiConnect's address."""
    api_key: str | None = None
    """AnkiConnect's API key, when its config sets one."""
    dry_run: bool = False
    """Say what would change in the collection; write nothing and send nothing."""
    delete_obsolete: bool = False
    """Delete obsolete notes instead of tagging and suspending them."""
