"""What a review lacks that a reader of its cards would miss: warnings for ``deckgen lint`` and the build."""

from __future__ import annotations

from ..types import Level, Review, SeedFinding, Verdict


def review_findings(review: Review) -> list[SeedFinding]:
    """Warnings about one review's content: no reading verdict, no design decision deckgen can read."""
    entry = review.entry
    findings: list[SeedFinding] = []
    if review.verdict == Verdict.UNKNOWN:
        findings.append(SeedFinding(entry.path, entry.review_line, Level.WARNING,
                                    "no reading verdict (精读 / 快速浏览 / 不值得精读) found in the review",
                                    "say whether the PR is worth reading: 值得精读, 快速浏览 or 不值得精读"))
    if not any(fact.unit for fact in review.facts):  # the summary's headline is no decision of the review
        findings.append(SeedFinding(
            entry.path, entry.review_line, Level.WARNING, "no design decision found in the review",
            "name decisions as 1) 2) … or **名称**: 说明, or with connectives such as 采用 X 而非 Y, X，以避免 Y"))
    return findings
