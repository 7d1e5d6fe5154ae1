"""The command line ends its process without freeing what it made; a library call frees it as usual."""

from __future__ import annotations

import gc
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from deckgen import BuildOptions, build_deck, shutdown
from deckgen.pipeline import PreparedBuild
from tests.conftest import FIXTURES, SEEDS


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


# -- stopping a build: Ctrl-C, SIGTERM and SIGKILL leave no worker process behind (issue #27) ----------------------

BIG_BUILD_ENTRIES = 3000
"""Enough new entries for --jobs 2 to start two workers (one per 1,000 at most, see deckgen.cache.results)."""
LEFTOVER_WAIT = 3.0
"""How long the workers of a stopped build may take to end."""
_CODE = re.compile(r"`([^`\n]+)`")


@pytest.fixture(scope="module", name="big_corpus")
def _big_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3,000 entries in 60 files, the reviews of seeds/ and the development fixtures with fresh identifiers each."""
    from deckgen.source.parse import parse_corpus

    real = parse_corpus([SEEDS, FIXTURES / "dev"])
    folder = tmp_path_factory.mktemp("big-corpus")
    for start in range(0, BIG_BUILD_ENTRIES, 50):
        blocks = ["synth/big"]
        for number in range(start, start + 50):
            entry = real[number % len(real)]
            # Fresh identifiers: no memo of the extractor makes a later entry free (the build must still be running).
            review = _CODE.sub(lambda m: f"`{m.group(1)}_{number}`", entry.review.replace("\n", ""))
            blocks += [f"{entry.title} (#{number + 1})", f"{review} `id_{number}`"]
        (folder / f"{start // 50:03d}.txt").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return folder


def _started(pid: int) -> str | None:
    """The start time of process *pid* (to tell it from a later process given the same pid), None once it has ended."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in "ZX" else fields[19]  # a zombie has ended; only its parent has not asked yet


def _children(pid: int) -> list[tuple[int, str]]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return [(c, started) for c in found if (started := _started(c)) is not None]


def _default_signals() -> None:
    # A build started from a terminal: whatever ran the tests (a background job ignores SIGINT) does not matter.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def stopped_cold_build(corpus: Path, out: Path, cache: Path, signum: int, *, group: bool = False,
                       ) -> tuple[subprocess.Popen[bytes], bytes, list[tuple[int, str]]]:
    """A cold ``deckgen build --jobs 2`` of *corpus*, sent *signum* (to its process group if *group*, as Ctrl-C is)
    once both its workers run; the finished process, its stderr and the workers it had."""
    for kind in ("results", "notes", "locks"):  # cold: nothing cached but jieba's dictionary
        shutil.rmtree(cache / kind, ignore_errors=True)
    env = {**os.environ, "DECKGEN_CACHE_DIR": str(cache)}
    # stderr to a file, not a pipe: workers left running would hold a pipe open, and reading it would wait for them.
    log = out.parent.parent / "stderr"
    with log.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "deckgen", "build", str(corpus), "-o", str(out), "-q",
                                    "--jobs", "2"], env=env, stdout=subprocess.DEVNULL, stderr=stderr,
                                   start_new_session=True, preexec_fn=_default_signals)
    deadline = time.monotonic() + 60
    workers: list[tuple[int, str]] = []
    while len(workers) < 2:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"the build never ran two workers: {log.read_text()}")
        time.sleep(0.05)
        workers = _children(process.pid)
    time.sleep(0.5)  # the workers are making entries, their results flowing back
    assert process.poll() is None, "the build ended before it could be stopped: give it more entries"
    if group:
        os.killpg(process.pid, signum)
    else:
        process.send_signal(signum)
    process.wait(timeout=60)
    return process, log.read_bytes(), workers


def leftovers(workers: list[tuple[int, str]]) -> list[int]:
    """The *workers* still running after up to :data:`LEFTOVER_WAIT` seconds (then killed, not to outlive the test)."""
    deadline = time.monotonic() + LEFTOVER_WAIT
    while (left := [pid for pid, started in workers if _started(pid) == started]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.fixture(name="warm_jieba")
def _warm_jieba(tmp_path: Path) -> Path:
    """A cache folder holding jieba's dictionary only, as after any earlier build."""
    cache = tmp_path / "cache"
    done = subprocess.run([sys.executable, "-m", "deckgen", "build", str(FIXTURES / "good.txt"), "-o",
                           str(tmp_path / "warm" / "deck.apkg"), "-q"], env={**os.environ, "DECKGEN_CACHE_DIR": str(cache)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return cache


linux_only = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds worker processes in Linux's /proc")


@linux_only
def test_a_killed_build_leaves_no_worker_running(big_corpus: Path, warm_jieba: Path, tmp_path: Path) -> None:
    """SIGKILL (the OOM killer, a CI time-out) runs no clean-up in the build: its workers must end by themselves."""
    process, _, workers = stopped_cold_build(big_corpus, tmp_path / "out" / "deck.apkg", warm_jieba, signal.SIGKILL)
    assert process.returncode == -signal.SIGKILL
    assert leftovers(workers) == []


@linux_only
@pytest.mark.parametrize(("signum", "group", "status", "name"), [
    (signal.SIGTERM, False, 143, "SIGTERM"),  # from a process manager or timeout(1): to the build alone
    (signal.SIGINT, True, 130, "Ctrl-C"),  # Ctrl-C: to the whole process group, workers included
], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_build_ends_cleanly_with_the_shells_status(big_corpus: Path, warm_jieba: Path, tmp_path: Path,
                                                            signum: int, group: bool, status: int, name: str) -> None:
    out = tmp_path / "out" / "deck.apkg"
    process, stderr, workers = stopped_cold_build(big_corpus, out, warm_jieba, signum, group=group)
    assert leftovers(workers) == []
    assert process.returncode == status, stderr
    assert stderr.decode() == f"Interrupted by {name}: no file was left half-written; run the command again to finish\n"
    assert not out.parent.exists() or list(out.parent.iterdir()) == []  # no deck, no lock file, no temporary file
