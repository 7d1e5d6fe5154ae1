"""Seed files → entries, and a precise error for every malformed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_seed
from deckgen.errors import SeedError
from deckgen.parse import find_seed_files, parse_corpus, parse_seed_file, parse_seed_text

GOOD = "o/r\n\n标题一\n\n评论一第一行\n评论一第二行\n\n标题二\n\n评论二\n"


def test_parses_entries_with_lines(fixtures: Path) -> None:
    """Each entry keeps its summary verbatim, its review, and the lines they start on."""
    entries = parse_seed_file(fixtures / "good.txt")
    assert [e.title for e in entries] == [
        "为调度器引入预分配工作区，避免 CUDA 图捕获期间分配显存。",
        "放宽 numpy 依赖约束，仅排除坏版本。",
    ]
    assert [(e.title_line, e.review_line) for e in entries] == [(3, 5), (8, 10)]
    assert entries[0].review.count("\n") == 1
    assert {e.repo for e in entries} == {"example-org/widget"}


def test_multiline_review_is_joined() -> None:
    """A review paragraph of several lines becomes one review with its line breaks."""
    entries = parse_seed_text(GOOD, Path("x.txt"))
    assert entries[0].review == "评论一第一行\n评论一第二行"
    assert entries[0].line_of(entries[0].review.index("第二行")) == 6


def test_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    """Windows editors' UTF-8 BOM and CRLF line endings read like plain UTF-8."""
    path = tmp_path / "win.txt"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode("utf-8"))
    entries = parse_seed_file(path)
    assert [e.title for e in entries] == ["标题一", "标题二"]
    assert entries[0].repo == "o/r"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", None, "empty file"),
        ("\n\n  \n", None, "empty file"),
        ("o/r\n\n", 1, "only the repository line"),
        ("not a repo\n\n标题\n\n评论\n", 1, "first line must name the GitHub repository"),
        ("o/r\n\n标题\n", 3, "PR summary without a review paragraph"),
        ("o/r\n\n标题\n\n评论\n\n孤立标题\n", 7, "PR summary without a review paragraph"),
        ("o/r\n\n标题\n评论紧跟标题\n评论第二行\n", 4, "expected a blank line after the PR summary"),
        ("o/r\n\n" + "这是一个值得精读的 PR，" * 20 + "\n\n评论\n", 3, "review paragraph without a PR summary line"),
    ],
    ids=["empty", "blank-only", "repo-only", "bad-repo", "title-no-review", "trailing-title",
         "no-blank-after-title", "review-without-title"],
)
def test_malformed_files_name_file_and_line(tmp_path: Path, text: str, line: int | None, message: str) -> None:
    """Every structural problem names the file, the line and what is wrong."""
    path = write_seed(tmp_path, "bad.txt", text)
    with pytest.raises(SeedError) as caught:
        parse_seed_file(path)
    assert caught.value.line == line
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"{path}:{line}: " if line else f"{path}: ")


def test_non_utf8_reports_byte_offset(tmp_path: Path) -> None:
    """GBK bytes are refused with the line and byte offset of the first bad byte."""
    path = tmp_path / "gbk.txt"
    path.write_bytes("o/r\n\n标题\n\n评论\n".encode("gbk"))
    with pytest.raises(SeedError, match=r"gbk.txt:3: not valid UTF-8 at byte offset 5"):
        parse_seed_file(path)


def test_nul_byte_is_a_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "bin.txt"
    path.write_bytes(b"o/r\n\n\x00\x01\x02")
    with pytest.raises(SeedError, match=r"bin.txt:3: NUL byte at byte offset 5"):
        parse_seed_file(path)


def test_folder_files_in_name_order(tmp_path: Path) -> None:
    """Folders are searched for *.txt (recursively), in name order; other files are ignored."""
    write_seed(tmp_path, "b.txt", GOOD)
    write_seed(tmp_path, "a.txt", GOOD.replace("标题一", "标题零"))
    write_seed(tmp_path, "topics.toml", "x = 1")
    (tmp_path / "sub").mkdir()
    write_seed(tmp_path / "sub", "c.txt", GOOD)
    assert [p.relative_to(tmp_path).as_posix() for p in find_seed_files([tmp_path])] == ["a.txt", "b.txt", "sub/c.txt"]
    assert parse_corpus([tmp_path])[0].title == "标题零"


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(SeedError, match="no such file or folder"):
        find_seed_files([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SeedError, match=r"no seed files \(\*\.txt\) in this folder"):
        find_seed_files([tmp_path / "empty"])


def test_pr_key_ignores_punctuation_but_not_words() -> None:
    """A punctuation fix in the summary keeps the PR's identity; other words make another PR."""
    base = parse_seed_text("o/r\n\n修复 A，提升 B。\n\n评论\n", Path("x.txt"))[0]
    punct = parse_seed_text("o/r\n\n修复 A, 提升 B\n\n评论\n", Path("y.txt"))[0]
    other = parse_seed_text("o/r\n\n修复 C，提升 B。\n\n评论\n", Path("x.txt"))[0]
    assert base.pr_key == punct.pr_key
    assert base.pr_key != other.pr_key
