"""Errors the library raises; the CLI turns them into `Error: …` and exit code 1."""

from __future__ import annotations

from pathlib import Path


class DeckgenError(Exception):
    """Base class: a problem the user can fix, with a message that says how."""


class SeedError(DeckgenError):
    """A seed file is missing, unreadable or not in the seed format."""

    def __init__(self, path: Path | str, line: int | None, problem: str, fix: str = "") -> None:
        self.path = Path(path)
        self.line = line
        self.problem = problem
        self.fix = fix
        where = f"{self.path}:{line}" if line else f"{self.path}"
        message = f"{where}: {problem}"
        if fix:
            message += f" ({fix})"
        super().__init__(message)


class OutputError(DeckgenError):
    """The deck cannot be written where the user asked."""
