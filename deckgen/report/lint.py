"""Check seed files and list every problem, as ``deckgen lint`` prints them: ``file:line: level: message``.

Errors are the parse stage's findings (:func:`deckgen.source.parse.scan_corpus`):
the same ones ``deckgen build`` refuses, word for word.  Warnings are about
content deckgen cannot use well: a review with no reading verdict or no
design decision it can read, and acronyms the glossary does not explain.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..cache.results import entry_results
from ..curriculum.curriculum import load_data_files
from ..curriculum.glossary import Glossary, unknown_in
from ..extract.findings import review_findings
from ..source.parse import scan_corpus, sort_findings
from ..types import Entry, Level, SeedFinding


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


def lint_corpus(sources: Iterable[Path], glossary: Path | None = None) -> LintReport:
    """Check the seed files named by *sources*.

    Acronyms are checked against *glossary* (default: ``glossary.toml`` beside the
    seeds, as for ``build``); with no glossary that check is skipped.  Raises
    :class:`~deckgen.errors.DeckgenError` only for a source that names no seed file
    or a glossary that cannot be read.
    """
    sources = list(sources)
    scan = scan_corpus(sources)
    terms = load_data_files(sources, glossary=glossary)[1]
    findings = list(scan.findings)
    # The build's per-entry results, cache included: lint after a build segments nothing, and a
    # build after lint reuses what lint made.
    for review, _ in entry_results(scan.entries).results:
        findings.extend(review_findings(review))
    if terms is not None:
        findings.extend(acronym_findings(scan.entries, terms))
    return LintReport(scan.files, tuple(sort_findings(findings, scan.files)), glossary_checked=terms is not None)


def acronym_findings(entries: Iterable[Entry], glossary: Glossary) -> list[SeedFinding]:
    """A warning at the first use of each acronym *glossary* does not explain (once per corpus).

    The acronyms are the ones ``build`` lists in its warning (:attr:`deckgen.curriculum.curriculum.Curriculum.unknown_acronyms`),
    looked up line by line to say where each is first used.
    """
    seen: set[str] = set()
    findings: list[SeedFinding] = []
    for entry in entries:
        lines = [(entry.title_line, entry.title)] + [(entry.review_line + n, text)
                                                     for n, text in enumerate(entry.review.split("\n"))]
        for line, text in lines:
            for acronym in unknown_in(text, glossary):
                if acronym not in seen:
                    seen.add(acronym)
                    findings.append(SeedFinding(entry.path, line, Level.WARNING, f"unknown acronym {acronym}",
                                                glossary.unknown_advice("it")))
    return findings
