"""Progress: Click's bar on stderr for big builds on a terminal, nothing when piped or --quiet; -v times each stage."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from deckgen.cli import PROGRESS_MIN_ENTRIES, ConsoleProgress, cli
from tests.conftest import FIXTURES, write_seed

ENTRIES = PROGRESS_MIN_ENTRIES + 20


@pytest.fixture(scope="module", name="big_corpus")
def _big_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seed file with more entries than the bar's threshold (short reviews: quick to build; each has a built-in topic)."""
    folder = tmp_path_factory.mktemp("big")
    entries = "".join(f"为模块 {n} 引入前缀缓存。\n\n值得精读。采用分段缓存 S{n} 而非全局缓存 G{n}，以避免锁竞争 L{n}。\n\n"
                      for n in range(ENTRIES))
    write_seed(folder, "big.txt", f"o/r\n\n{entries}")
    return folder


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_only_for_many_entries_on_a_terminal() -> None:
    """The bar is drawn for a build over the threshold, not for a small one, not on a pipe."""
    for total, stream, drawn in ((ENTRIES, Terminal(), True), (10, Terminal(), False), (ENTRIES, io.StringIO(), False)):
        with ConsoleProgress(stream, bar=stream.isatty(), verbose=False) as progress:
            progress.begin(total)
            for _ in range(total):
                progress.advance()
            progress.end()
        assert ("Making cards" in stream.getvalue() and "100%" in stream.getvalue()) == drawn, (total, stream)
        assert drawn or stream.getvalue() == ""


def run_on_terminal(args: list[str]) -> tuple[int, str, str]:
    """Run the real CLI with stderr on a pseudo-terminal and stdout on a pipe."""
    controller, terminal = pty.openpty()
    try:
        with subprocess.Popen([sys.executable, "-m", "deckgen", *args], stdout=subprocess.PIPE,
                              stderr=terminal, env={**os.environ, "COLUMNS": "100"}) as process:
            os.close(terminal)
            seen = b""
            while True:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # EIO: the terminal closed when the process ended
                    break
                if not chunk:
                    break
                seen += chunk
            stdout = process.stdout.read().decode()  # type: ignore[union-attr]
        return process.returncode, stdout, seen.decode(errors="replace")
    finally:
        os.close(controller)


def test_terminal_build_shows_the_bar_and_quiet_hides_it(big_corpus: Path, tmp_path: Path) -> None:
    code, stdout, stderr = run_on_terminal(["build", str(big_corpus), "-o", str(tmp_path / "a.apkg")])
    assert code == 0 and stdout.startswith(f"Built {ENTRIES} PRs")
    assert "Making cards" in stderr and "100%" in stderr and "[####" in stderr
    code, stdout, stderr = run_on_terminal(["build", str(big_corpus), "-o", str(tmp_path / "b.apkg"), "--quiet"])
    assert (code, stdout, stderr) == (0, "", "")


def test_piped_build_prints_no_progress(runner: CliRunner, big_corpus: Path, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["build", str(big_corpus), "-o", str(tmp_path / "d.apkg")])
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout.startswith(f"Built {ENTRIES} PRs")


def test_verbose_prints_a_timing_per_stage(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "v.apkg"
    result = runner.invoke(cli, ["build", str(FIXTURES / "good.txt"), "-o", str(out), "-v"])
    assert result.exit_code == 0
    stages = re.findall(r"^(\w+) +(\d+\.\d{3}) s(?:  (.*))?$", result.stderr, re.M)
    # "cards": extraction and card making, or the per-entry results cache (deckgen.cache.results).
    assert [name for name, _, _ in stages] == ["read", "cards", "topics", "write"]
    assert dict((name, detail) for name, _, detail in stages)["read"] == "1 seed file(s), 2 entries"
    assert re.fullmatch(r"\d+ facts, \d+ notes; [0-2] of 2 entries from the cache",
                        dict((name, detail) for name, _, detail in stages)["cards"])
    assert dict((name, detail) for name, _, detail in stages)["write"] == str(out)
    quiet = runner.invoke(cli, ["build", str(FIXTURES / "good.txt"), "-o", str(out), "-v", "-q"])
    assert (quiet.exit_code, quiet.output) == (0, "")
