"""Where a taxonomy or glossary came from, for the messages that tell a person what to edit.  Pure.

A build's taxonomy (and glossary) is one of three things: deckgen's built-in data
alone, a repository's file laid over the built-in data, or a file on its own
(one that says ``use_builtin = false``, or any file loaded directly).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path


class Origin(Enum):
    FILE = "file"
    """One file, read on its own."""
    BUILTIN = "builtin"
    """deckgen's built-in data alone: no file beside the seeds."""
    LAYERED = "layered"
    """A repository's file over the built-in data: its entries replace those with the same id and add the others."""


def origin_label(path: Path, origin: Origin, what: str) -> str:
    """``the built-in taxonomy``, ``seeds/topics.toml (over the built-in taxonomy)`` or ``seeds/topics.toml``."""
    if origin is Origin.BUILTIN:
        return f"the built-in {what}"
    if origin is Origin.LAYERED:
        return f"{path} (over the built-in {what})"
    return str(path)


def where_to_add(path: Path, origin: Origin, file_name: str) -> str:
    """Where a person adds an entry: the repository's file, or a new one beside the seeds."""
    return f"a {file_name} beside the seeds" if origin is Origin.BUILTIN else str(path)
