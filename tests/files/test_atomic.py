"""Atomic, signal-safe writes: an interrupted build leaves the previous deck and lock file as they were."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from deckgen import BuildOptions, build_deck
from deckgen.cli import cli
from deckgen.errors import OutputError
from deckgen.files.atomic import TEMP_PREFIX, atomic_files
from tests.conftest import FIXTURES, ROOT, SEEDS, unprivileged

# A build whose disk is slow.  Its write steps are fsyncing each staged file (the collection
# is zipped in a thread meanwhile, see test_package.py for its interruption).  At step N it announces
# itself and hangs, so the test can signal the process while it is provably in the middle
# of writing; with N = 0 it counts the steps and reports them when it exits.
SLOW_DISK = """
import atexit, os, sys, time
from pathlib import Path
from deckgen.files.atomic import TEMP_PREFIX
marker, pause_at = Path(sys.argv[1]), int(sys.argv[2])
steps = [0]
def step():
    steps[0] += 1
    if steps[0] == pause_at:
        marker.write_text("writing")
        time.sleep(120)
def slow(real, counts=lambda *args: True):
    def wrapper(*args, **kwargs):
        if counts(*args):
            step()
        return real(*args, **kwargs)
    return wrapper
staged = lambda fd: os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(TEMP_PREFIX)
os.fsync = slow(os.fsync, staged)
if not pause_at:
    atexit.register(lambda: marker.write_text(str(steps[0])))
