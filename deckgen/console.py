"""The command line's terminal output beyond one line: the build's progress bar and stage timings.

Part of the CLI layer (the library only calls :class:`deckgen.progress.Progress`).
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TextIO

import click

# "A few hundred entries": below this a build takes a few seconds at most and a bar would only flicker.
PROGRESS_MIN_ENTRIES = 200


class ConsoleProgress:
    """Click's progress bar on *stream* for builds of many entries; per-stage timings when *verbose*.

    Use it as a context manager, so that the bar is finished even when the build stops with an error.
    """

    def __init__(self, stream: TextIO, *, bar: bool, verbose: bool, min_entries: int = PROGRESS_MIN_ENTRIES) -> None:
        self.stream = stream
        self.want_bar = bar
        self.verbose = verbose
        self.min_entries = min_entries
        self._bar: click.progressbar | None = None  # type: ignore[valid-type]

    @classmethod
    def for_stderr(cls, *, quiet: bool, verbose: bool) -> ConsoleProgress:
        """The bar only when stderr is a terminal (nothing when piped) and never with *quiet*."""
        stream = sys.stderr  # read at call time: the CLI (and Click's test runner) may have swapped it
        return cls(stream, bar=not quiet and stream.isatty(), verbose=verbose and not quiet)

    def begin(self, total: int) -> None:
        if self.want_bar and total >= self.min_entries:
            self._bar = click.progressbar(length=total, label="Making cards", file=self.stream)
            self._bar.__enter__()

    def advance(self, count: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(count)

    def end(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None

    def stage(self, name: str, seconds: float, detail: str) -> None:
        if self.verbose:
            click.echo(f"{name:<10}{seconds:8.3f} s  {detail}".rstrip(), file=self.stream)

    def __enter__(self) -> ConsoleProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.end()
