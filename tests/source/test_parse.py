"""Seed files → entries, and a precise error for every malformed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from deckgen.errors import SeedError
from deckgen.source.parse import (
    INVISIBLE_CHARACTERS,
    find_seed_files,
    parse_corpus,
    parse_seed_file,
    parse_seed_text,
    read_corpus,
    scan_corpus,
    scan_seed_file,
    scan_seed_text,
)
from deckgen.types import Level
from tests.conftest import write_seed

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


def test_scan_collects_every_problem_and_reads_on(tmp_path: Path) -> None:
    """A scan lists each format problem with its line and keeps the entries it can still make out."""
    text = ("o/r\n\n"
            "标题一\n评论一紧跟标题\n\n"  # no blank line after the summary: read on as summary + review
            "标题二\n\n评论二\n\n"
            "孤立标题\n")
    scan = scan_seed_text(text, tmp_path / "s.txt")
    assert [(f.line, f.level, f.message) for f in scan.findings] == [
        (4, Level.ERROR, "expected a blank line after the PR summary on the line before"),
        (10, Level.ERROR, "PR summary without a review paragraph"),
    ]
    assert [(e.title, e.review, e.review_line) for e in scan.entries] == [("标题一", "评论一紧跟标题", 4), ("标题二", "评论二", 8)]


def test_missing_repository_line_reads_entries_from_line_1(tmp_path: Path) -> None:
    """Prose on line 1 means the repository line is missing: one error, and the entries still line up."""
    scan = scan_seed_text("标题\n\n评论\n", tmp_path / "s.txt")
    assert [f.line for f in scan.findings] == [1]
    assert [(e.title, e.title_line, e.review_line) for e in scan.entries] == [("标题", 1, 3)]


def test_first_error_of_a_scan_is_what_parse_raises(tmp_path: Path) -> None:
    """The raising path is built on the scan: the error raised is the scan's first error, word for word."""
    path = write_seed(tmp_path, "bad.txt", "owner / repo\n\n标题\n评论\n\n孤立\n")
    scan = scan_seed_file(path)
    assert len(scan.errors) == 3
    with pytest.raises(SeedError) as caught:
        parse_seed_file(path)
    assert caught.value.finding == scan.errors[0]
    assert str(caught.value) == f"{scan.errors[0].where}: {scan.errors[0].text}"


def test_unreadable_file_is_one_finding(tmp_path: Path) -> None:
    path = tmp_path / "gbk.txt"
    path.write_bytes("o/r\n\n标题\n\n评论\n".encode("gbk"))
    assert [str(f) for f in scan_seed_file(path).findings] == [
        f"{path}:3: error: not valid UTF-8 at byte offset 5 (re-save the file as UTF-8: iconv -f GBK -t UTF-8 for Chinese text, -f LATIN1 for Western)"]


def test_duplicate_pr_in_one_file_is_an_error(tmp_path: Path) -> None:
    """The same PR twice in one file (summary equal up to punctuation) is a mistake: an error at the second."""
    a = write_seed(tmp_path, "a.txt", "o/r\n\n修复 A，提升 B。\n\n评论\n\n修复 A, 提升 B\n\n另一段评论\n")
    scan = scan_corpus([tmp_path])
    assert [str(f) for f in scan.findings] == [
        f"{a}:7: error: duplicate PR: the same summary as {a}:3 (remove one of the two entries, "
        "or reword the summary if they are different PRs)"]
    with pytest.raises(SeedError, match="duplicate PR"):
        read_corpus([tmp_path])


def test_duplicate_pr_across_files_later_file_wins(tmp_path: Path) -> None:
    """A PR repeated in a later seed file (a corrected copy): one entry, the later one, and a warning."""
    a = write_seed(tmp_path, "a.txt", "o/r\n\n修复 A，提升 B。\n\n旧评论\n")
    b = write_seed(tmp_path, "b.txt", "o/r\n\n其他\n\n评论\n\n修复 A, 提升 B\n\n新评论\n")
    scan = read_corpus([tmp_path])
    assert [str(f) for f in scan.findings] == [
        f"{a}:3: warning: duplicate PR: {b}:7 has the same repository and summary; "
        "the later file's entry is used and this one is ignored (remove one of the two entries)"]
    assert [(e.path, e.review) for e in scan.entries] == [(b, "评论"), (b, "新评论")]


def test_invisible_characters_are_left_out_and_lines_kept() -> None:
    """Zero-width spaces, joiners, a stray BOM, soft hyphens and bidi controls, pasted in: gone, line numbers as they were."""
    hidden = "".join(INVISIBLE_CHARACTERS)
    text = f"o/r\n\n修复\u200b A\u2060\n\n采用\u200b缓存\u200d而非\u00ad重算\ufeff。\n第二行\u202e反转\u202c。\n\n{hidden}\n\n修复 B\n\n评论\n"
    first, second = parse_seed_text(text, Path("x.txt"))
    assert (first.title, first.review, first.review_line) == ("修复 A", "采用缓存而非重算。\n第二行反转。", 5)
    assert (second.title, second.title_line) == ("修复 B", 10)  # a line of invisible characters only is blank
    assert not any(c in e.title + e.review for e in (first, second) for c in hidden)
