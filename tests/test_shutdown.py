"""The command line ends its process without freeing what it made; a library call frees it as usual."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from deckgen import BuildOptions, build_deck, shutdown
from deckgen.pipeline import PreparedBuild
from tests.conftest import FIXTURES


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """*args* run by this Python with its output buffered, as it is in a pipe (unless PYTHONUNBUFFERED is set)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("code", "status", "stderr"), [("3", 3, ""), ("None", 0, ""), ("'bye'", 1, "bye\n")])
def test_exit_now_flushes_what_was_printed_and_ends_with_the_code(code: str, status: int, stderr: str,
                                                                  tmp_path: Path) -> None:
    # Unfinished lines to pipes sit in Python's buffers: os._exit alone would lose them.
    done = run(["-c", "import sys; from deckgen.shutdown import exit_now\n"
                f"print('out', end=''); print('err', end='', file=sys.stderr); exit_now({code})"], tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (status, "out", "err" + stderr)


@pytest.mark.parametrize(("args", "status", "stderr"), [
    (["build", "no-such-seeds"], 1, "Error: "),
    (["build", "--jobs", "0"], 2, "Error: Invalid value for '-j' / '--jobs'"),
    (["--version"], 0, ""),
])
def test_the_command_keeps_its_exit_codes_and_messages(args: list[str], status: int, stderr: str,
                                                        tmp_path: Path) -> None:
    done = run(["-m", "deckgen", *args], tmp_path)
    assert done.returncode == status, done.stderr
    assert stderr in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_installed_command_is_the_one_with_the_fast_exit() -> None:
    (script,) = entry_points(group="console_scripts", name="deckgen")
    assert script.value == "deckgen.cli:main"


def prepared_builds() -> list[PreparedBuild]:
    gc.collect()
    return [o for o in gc.get_objects() if isinstance(o, PreparedBuild)]


def test_a_library_build_frees_what_it_made(tmp_path: Path) -> None:
    build_deck([FIXTURES / "good.txt"], tmp_path / "deck.apkg", options=BuildOptions(timestamp=1700000000))
    assert prepared_builds() == []


def test_after_keep_until_exit_the_build_is_kept_out_of_the_collectors_way(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutdown, "_kept", None)
    shutdown.keep_until_exit()
    try:
        build_deck([FIXTURES / "good.txt"], tmp_path / "deck.apkg", options=BuildOptions(timestamp=1700000000))
        (kept,) = shutdown._kept or []
        assert isinstance(kept, PreparedBuild) and kept.output == tmp_path / "deck.apkg"
        # Frozen: no pass of the cycle collector walks the kept build's objects (its cards among them).
        assert gc.get_freeze_count() > len(kept.corpus.cards) > 0
        assert prepared_builds() == []  # what the collector still tracks
    finally:
        gc.unfreeze()
