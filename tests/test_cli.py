"""The command line: exit codes, messages and the summary line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from deckgen import __version__
from deckgen.cli import cli
from tests.conftest import read_apkg, write_seed


def test_build_writes_deck_and_summary(runner: CliRunner, fixtures: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "deck.apkg"
    result = runner.invoke(cli, ["build", str(fixtures / "good.txt"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    notes = read_apkg(out)
    assert result.stdout == f"Built 2 PRs, {result.stdout.split()[3]} cards from 1 seed file(s) → {out}\n"
    assert len(notes) >= 3


def test_default_sources_and_output(runner: CliRunner, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With no arguments, seeds/ in the current folder becomes decks/deckgen.apkg."""
    (tmp_path / "seeds").mkdir()
    write_seed(tmp_path / "seeds", "a.txt", (Path(__file__).parent / "fixtures" / "good.txt").read_text("utf-8"))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["build", "-q"])
    assert result.exit_code == 0, result.output
    assert result.output == ""
    assert (tmp_path / "decks" / "deckgen.apkg").is_file()


def test_bad_seed_exits_1_with_file_and_line(runner: CliRunner, tmp_path: Path) -> None:
    seed = write_seed(tmp_path, "bad.txt", "o/r\n\n标题\n")
    out = tmp_path / "deck.apkg"
    result = runner.invoke(cli, ["build", str(seed), "-o", str(out)])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {seed}:3: PR summary without a review paragraph (add a blank line and the review paragraph after it, or remove the summary)\n"
    assert not out.exists()


def test_missing_seed_path_exits_1(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["build", str(tmp_path / "nope.txt")])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {tmp_path / 'nope.txt'}: no such file or folder (check the path)\n"


def test_usage_error_exits_2(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["build", "--no-such-option"])
    assert result.exit_code == 2
    assert "Error: No such option '--no-such-option'" in result.stderr


def test_version_and_help(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["--version"]).output == f"deckgen, version {__version__}\n"
    for args in (["--help"], ["build", "--help"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0 and "Usage:" in result.output


def test_every_command_has_help_text() -> None:
    assert all(command.help for command in cli.commands.values())
