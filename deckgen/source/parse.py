"""Read seed files into :class:`Entry` values.  The only stage that reads input.

A seed file is UTF-8 text: line 1 names the GitHub repository (``owner/name``);
then come entries separated by blank lines, each a one-line PR summary, a blank
line, and a review paragraph of one or more lines.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import SeedError
from ..types import Entry, Level, SeedFinding

SEED_SUFFIX = ".txt"
REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?/[A-Za-z0-9._-]+$")
MAX_LINE_CHARS = 100_000
# A "summary" this long that names a reading verdict is a review paragraph
# whose summary line is missing.
_REVIEW_LIKE_CHARS = 150
_VERDICT_HINT_RE = re.compile(r"精读|快速浏览|略读|值得")

INVISIBLE_CHARACTERS = ("\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                        "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff")
"""Characters no editor shows, removed from a seed file as it is read: the soft hyphen, zero-width spaces, joiners
and non-joiners, the word joiner and invisible operators, a byte-order mark inside the text, and the bidirectional
controls.  Pasted from a web page or a chat, they glue or split words for the segmenter and on the cards, hide where
a sentence ends (sentences joined by U+200B look separate and are one), and a bidirectional control shows text in
another order than it is read.  Lines and their numbers are kept."""
_INVISIBLE_RE = re.compile(f"[{INVISIBLE_CHARACTERS}]+")  # str.translate took 0.3 s on 10,000 entries, a regex 0.02 s

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
            raise SeedError(source, None, _bad_link(source), _LINK_FIX)
        else:
            raise SeedError(source, None, "no such file or folder", "check the path")
    return files


_LINK_FIX = "point the link at a seed file, or remove it"


def _bad_link(path: Path) -> str:
    """What is wrong with a symbolic link that leads to no file: a loop, or nothing at its end."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
    return "broken symbolic link"


def _walk_txt(folder: Path) -> Iterator[Path]:
    # followlinks=False: a symlinked folder cannot send the walk round a loop.
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            if name.endswith(SEED_SUFFIX) and not name.startswith("."):
                yield Path(root) / name


@dataclass(frozen=True)
class SeedScan:
    """One seed file as the parse stage read it: the entries it could make out and every problem found.

    Scanning goes on after a problem wherever the rest of the file still makes
    sense, so ``deckgen lint`` can list them all; the entries are then the
    parser's best reading and must not be built into a deck.
    """

    path: Path
    entries: tuple[Entry, ...]
    findings: tuple[SeedFinding, ...]

    @property
    def errors(self) -> tuple[SeedFinding, ...]:
        return tuple(f for f in self.findings if f.level == Level.ERROR)


@dataclass(frozen=True)
class CorpusScan:
    """Every seed file named by the sources, scanned, plus the problems between files (duplicate PRs)."""

    files: tuple[Path, ...]
    scans: tuple[SeedScan, ...]
    findings: tuple[SeedFinding, ...]

    @property
    def entries(self) -> tuple[Entry, ...]:
        """Every entry, one per PR: when another seed file repeats a PR, the later file's entry wins."""
        entries = [entry for scan in self.scans for entry in scan.entries]
        last = {entry.pr_key: index for index, entry in enumerate(entries)}
        return tuple(entry for index, entry in enumerate(entries) if last[entry.pr_key] == index)


def raise_first_error(findings: Iterable[SeedFinding]) -> None:
    """Raise the first error among *findings* as a :class:`SeedError`; warnings pass."""
    for finding in findings:
        if finding.level == Level.ERROR:
            raise SeedError.from_finding(finding)


def parse_corpus(sources: Iterable[Path]) -> list[Entry]:
    """Every entry of every seed file named by *sources*, files in name order."""
    entries: list[Entry] = []
    for path in find_seed_files(sources):
        entries.extend(parse_seed_file(path))
    return entries


def scan_corpus(sources: Iterable[Path]) -> CorpusScan:
    """Scan every seed file named by *sources*; findings in file order, then line order.

    Raises :class:`SeedError` only for a source path that names no seed file.
    """
    files = tuple(find_seed_files(sources))
    scans = tuple(scan_seed_file(path) for path in files)
    entries = [entry for scan in scans for entry in scan.entries]
    findings = [f for scan in scans for f in scan.findings] + duplicate_prs(entries)
    return CorpusScan(files, scans, tuple(sort_findings(findings, files)))


def sort_findings(findings: Iterable[SeedFinding], files: Sequence[Path]) -> list[SeedFinding]:
    """*findings* in file order (as *files* lists them), then line order; a whole-file problem first."""
    order = {path: index for index, path in enumerate(files)}
    return sorted(findings, key=lambda f: (order.get(f.path, len(order)), f.line or 0))


def read_corpus(sources: Iterable[Path]) -> CorpusScan:
    """:func:`scan_corpus`, refusing any error with the first one as a :class:`SeedError`."""
    scan = scan_corpus(sources)
    raise_first_error(scan.findings)
    return scan


def duplicate_prs(entries: Iterable[Entry]) -> list[SeedFinding]:
    """A finding for every entry whose PR (repository and normalised summary) came earlier.

    Two entries of one PR would give notes with the same GUIDs in one deck.  In
    one file that is a mistake (an error); across files the later file is taken
    as the newer version of the PR (a warning, and :attr:`CorpusScan.entries`
    keeps only the later entry), so a corrected seed file can land beside the old one.
    """
    seen: dict[str, Entry] = {}
    findings: list[SeedFinding] = []
    for entry in entries:
        earlier = seen.get(entry.pr_key)
        seen[entry.pr_key] = entry
        if earlier is None:
            continue
        if earlier.path == entry.path:
            findings.append(SeedFinding(
                entry.path, entry.title_line, Level.ERROR,
                f"duplicate PR: the same summary as {earlier.path}:{earlier.title_line}",
                "remove one of the two entries, or reword the summary if they are different PRs"))
        else:
            findings.append(SeedFinding(
                earlier.path, earlier.title_line, Level.WARNING,
                f"duplicate PR: {entry.path}:{entry.title_line} has the same repository and summary; "
                "the later file's entry is used and this one is ignored",
                "remove one of the two entries"))
    return findings


