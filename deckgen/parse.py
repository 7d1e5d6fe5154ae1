"""Read seed files into :class:`Entry` values.  The only stage that reads input.

A seed file is UTF-8 text: line 1 names the GitHub repository (``owner/name``);
then come entries separated by blank lines, each a one-line PR summary, a blank
line, and a review paragraph of one or more lines.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from .errors import SeedError
from .types import Entry

SEED_SUFFIX = ".txt"
REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?/[A-Za-z0-9._-]+$")
MAX_LINE_CHARS = 100_000
# A "summary" this long that names a reading verdict is a review paragraph
# whose summary line is missing.
_REVIEW_LIKE_CHARS = 150
_VERDICT_HINT_RE = re.compile(r"精读|快速浏览|略读|值得")

_FORMAT_HINT = "a seed file is: the repository on line 1, then entries of one summary line, a blank line and the review paragraph, separated by blank lines"


def find_seed_files(sources: Iterable[Path]) -> list[Path]:
    """Seed files named by *sources* (files, or folders searched for ``*.txt``), in name order."""
    files: list[Path] = []
    for source in sources:
        source = Path(source)
        if source.is_dir():
            found = sorted(_walk_txt(source), key=lambda p: p.relative_to(source).as_posix())
            if not found:
                raise SeedError(source, None, f"no seed files (*{SEED_SUFFIX}) in this folder",
                                "add seed files or name them on the command line")
            files.extend(found)
        elif source.exists():
            files.append(source)
        elif source.is_symlink():
            raise SeedError(source, None, "broken symbolic link", "point it at a seed file")
        else:
            raise SeedError(source, None, "no such file or folder", "check the path")
    return files


def _walk_txt(folder: Path) -> Iterator[Path]:
    # followlinks=False: a symlinked folder cannot send the walk round a loop.
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            if name.endswith(SEED_SUFFIX) and not name.startswith("."):
                yield Path(root) / name


def parse_corpus(sources: Iterable[Path]) -> list[Entry]:
    """Every entry of every seed file named by *sources*, files in name order."""
    entries: list[Entry] = []
    for path in find_seed_files(sources):
        entries.extend(parse_seed_file(path))
    return entries


def read_seed_text(path: Path) -> str:
    """The text of a seed file; a clear :class:`SeedError` for anything that is not UTF-8 text."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise SeedError(path, None, "is a folder, not a seed file") from None
    except PermissionError:
        raise SeedError(path, None, "permission denied", "make the file readable") from None
    except OSError as exc:
        raise SeedError(path, None, f"cannot read: {exc.strerror or exc}") from None
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise SeedError(path, line, f"NUL byte at byte offset {nul}: this looks like a binary file",
                        "seed files are UTF-8 text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SeedError(path, line, f"not valid UTF-8 at byte offset {exc.start}",
                        "re-save the file as UTF-8, e.g. iconv -f GBK -t UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_seed_file(path: Path) -> list[Entry]:
    return parse_seed_text(read_seed_text(path), path)


def parse_seed_text(text: str, path: Path) -> list[Entry]:
    """Entries of one seed file's *text*; *path* is only used in messages and provenance."""
    lines = [line.rstrip() for line in text.split("\n")]
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS:
            raise SeedError(path, number, f"line is {len(line):,} characters long (limit {MAX_LINE_CHARS:,})",
                            "split the review into shorter lines or entries")
    if not any(lines):
        raise SeedError(path, None, "empty file", _FORMAT_HINT)
    repo = lines[0].strip()
    if not REPO_RE.match(repo):
        raise SeedError(path, 1, f"first line must name the GitHub repository as owner/name, found {repo[:60]!r}",
                        _FORMAT_HINT)
    blocks = list(_blocks(lines, start=1))
    if not blocks:
        raise SeedError(path, 1, "only the repository line, no entries", _FORMAT_HINT)
    entries: list[Entry] = []
    index = 0
    while index < len(blocks):
        first_line, title_block = blocks[index]
        title = title_block[0].strip()
        if len(title_block) > 1 or _looks_like_review(title):
            if _looks_like_review(title):
                raise SeedError(path, first_line, "review paragraph without a PR summary line before it",
                                "add the one-line summary, then a blank line, above the review")
            raise SeedError(path, first_line + 1,
                            "expected a blank line after the PR summary on the line before",
                            "a summary is one line, then a blank line, then the review paragraph")
        if index + 1 >= len(blocks):
            raise SeedError(path, first_line, "PR summary without a review paragraph",
                            "add a blank line and the review paragraph after it, or remove the summary")
        review_line, review_block = blocks[index + 1]
        entries.append(Entry(
            repo=repo,
            title=title,
            review="\n".join(part.strip() for part in review_block),
            path=path,
            title_line=first_line,
            review_line=review_line,
        ))
        index += 2
    return entries


def _blocks(lines: list[str], start: int) -> Iterator[tuple[int, list[str]]]:
    """Runs of non-blank lines after line *start*, with their 1-based first line number."""
    block: list[str] = []
    first = 0
    for number, line in enumerate(lines[start:], start=start + 1):
        if line.strip():
            if not block:
                first = number
            block.append(line)
        elif block:
            yield first, block
            block = []
    if block:
        yield first, block


def _looks_like_review(line: str) -> bool:
    return len(line) > _REVIEW_LIKE_CHARS and bool(_VERDICT_HINT_RE.search(line))