from deckgen.cli import cli
cli(sys.argv[3:], prog_name="deckgen")
"""


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX))


def start_slow_build(out: Path, marker: Path, pause_at: int, env: dict[str, str] | None = None,
                     ignore: tuple[int, ...] = ()) -> subprocess.Popen[bytes]:
    """A real `deckgen build` of seeds/ plus one more seed file, paused in its pause_at-th file write (0: never)."""

    def child_signals() -> None:
        # Python turns SIGINT into KeyboardInterrupt only if it was not ignored (background shells ignore it),
        # and nohup ignores SIGHUP: the child starts as from a terminal, whatever started the tests.
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        for signum in ignore:
            signal.signal(signum, signal.SIG_IGN)

    args = ["build", str(SEEDS), str(FIXTURES / "good.txt"), "-o", str(out)]
    process = subprocess.Popen([sys.executable, "-c", SLOW_DISK, str(marker), str(pause_at), *args],
                               cwd=ROOT, env={**os.environ, "SOURCE_DATE_EPOCH": "1800000000", **(env or {})},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=child_signals)
    deadline = time.monotonic() + 60
    while pause_at and not marker.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"the build never reached write {pause_at}: {process.communicate()}")
        time.sleep(0.02)
    return process


def previous_build(out: Path) -> Path:
    """An output folder holding the previous build (deck, and lock file when the build writes one)."""
    result = CliRunner().invoke(cli, ["build", str(SEEDS), "-o", str(out)], env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(name="previous")
def _previous(tmp_path: Path) -> Path:
    return previous_build(tmp_path / "decks" / "deck.apkg")


@pytest.fixture(scope="module", name="control")
def _control(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, bytes], dict[str, bytes]]:
    """The slow build, not interrupted: its number of write steps, and the folder before and after."""
    out = previous_build(tmp_path_factory.mktemp("control") / "decks" / "deck.apkg")
    before = snapshot(out.parent)
    marker = out.parent.parent / "steps"
    process = start_slow_build(out, marker, pause_at=0)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    return int(marker.read_text()), before, snapshot(out.parent)


def test_the_interrupted_build_would_have_changed_every_file(control: tuple[int, dict[str, bytes],
                                                                            dict[str, bytes]]) -> None:
    """Control for the signal tests: the same build, not interrupted, replaces every previous file."""
    steps, before, after = control
    assert after.keys() == before.keys()
    assert all(after[name] != before[name] for name in before)
    assert steps >= len(before)  # at least one fsync per file written


@pytest.mark.parametrize(
    ("signum", "returncode", "stderr_end"),
    [(signal.SIGTERM, -signal.SIGTERM, b""), (signal.SIGHUP, -signal.SIGHUP, b""), (signal.SIGINT, 1, b"Aborted!\n")],
    ids=["SIGTERM", "SIGHUP", "SIGINT"],
)
def test_signal_during_write_keeps_previous_files(previous: Path, tmp_path: Path, control: tuple[int, object, object],
                                                  signum: int, returncode: int, stderr_end: bytes) -> None:
    """Signalled at any step of writing its files, a build leaves every previous file byte-identical and no temporary."""
    before = snapshot(previous.parent)
    for pause_at in range(1, control[0] + 1):
        marker = tmp_path / f"writing-{pause_at}"
        process = start_slow_build(previous, marker, pause_at)
        assert temporaries(previous.parent), "the build should be in the middle of writing"
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == returncode, stderr
        assert stderr.endswith(stderr_end) and b"Traceback" not in stderr
        assert snapshot(previous.parent) == before
        assert temporaries(previous.parent) == []


def test_ignored_hangup_is_still_ignored(previous: Path, tmp_path: Path) -> None:
    """Under nohup (SIGHUP ignored), a hangup during the write does not stop the build."""
    process = start_slow_build(previous, tmp_path / "marker", pause_at=1, ignore=(signal.SIGHUP,))
    process.send_signal(signal.SIGHUP)
    time.sleep(0.2)
    assert process.poll() is None
    process.terminate()
    process.communicate(timeout=60)


def test_sigkill_leaves_previous_files_and_the_next_build_cleans_up(previous: Path, tmp_path: Path,
                                                                    runner: CliRunner) -> None:
    """SIGKILL cannot be caught: the previous files survive, the temporary file is removed by the next build."""
    before = snapshot(previous.parent)
    process = start_slow_build(previous, tmp_path / "marker", pause_at=1)
    process.kill()
    process.communicate(timeout=60)
    assert {k: v for k, v in snapshot(previous.parent).items() if not k.startswith(TEMP_PREFIX)} == before
    leftover = temporaries(previous.parent)
    assert leftover and all(f"-{process.pid}-" in name for name in leftover)

    result = runner.invoke(cli, ["build", str(SEEDS), "-o", str(previous)])
    assert result.exit_code == 0, result.output
    assert temporaries(previous.parent) == []


def test_temporaries_of_running_processes_and_other_hosts_are_kept(tmp_path: Path) -> None:
    """Only temporary files of dead processes on this host are swept: a concurrent build is left alone."""
    mine = tmp_path / f"{TEMP_PREFIX}{_host()}-{os.getpid()}-0123456789abcdef.apkg"
    other_host = tmp_path / f"{TEMP_PREFIX}elsewhere-1-0123456789abcdef.apkg"
    for path in (mine, other_host):
        path.write_bytes(b"partial")
    with atomic_files() as staging:
        staging.write_bytes(tmp_path / "deck.apkg", b"new")
    assert mine.exists() and other_host.exists()


def _host() -> str:
    from deckgen.files.atomic import Staging

    return Staging()._host


def test_files_are_replaced_together_and_keep_their_mode(tmp_path: Path) -> None:
    deck, lock = tmp_path / "deck.apkg", tmp_path / "deck.lock.json"
    deck.write_bytes(b"old deck")
    deck.chmod(0o600)
    with atomic_files() as staging:
        staging.write_bytes(deck, b"new deck")
        staging.write_bytes(lock, b"new lock")
        assert deck.read_bytes() == b"old deck" and not lock.exists()
    assert (deck.read_bytes(), lock.read_bytes()) == (b"new deck", b"new lock")
    assert deck.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deck.apkg", "deck.lock.json"]


def test_an_error_while_staging_replaces_nothing(tmp_path: Path) -> None:
    deck, lock = tmp_path / "deck.apkg", tmp_path / "deck.lock.json"
    deck.write_bytes(b"old deck")
    with pytest.raises(RuntimeError), atomic_files() as staging:
        staging.write_bytes(deck, b"new deck")
        raise RuntimeError("the lock could not be computed")
    assert deck.read_bytes() == b"old deck" and not lock.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deck.apkg"]


def test_a_signal_whose_handler_returns_still_fails_the_write(tmp_path: Path) -> None:
    """A program embedding deckgen keeps its own SIGTERM handler; the interrupted write is an OutputError."""
    seen: list[int] = []
    old = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        with pytest.raises(OutputError, match=r"deck.apkg: interrupted by SIGTERM before the new version was complete"):
            with atomic_files() as staging:
                staging.write_bytes(tmp_path / "deck.apkg", b"new")
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(1)  # the signal arrives here; never reached in full
    finally:
        signal.signal(signal.SIGTERM, old)
    assert seen == [signal.SIGTERM]
    assert list(tmp_path.iterdir()) == []


def test_output_symlink_is_written_through(tmp_path: Path) -> None:
    """A deck path that is a symbolic link keeps the link; the file it names gets the new deck."""
    real = tmp_path / "shared" / "deck.apkg"
    real.parent.mkdir()
    real.write_bytes(b"old")
    link = tmp_path / "deck.apkg"
    link.symlink_to(real)
    with atomic_files() as staging:
        staging.write_bytes(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"


def test_genanki_leaves_no_temporary_sqlite_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build writes nothing to $TMPDIR (genanki's write_to_file leaves a SQLite file there on every call)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    out = tmp_path / "out" / "deck.apkg"
    build_deck([FIXTURES / "good.txt"], out, options=BuildOptions(timestamp=1))
    assert list(scratch.iterdir()) == []
    assert sorted(p.name for p in out.parent.iterdir()) == ["deck.apkg", "deck.lock.json"]


def test_read_only_output_folder_is_an_output_error(user_tmp: Path) -> None:
    folder = user_tmp / "ro"
    folder.mkdir()
    (folder / "deck.apkg").write_bytes(b"old")
    folder.chmod(0o555)
    with unprivileged(), pytest.raises(OutputError) as caught:
        with atomic_files() as staging:
            staging.write_bytes(folder / "deck.apkg", b"new")
    assert str(caught.value) == (f"{folder / 'deck.apkg'}: cannot write in {folder} (Permission denied); "
                                 "make the folder writable or choose another output path")
    assert (folder / "deck.apkg").read_bytes() == b"old"
