"""Errors the library raises; the CLI turns them into `Error: …` and exit code 1."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import SeedFinding


class DeckgenError(Exception):
    """Base class: a problem the user can fix, with a message that says how."""


class SeedError(DeckgenError):
    """A seed file is missing, unreadable or not in the seed format."""

    def __init__(self, path: Path | str, line: int | None, problem: str, fix: str = "") -> None:
        from .types import Level, SeedFinding  # on first error: `deckgen --help` loads no data types

        self.path = Path(path)
        self.line = line
        self.problem = problem
        self.fix = fix
        self.finding = SeedFinding(self.path, line, Level.ERROR, problem, fix)
        super().__init__(f"{self.finding.where}: {self.finding.text}")

    @classmethod
    def from_finding(cls, finding: SeedFinding) -> SeedError:
        return cls(finding.path, finding.line, finding.message, finding.fix)


class OutputError(DeckgenError):
    """The deck cannot be written where the user asked."""


class DataFileError(SeedError):
    """A data file kept beside the seeds (``topics.toml``, ``glossary.toml``) is malformed.

    A subclass of :class:`SeedError` because it is the same kind of problem —
    bad input with a file and line — and reads the same way.
    """


class UnknownTopic(DeckgenError):
    """A topic id asked for on the command line is not in the taxonomy (a usage error: exit 2)."""