def read_seed_text(path: Path) -> str:
    """The text of a seed file; a clear :class:`SeedError` for anything that is not UTF-8 text."""
    text, findings = _read_text(path)
    raise_first_error(findings)
    assert text is not None  # _read_text gives no text only with an error finding
    return text


def _read_text(path: Path) -> tuple[str | None, list[SeedFinding]]:
    """The text of a seed file, or ``None`` and the error that makes it unreadable as UTF-8 text."""
    def error(line: int | None, problem: str, fix: str = "") -> tuple[None, list[SeedFinding]]:
        return None, [SeedFinding(path, line, Level.ERROR, problem, fix)]

    try:
        data = path.read_bytes()
    except IsADirectoryError:
        return error(None, "is a folder, not a seed file")
    except PermissionError:
        return error(None, "permission denied", "make the file readable")
    except OSError as exc:
        if path.is_symlink():  # found in a folder walk: a loop, or a link to nothing
            return error(None, _bad_link(path), _LINK_FIX)
        return error(None, f"cannot read: {exc.strerror or exc}", "check the file and the disk")
    nul = data.find(b"\x00")
    if nul >= 0:
        return error(data.count(b"\n", 0, nul) + 1, f"NUL byte at byte offset {nul}: this looks like a binary file",
                     "seed files are UTF-8 text: move this file out of the seed folder, or remove the NUL bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return error(data.count(b"\n", 0, exc.start) + 1, f"not valid UTF-8 at byte offset {exc.start}",
                     "re-save the file as UTF-8: iconv -f GBK -t UTF-8 for Chinese text, -f LATIN1 for Western")
    return text.replace("\r\n", "\n").replace("\r", "\n"), []


def scan_seed_file(path: Path) -> SeedScan:
    """Read and scan one seed file; every problem becomes a finding, nothing is raised."""
    text, findings = _read_text(path)
    if text is None:
        return SeedScan(path, (), tuple(findings))
    return scan_seed_text(text, path)


def parse_seed_file(path: Path) -> list[Entry]:
    return parse_seed_text(read_seed_text(path), path)


def parse_seed_text(text: str, path: Path) -> list[Entry]:
    """Entries of one seed file's *text*; *path* is only used in messages and provenance.

    Raises :class:`SeedError` for the first error :func:`scan_seed_text` finds.
    """
    scan = scan_seed_text(text, path)
    raise_first_error(scan.findings)
    return list(scan.entries)


def scan_seed_text(text: str, path: Path) -> SeedScan:
    """The entries of one seed file's *text* and every format problem in it (the one place that judges the format).

    :data:`INVISIBLE_CHARACTERS` are left out first.
    """
    findings: list[SeedFinding] = []
    text = _INVISIBLE_RE.sub("", text)

    def error(line: int | None, problem: str, fix: str = "") -> None:
        findings.append(SeedFinding(path, line, Level.ERROR, problem, fix))

    lines = [line.rstrip() for line in text.split("\n")]
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS:
            error(number, f"line is {len(line):,} characters long (limit {MAX_LINE_CHARS:,})",
                  "split the review into shorter lines or entries")
    if not any(lines):
        error(None, "empty file", _FORMAT_HINT)
        return SeedScan(path, (), tuple(findings))
    repo = lines[0].strip()
    start = 1
    if not REPO_RE.match(repo):
        error(1, f"first line must name the GitHub repository as owner/name, found {repo[:60]!r}", _FORMAT_HINT)
        if not _meant_as_repo(repo):
            start = 0  # the repository line is missing: line 1 is already an entry's summary
    blocks = list(_blocks(lines, start=start))
    if not blocks:
        error(1, "only the repository line, no entries", _FORMAT_HINT)
    entries: list[Entry] = []
    index = 0
    while index < len(blocks):
        first_line, block = blocks[index]
        title = block[0].strip()
        if _looks_like_review(title):
            error(first_line, "review paragraph without a PR summary line before it",
                  "add the one-line summary, then a blank line, above the review")
            index += 1
            continue
        if len(block) > 1:
            error(first_line + 1, "expected a blank line after the PR summary on the line before",
                  "a summary is one line, then a blank line, then the review paragraph")
            # Read on as the writer most likely meant it: the summary, then its review.
            review_line, review_block, index = first_line + 1, block[1:], index + 1
        elif index + 1 >= len(blocks):
            error(first_line, "PR summary without a review paragraph",
                  "add a blank line and the review paragraph after it, or remove the summary")
            break
        else:
            (review_line, review_block), index = blocks[index + 1], index + 2
        entries.append(Entry(
            repo=repo,
            title=title,
            review="\n".join(part.strip() for part in review_block),
            path=path,
            title_line=first_line,
            review_line=review_line,
        ))
    return SeedScan(path, tuple(entries), tuple(sort_findings(findings, [path])))


def _meant_as_repo(line: str) -> bool:
    """A malformed repository line (``owner / name``, a URL) rather than prose that starts the entries."""
    return "/" in line and not re.search(r"[\u3400-\u9fff]", line)


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
