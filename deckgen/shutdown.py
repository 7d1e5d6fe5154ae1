"""The end of a ``deckgen`` process: what a command made is left to the operating system, not freed piece by piece.

A build's last steps would free its millions of objects one at a time (the
notes of 10,000 PRs took 0.12 s), and the interpreter's teardown would then
free what is left, only for the process to end: the operating system takes all
of its memory back at once.  So the command line, and only the command line,
calls :func:`keep_until_exit` first; from then on :func:`keep` holds on to what
the pipeline is done with, and :func:`exit_now` ends the process without the
teardown once what was printed is flushed.  A program that imports deckgen
never calls it: each of its calls frees what it made, as usual.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import NoReturn

_kept: list[object] | None = None


def keep_until_exit() -> None:
    """From now on, :func:`keep` holds values until the process ends (the command line calls this)."""
    global _kept
    _kept = []


def keep(value: object) -> None:
    """Hold on to *value* until the process ends, if it ends soon (see :func:`keep_until_exit`); else nothing."""
    if _kept is not None:
        _kept.append(value)
        # Out of the cycle collector's sight too: made while it was paused, millions of objects sit in its
        # youngest generation, and its next pass would walk them all (0.2 s after a 10k-entry build).
        gc.freeze()


def exit_now(code: object) -> NoReturn:
    """End the process with *code* as :func:`sys.exit` takes it, without the interpreter's teardown."""
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
    status = code if isinstance(code, int) else (0 if code is None else 1)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (deckgen stats | head), a stream closed: nothing to add
            pass
    os._exit(status)
