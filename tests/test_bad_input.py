"""The bad-input matrix: every case through the CLI, with its exact exit code and message.

Errors exit 1 with ``Error: <file>[:<line>]: <problem> (<what to do>)`` and write no
deck; warnings exit 0, print ``Warning: …`` on stderr and still build; only the
summary goes to stdout.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from deckgen.cli import cli
from tests.conftest import FIXTURES, unprivileged, write_seed

FORMAT = ("a seed file is: the repository on line 1, then entries of one summary line, a blank line and the "
          "review paragraph, separated by blank lines")
GOOD = (FIXTURES / "good.txt").read_text(encoding="utf-8")
REVIEW = "这是一个值得精读的 PR。关键设计：采用 `torch.empty` 而非 `torch.zeros`，以减少初始化开销。"
SUMMARY_RE = r"Built \d+ PRs, \d+ cards from \d+ seed file\(s\) → {out}\n"


def build(runner: CliRunner, *sources: Path, out: Path) -> Result:
    return runner.invoke(cli, ["build", *map(str, sources), "-o", str(out)])


def assert_error(result: Result, message: str, out: Path) -> None:
    """Exit 1, exactly one ``Error:`` line on stderr, nothing on stdout, no deck and no lock file."""
    assert (result.exit_code, result.stderr, result.stdout) == (1, f"Error: {message}\n", "")
    assert not out.exists() and not out.with_suffix(".lock.json").exists()


def assert_built(result: Result, out: Path) -> None:
    assert result.exit_code == 0, result.output
    assert re.fullmatch(SUMMARY_RE.format(out=re.escape(str(out))), result.stdout), result.stdout
    assert out.is_file()


@pytest.fixture(name="out")
def _out(tmp_path: Path) -> Path:
    return tmp_path / "decks" / "deck.apkg"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "{p}: empty file ({format})"),
        ("o/r\n", "{p}:1: only the repository line, no entries ({format})"),
        ("see https://github.com/o/r\n\n标题\n\n" + REVIEW + "\n",
         "{p}:1: first line must name the GitHub repository as owner/name, found 'see https://github.com/o/r' ({format})"),
        ("o/r\n\n为调度器引入预分配工作区。\n",
         "{p}:3: PR summary without a review paragraph "
         "(add a blank line and the review paragraph after it, or remove the summary)"),
        ("o/r\n\n" + REVIEW * 4 + "\n",
         "{p}:3: review paragraph without a PR summary line before it "
         "(add the one-line summary, then a blank line, above the review)"),
        ("o/r\n\n为调度器引入预分配工作区。\n" + REVIEW + "\n" + REVIEW + "\n",
         "{p}:4: expected a blank line after the PR summary on the line before "
         "(a summary is one line, then a blank line, then the review paragraph)"),
        ("o/r\n\n标题甲\n\n" + REVIEW + "\n\n标题甲。\n\n" + REVIEW + "\n",
         "{p}:7: duplicate PR: the same summary as {p}:3 "
         "(remove one of the two entries, or reword the summary if they are different PRs)"),
    ],
    ids=["empty-file", "only-repository-line", "first-line-not-owner/name", "summary-without-review",
         "review-without-summary", "three-lines-without-blank", "duplicate-PR-in-one-file"],
)
def test_malformed_seed_file(runner: CliRunner, tmp_path: Path, out: Path, text: str, message: str) -> None:
    seed = write_seed(tmp_path, "bad.txt", text)
    assert_error(build(runner, seed, out=out), message.format(p=seed, format=FORMAT), out)


def test_bom_and_crlf_are_accepted(runner: CliRunner, tmp_path: Path, out: Path) -> None:
    seed = tmp_path / "windows.txt"
    seed.write_bytes(b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode("utf-8"))
    assert_built(build(runner, seed, out=out), out)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("o/r\n\n标题\n\n评论\n".encode("gbk"),
         "{p}:3: not valid UTF-8 at byte offset 5 (re-save the file as UTF-8: iconv -f GBK -t UTF-8 for Chinese "
         "text, -f LATIN1 for Western)"),
        ("o/r\n\nCache à la carte\n\n评论\n".encode("utf-8").replace("à".encode("utf-8"), b"\xe0"),
         "{p}:3: not valid UTF-8 at byte offset 11 (re-save the file as UTF-8: iconv -f GBK -t UTF-8 for Chinese "
         "text, -f LATIN1 for Western)"),
        (b"o/r\n\n\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
         "{p}:5: NUL byte at byte offset 13: this looks like a binary file "
         "(seed files are UTF-8 text: move this file out of the seed folder, or remove the NUL bytes)"),
        (b"o/r\n\n" + b"a" * 5_000_000 + b"\n\n" + REVIEW.encode("utf-8"),
         "{p}:3: line is 5,000,000 characters long (limit 100,000) (split the review into shorter lines or entries)"),
    ],
    ids=["GBK", "Latin-1", "binary-NUL", "5MB-single-line"],
)
def test_bytes_that_are_not_a_seed_file(runner: CliRunner, tmp_path: Path, out: Path, data: bytes,
                                        message: str) -> None:
    seed = tmp_path / "bad.txt"
    seed.write_bytes(data)
    assert_error(build(runner, seed, out=out), message.format(p=seed), out)


def test_seed_path_that_does_not_exist(runner: CliRunner, tmp_path: Path, out: Path) -> None:
    missing = tmp_path / "seeds" / "nope.txt"
    assert_error(build(runner, missing, out=out), f"{missing}: no such file or folder (check the path)", out)


def test_folder_with_no_seed_files(runner: CliRunner, tmp_path: Path, out: Path) -> None:
    folder = tmp_path / "seeds"
    folder.mkdir()
    (folder / "notes.md").write_text("not a seed", encoding="utf-8")
    assert_error(build(runner, folder, out=out),
                 f"{folder}: no seed files (*.txt) in this folder (add seed files or name them on the command line)", out)


def test_symlink_loop_named_on_the_command_line(runner: CliRunner, tmp_path: Path, out: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.symlink_to(b)
    b.symlink_to(a)
    assert_error(build(runner, a, out=out),
                 f"{a}: symbolic link loop (point the link at a seed file, or remove it)", out)


def test_symlink_loop_and_broken_link_inside_a_folder(runner: CliRunner, tmp_path: Path, out: Path) -> None:
    folder = tmp_path / "seeds"
    folder.mkdir()
    write_seed(folder, "a.txt", GOOD)
    (folder / "b.txt").symlink_to(folder / "b.txt")
    assert_error(build(runner, folder, out=out),
                 f"{folder / 'b.txt'}: symbolic link loop (point the link at a seed file, or remove it)", out)
    (folder / "b.txt").unlink()
    (folder / "b.txt").symlink_to(folder / "gone.txt")
    assert_error(build(runner, folder, out=out),
                 f"{folder / 'b.txt'}: broken symbolic link (point the link at a seed file, or remove it)", out)


def test_folder_symlinked_into_itself_is_not_followed(runner: CliRunner, tmp_path: Path, out: Path) -> None:
    """seeds/again → seeds: the walk does not go round the loop; the build reads seeds/a.txt once."""
    folder = tmp_path / "seeds"
    folder.mkdir()
    write_seed(folder, "a.txt", GOOD)
    (folder / "again").symlink_to(folder, target_is_directory=True)
    result = build(runner, folder, out=out)
    assert_built(result, out)
    assert "from 1 seed file(s)" in result.stdout


def test_unreadable_seed_file(runner: CliRunner, user_tmp: Path) -> None:
    seed = write_seed(user_tmp, "secret.txt", GOOD)
    seed.chmod(0o000)
    out = user_tmp / "deck.apkg"
    with unprivileged():
        result = build(runner, seed, out=out)
    assert_error(result, f"{seed}: permission denied (make the file readable)", out)


def test_output_path_that_is_a_folder(runner: CliRunner, fixtures: Path, tmp_path: Path) -> None:
    """A usage error (Click checks -o before anything runs): exit 2."""
    result = build(runner, fixtures / "good.txt", out=tmp_path)
    assert result.exit_code == 2
    assert result.stderr.endswith(f"Error: Invalid value for '-o' / '--output': File '{tmp_path}' is a directory.\n")


def test_output_in_a_read_only_folder(runner: CliRunner, user_tmp: Path) -> None:
    seed = write_seed(user_tmp, "good.txt", GOOD)
    folder = user_tmp / "decks"
    folder.mkdir()
    folder.chmod(0o555)
    out = folder / "deck.apkg"
    with unprivileged():
        result = build(runner, seed, out=out)
    assert_error(result, f"{out}: cannot write in {folder} (Permission denied); "
                         "make the folder writable or choose another output path", out)


def test_output_folder_that_cannot_be_created(runner: CliRunner, user_tmp: Path) -> None:
    seed = write_seed(user_tmp, "good.txt", GOOD)
    parent = user_tmp / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    out = parent / "decks" / "deck.apkg"
    with unprivileged():
        result = build(runner, seed, out=out)
    assert_error(result, f"{out.parent}: cannot create the output folder (Permission denied); "
                         "create it or choose another output path", out)


def test_duplicate_pr_across_files_is_a_warning(runner: CliRunner, tmp_path: Path, out: Path) -> None:
    """The later file is the corrected version of the PR: it wins, and the build says so."""
    old = write_seed(tmp_path, "a.txt", GOOD)
    new = write_seed(tmp_path, "b.txt", GOOD.replace("仅排除坏版本", "只排除坏版本"))
    result = build(runner, old, new, out=out)
    assert_built(result, out)
    assert (f"Warning: {old}:3: duplicate PR: {new}:3 has the same repository and summary; the later file's entry "
            "is used and this one is ignored (remove one of the two entries)\n") in result.stderr


def test_review_with_no_verdict_and_no_decision_still_builds(runner: CliRunner, tmp_path: Path, out: Path) -> None:
    seed = write_seed(tmp_path, "thin.txt", "o/r\n\n更新文档中的示例。\n\n顺手改了几处错别字。\n")
    result = build(runner, seed, out=out)
    assert_built(result, out)
    # The summary's change is still a card (every PR gets one): no "no card for this PR" warning, but the review's
    # lacks are named.
    assert result.stderr.splitlines() == [
        f"Warning: {seed}:5: no reading verdict (精读 / 快速浏览 / 不值得精读) found in the review "
        "(say whether the PR is worth reading: 值得精读, 快速浏览 or 不值得精读)",
        f"Warning: {seed}:5: no design decision found in the review "
        "(name decisions as 1) 2) … or **名称**: 说明, or with connectives such as 采用 X 而非 Y, X，以避免 Y)",
    ]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("topics.toml", '[[topic]]\nid = "cuda-graph"\nname = "CUDA 图\n',
         "{p}:3: invalid TOML: Illegal character '\\n' (column 15) (fix the TOML syntax; see https://toml.io)"),
        ("glossary.toml", '[[term]]\nterm = "KV cache"\nmeaning = = "键值缓存"\n',
         "{p}:3: invalid TOML: Invalid value (column 11) (fix the TOML syntax; see https://toml.io)"),
    ],
    ids=["taxonomy", "glossary"],
)
def test_data_file_with_a_syntax_error(runner: CliRunner, tmp_path: Path, out: Path, name: str, text: str,
                                       message: str) -> None:
    folder = tmp_path / "seeds"
    folder.mkdir()
    write_seed(folder, "a.txt", GOOD)
    data = write_seed(folder, name, text)
    assert_error(build(runner, folder, out=out), message.format(p=data), out)


def test_corrupt_lock_file(runner: CliRunner, fixtures: Path, out: Path) -> None:
    """A lock file with merge-conflict markers (it is meant to be committed) stops the build, naming its line."""
    assert_built(build(runner, fixtures / "good.txt", out=out), out)
    lock = out.with_suffix(".lock.json")
    before = out.read_bytes()
    lock.write_text("<<<<<<< HEAD\n" + lock.read_text(encoding="utf-8"), encoding="utf-8")
    result = build(runner, fixtures / "good.txt", out=out)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith(f"Error: {lock}:1: not valid JSON (")
    assert out.read_bytes() == before
    assert os.path.getsize(lock) > 0


def test_lock_file_with_a_note_twice(runner: CliRunner, fixtures: Path, out: Path) -> None:
    """A bad merge repeats a note line in the lock file: refused with the line, not a database error."""
    assert_built(build(runner, fixtures / "good.txt", out=out), out)
    lock = out.with_suffix(".lock.json")
    lines = lock.read_text(encoding="utf-8").split("\n")
    note_line = next(i for i, line in enumerate(lines) if line.startswith('{"changed"'))
    guid = json.loads(lines[note_line].rstrip(","))["guid"]
    lines.insert(note_line + 1, lines[note_line])
    lock.write_text("\n".join(lines), encoding="utf-8")
    result = build(runner, fixtures / "good.txt", out=out)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (f"Error: {lock}:{note_line + 2}: GUID {guid} appears on two notes; restore it from "
                             "version control; deleting it re-dates every note, so the next import overwrites "
                             "users' edits\n")


@pytest.mark.parametrize(
    ("value", "problem"),
    [("10000000000000000000000", "10000000000000000000000 is out of range (0 to 253402300799)"),
     ("Infinity", "cannot convert float infinity to integer")],
    ids=["past-year-9999", "Infinity"],
)
def test_lock_file_with_an_impossible_date(runner: CliRunner, fixtures: Path, out: Path, value: str,
                                           problem: str) -> None:
    """A hand-edited impossible date is refused by name, not an OverflowError inside the build (found by fuzzing)."""
    assert_built(build(runner, fixtures / "good.txt", out=out), out)
    lock = out.with_suffix(".lock.json")
    lock.write_text(re.sub(r'"changed": \d+', f'"changed": {value}', lock.read_text(encoding="utf-8"), count=1),
                    encoding="utf-8")
    result = build(runner, fixtures / "good.txt", out=out)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith(f"Error: {lock}: not a deckgen lock file (bad value: {problem}); "
                                    "restore it from version control")


def test_lock_file_that_is_not_utf8(runner: CliRunner, fixtures: Path, out: Path) -> None:
    assert_built(build(runner, fixtures / "good.txt", out=out), out)
    lock = out.with_suffix(".lock.json")
    data = lock.read_bytes()
    second_line = data.index(b"\n") + 1
    lock.write_bytes(data[:second_line] + b"\xff" + data[second_line:])
    result = build(runner, fixtures / "good.txt", out=out)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (f"Error: {lock}:2: not valid UTF-8 at byte offset {second_line}; restore the lock file "
                             "from version control\n")
