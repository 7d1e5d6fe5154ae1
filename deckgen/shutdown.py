"""The end of a ``deckgen`` process: what a command made is left to the operating system, not freed piece by piece.

A build's last steps would free its millions of objects one at a time (the
notes of 10,000 PRs took 0.12 s), and the interpreter's teardown would then
free what is left, only for the process to end: the operating system takes all
of its memory back at once.  So the command line, and only the command line,
calls :func:`keep_until_exit` first; from then on :func:`keep` holds on to what
the pipeline is done with, and :func:`exit_now` ends the process without the
teardown once what was printed is flushed.  A program that imports deckgen
never calls it: each of its calls frees what it made, as usual.

The command line also ends promptly when it is told to stop: :func:`stop_on_signals`
turns SIGINT (Ctrl-C), SIGTERM and SIGHUP into :class:`Interrupted`, which unwinds
the build (its worker processes stopped, its temporary files removed, see
:mod:`deckgen.files.atomic`) and ends the process with the shell's status for the
signal, 128 + its number: 130 for Ctrl-C, 143 for SIGTERM.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import NoReturn

_kept: list[object] | None = None

STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
"""The signals that ask a process to stop and can be caught (SIGKILL cannot: see deckgen.cache.lifetime)."""
_CAN_MASK = hasattr(signal, "pthread_sigmask")


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
    status = code if isinstance(code, int) else (0 if code is None else 1)
    exit_now_with(status, code if isinstance(code, str) else "")


def exit_now_with(status: int, message: str = "") -> NoReturn:
    """End the process with *status*, *message* (if any) on stderr, without the interpreter's teardown."""
    if message:
        try:
            sys.stderr.write(message + "\n")
        except (OSError, ValueError):
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (deckgen stats | head), a stream closed: nothing to add
            pass
    os._exit(status)


class Interrupted(BaseException):
    """A stop signal (SIGINT, SIGTERM, SIGHUP) received by the command line, unwinding what it was doing.

    A BaseException, as KeyboardInterrupt is: no ``except Exception`` on the way up takes it for an error.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def status(self) -> int:
        """The exit status a shell gives a process ended by this signal: 128 + its number (130, 143, 129)."""
        return 128 + self.signum

    def __str__(self) -> str:
        name = "Ctrl-C" if self.signum == getattr(signal, "SIGINT", None) else signal.Signals(self.signum).name
        return f"Interrupted by {name}: no file was left half-written; run the command again to finish"


def _interrupt(signum: int, frame: FrameType | None) -> None:
    # Once is enough: a second Ctrl-C must not cut short the clean-up the first one started.
    for other in STOP_SIGNALS:
        signal.signal(other, signal.SIG_IGN)
    raise Interrupted(signum)


def stop_on_signals() -> None:
    """From now on SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` in the main thread (the command line calls this).

    A signal the process was started ignoring (``nohup``, a shell's background job) stays ignored.
    """
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _interrupt)


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold :data:`STOP_SIGNALS` back inside the block (main thread, POSIX); they are delivered when it ends.

    A process forked inside the block starts with them held too, so it can set its own handlers first.
    """
    if not _CAN_MASK or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
