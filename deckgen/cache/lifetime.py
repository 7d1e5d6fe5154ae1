"""A worker process lives no longer than the build that started it, however the build ends.

A build killed by SIGKILL (the OOM killer, a CI time-out, a closed terminal) runs
no clean-up code, and its workers would go on: each blocked writing results to a
pipe nobody reads any more (its siblings hold the pipe's read end too, so the
write never fails), holding jieba's 120 MB, for good.  So each worker, as it
starts, arranges to end with its parent:

* **Linux**: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``, through ctypes: the kernel kills
  the worker the moment its parent (the thread that forked it: the build's main
  thread) ends, whatever the worker is blocked in.
* **Elsewhere**, or if prctl fails: a daemon thread waits on the parent's sentinel
  (:func:`multiprocessing.parent_process`, a pipe or process handle that becomes
  ready when the parent is gone) and ends the process with :func:`os._exit`, which
  works while the main thread is blocked in a write.

A parent that dies before the worker is set up is caught too: the worker then ends at once.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

_PR_SET_PDEATHSIG = 1
"""From <linux/prctl.h>."""
ORPHAN_STATUS = 70
"""The exit status of a worker that ends because its parent did (EX_SOFTWARE: nobody is left to read it)."""


def exit_with_parent(parent: int) -> None:
    """End this process when its parent, whose pid is *parent*, ends (call it first thing in a worker)."""
    if not _kill_me_with_parent():
        _watch_parent()
    if os.getppid() != parent:  # the parent died before any of this was in place
        os._exit(ORPHAN_STATUS)


def _kill_me_with_parent() -> bool:
    """Ask the Linux kernel to SIGKILL this process when its parent ends; whether it agreed."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here: only a worker needs it, and a build that starts none does not pay for it

    try:
        # The interpreter's own symbols, libc's among them (find_library would run ldconfig or a compiler).
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc or no prctl (another C library): watch instead
        return False


def _watch_parent() -> None:
    """A daemon thread that ends the process once the parent's sentinel says it is gone."""
    import multiprocessing.connection  # here, as ctypes above: a build that starts no worker never needs them

    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:  # not started by multiprocessing: nothing to watch
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(ORPHAN_STATUS)

    threading.Thread(target=watch, name="deckgen-parent-watch", daemon=True).start()
