"""How a long build tells its caller where it is: a small protocol the pipeline calls.

The library never prints; it calls a :class:`Progress` (by default one that does
nothing).  The command line passes :class:`deckgen.cli.ConsoleProgress`,
which draws Click's progress bar and, with ``-v``, per-stage timings.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class Progress(Protocol):
    def begin(self, total: int, label: str = "Making cards") -> None:
        """*total* things are about to be done: entries made into cards, or notes pushed to Anki (*label*)."""

    def advance(self, count: int = 1) -> None:
        """*count* more are done."""

    def end(self) -> None:
        """All are done."""

    def stage(self, name: str, seconds: float, detail: str) -> None:
        """A stage of the pipeline took *seconds* in all; *detail* says what it made."""


class NoProgress:
    """Reports nothing (the library's default)."""

    def begin(self, total: int, label: str = "Making cards") -> None:
        pass

    def advance(self, count: int = 1) -> None:
        pass

    def end(self) -> None:
        pass

    def stage(self, name: str, seconds: float, detail: str) -> None:
        pass


NO_PROGRESS: Progress = NoProgress()


class StageClock:
    """Adds up the time spent in each named stage (a stage may be entered once per entry)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def measure(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def report(self, progress: Progress, details: dict[str, str]) -> None:
        """Tell *progress* each stage's total, in the order the stages first ran."""
        for name, seconds in self.seconds.items():
            progress.stage(name, seconds, details.get(name, ""))
