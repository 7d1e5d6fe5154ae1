"""Check seed files and list every problem, as ``deckgen lint`` prints them: ``file:line: level: message``.

Errors are the parse stage's findings (:func:`deckgen.parse.scan_corpus`):
the same ones ``deckgen build`` refuses, word for word.  Warnings are about
content deckgen cannot use well: a review with no reading verdict or no
design decision it can read, and acronyms the glossary does not explain.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .extract import extract_review
from .parse import scan_corpus, sort_findings
from .segment import get_segmenter
from .types import Entry, Level, Review, SeedFinding, Verdict

# An acronym: a word of ASCII letters (and digits) with at least two capitals, most of its
# letters capitals (DCP, MoE, ROCm, LoRA, MRV2), standing alone — not part of an identifier,
# path or CamelCase name (FlashAttention is a name, not an acronym).
_ACRONYM_RE = re.compile(r"(?<![\w./:`-])([A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*)(?![\w/:`-]|\.\w)", re.ASCII)
_CODE_RE = re.compile(r"`[^`\n]*`")
# Acronyms every reader of a code review knows; a glossary card for them would teach nothing.
COMMON_ACRONYMS = frozenset({
    "PR", "API", "CPU", "GPU", "CI", "ID", "IO", "OS", "URL", "HTTP", "HTTPS", "JSON", "YAML", "UI",
    "CLI", "SDK", "OK", "TODO", "README", "FAQ",
})


@dataclass(frozen=True)
class LintReport:
    """Every finding for a set of seed files, in file order, then line order."""

    files: tuple[Path, ...]
    findings: tuple[SeedFinding, ...]
    glossary_checked: bool = True
    """False when no glossary was available, so acronyms were not checked."""

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.level == Level.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.level == Level.WARNING)

    @property
    def summary(self) -> str:
        text = f"{self.errors} error(s), {self.warnings} warning(s) in {len(self.files)} seed file(s)"
        return text if self.glossary_checked else text + "; acronyms not checked (no glossary)"


def lint_corpus(sources: Iterable[Path], known_terms: Collection[str] | None = None) -> LintReport:
    """Check the seed files named by *sources*.

    *known_terms* are the glossary's terms; acronyms outside them (and outside
    :data:`COMMON_ACRONYMS`) are reported.  ``None`` skips that check.
    Raises :class:`~deckgen.errors.SeedError` only for a source that names no seed file.
    """
    scan = scan_corpus(sources)
    seg = get_segmenter()
    findings = list(scan.findings)
    for entry in scan.entries:
        findings.extend(review_findings(extract_review(entry, seg)))
    if known_terms is not None:
        findings.extend(acronym_findings(scan.entries, known_terms))
    return LintReport(scan.files, tuple(sort_findings(findings, scan.files)), glossary_checked=known_terms is not None)


def review_findings(review: Review) -> list[SeedFinding]:
    """Warnings about one review's content: no reading verdict, no design decision deckgen can read."""
    entry = review.entry
    findings: list[SeedFinding] = []
    if review.verdict == Verdict.UNKNOWN:
        findings.append(SeedFinding(entry.path, entry.review_line, Level.WARNING,
                                    "no reading verdict (精读 / 快速浏览 / 不值得精读) found in the review"))
    if not review.facts:
        findings.append(SeedFinding(
            entry.path, entry.review_line, Level.WARNING, "no design decision found in the review",
            "name decisions as 1) 2) … or **名称**: 说明, or with connectives such as 采用 X 而非 Y, X，以避免 Y"))
    return findings


def find_acronyms(text: str) -> Iterator[tuple[int, str]]:
    """(offset, acronym) for every acronym in *text* outside backtick code."""
    masked = _CODE_RE.sub(lambda m: " " * len(m.group(0)), text)
    for match in _ACRONYM_RE.finditer(masked):
        word = match.group(1)
        letters = [c for c in word if c.isalpha()]
        if sum(c.isupper() for c in letters) * 2 > len(letters):
            yield match.start(1), word


def acronym_findings(entries: Iterable[Entry], known_terms: Collection[str]) -> list[SeedFinding]:
    """A warning at the first use of each acronym the glossary does not explain (once per corpus)."""
    known = {term.casefold() for term in known_terms} | {term.casefold() for term in COMMON_ACRONYMS}
    seen: set[str] = set()
    findings: list[SeedFinding] = []
    for entry in entries:
        places = [(entry.title_line, word) for _, word in find_acronyms(entry.title)]
        places += [(entry.line_of(offset), word) for offset, word in find_acronyms(entry.review)]
        for line, word in places:
            if word.casefold() in known or word.casefold() in seen:
                continue
            seen.add(word.casefold())
            findings.append(SeedFinding(entry.path, line, Level.WARNING, f"unknown acronym {word}",
                                        "add it to the glossary so learners meet its meaning first"))
    return findings
