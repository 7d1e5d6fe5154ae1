"""A worker process ends with the process that started it, even when that one is killed (deckgen.cache.lifetime)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deckgen.cache import lifetime

# A parent that starts one worker (as the build's pool does, by fork) and waits; the worker arranges to end with
# it, says so, then sleeps as a worker blocked on a full pipe would.  Each way is tried with the other one off.
PARENT = """
import multiprocessing, os, sys, time
from deckgen.cache import lifetime
if sys.argv[1] == "watch":
    lifetime._kill_me_with_parent = lambda: False
else:
    lifetime._watch_parent = lambda: None
def worker(parent):
    lifetime.exit_with_parent(parent)
    print(os.getpid(), flush=True)
    time.sleep(120)
if __name__ == "__main__":
    multiprocessing.get_context("fork").Process(target=worker, args=(os.getpid(),)).start()
    time.sleep(120)
"""


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in "ZX"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork, and /proc to see the worker")
@pytest.mark.parametrize("way", ["prctl", "watch"])
def test_a_worker_ends_when_its_parent_is_killed(way: str) -> None:
    """prctl(PR_SET_PDEATHSIG) on Linux; elsewhere the parent's sentinel, watched by a thread."""
    with subprocess.Popen([sys.executable, "-c", PARENT, way], stdout=subprocess.PIPE, text=True) as parent:
        try:
            worker = int(parent.stdout.readline())  # type: ignore[union-attr]
            assert running(worker)
        finally:
            parent.kill()
    deadline = time.monotonic() + 3
    while running(worker) and time.monotonic() < deadline:
        time.sleep(0.02)
    if running(worker):
        os.kill(worker, signal.SIGKILL)
        pytest.fail(f"worker {worker} outlived its parent by 3 s ({way})")


def test_a_worker_whose_parent_is_already_gone_ends_at_once() -> None:
    """The parent can die between starting the worker and the worker's set-up: it is caught then too."""
    done = subprocess.run([sys.executable, "-c", "from deckgen.cache.lifetime import exit_with_parent\n"
                           "exit_with_parent(-1)\nprint('still here')"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (lifetime.ORPHAN_STATUS, "")
