"""Topics and glossary applied to a corpus: topic tags on every card, glossary cards, warnings.  Pure.

The data files are found beside the seeds (``topics.toml``, ``glossary.toml``
in a seed folder or a seed file's folder) unless given explicitly; a missing
default file switches its feature off, a missing explicit file is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DataFileError
from ..source.datafile import find_beside
from ..types import Card, Entry, Review
from .glossary import (
    GLOSSARY_FILE,
    Glossary,
    count_prs,
    entry_text,
    glossary_cards,
    load_glossary,
    terms_used,
    unknown_in,
)
from .topics import (
    TAXONOMY_FILE,
    TOPIC_TAG_PREFIX,
    Taxonomy,
    load_taxonomy,
    match_topics,
)


@dataclass(frozen=True)
class Curriculum:
    """What the taxonomy and glossary made of a corpus."""

    taxonomy: Taxonomy | None = None
    glossary: Glossary | None = None
    pr_topics: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Topic ids of every PR, by :attr:`Entry.pr_key`."""
    unmatched: tuple[Entry, ...] = ()
    """PRs that match no topic (empty when there is no taxonomy)."""
    unknown_acronyms: tuple[tuple[str, int], ...] = ()
    """Acronyms in the seeds with no glossary entry, with the number of PRs using each."""

    @property
    def topic_order(self) -> tuple[str, ...]:
        return self.taxonomy.ids if self.taxonomy else ()

    def warnings(self) -> tuple[str, ...]:
        out = [f"{e.path}:{e.title_line}: this PR matches no topic in {self.taxonomy.path}; add a keyword for it there"
               for e in self.unmatched if self.taxonomy]
        if self.unknown_acronyms and self.glossary:
            listed = ", ".join(f"{a} ({n} PR{'s' if n > 1 else ''})" for a, n in self.unknown_acronyms)
            out.append(f"{len(self.unknown_acronyms)} acronym(s) in the seeds have no entry in {self.glossary.path}: "
                       f"{listed} (add a [[term]] for each, or list it in ignore = [...])")
        return tuple(out)


def load_data_files(sources: Iterable[Path], taxonomy: Path | None = None,
                    glossary: Path | None = None) -> tuple[Taxonomy | None, Glossary | None]:
    """The taxonomy and glossary for a build: the given files, else the ones beside the seeds, else none."""
    sources = list(sources)
    tax_path = _explicit(taxonomy, "--taxonomy") or find_beside(sources, TAXONOMY_FILE)
    glo_path = _explicit(glossary, "--glossary") or find_beside(sources, GLOSSARY_FILE)
    return (load_taxonomy(tax_path) if tax_path else None, load_glossary(glo_path) if glo_path else None)


def _explicit(path: Path | None, option: str) -> Path | None:
    if path is not None and not Path(path).is_file():
        raise DataFileError(path, None, "no such file", f"check the path given to {option}")
    return path


@dataclass(frozen=True)
class EntryCurriculum:
    """What the taxonomy and glossary make of one entry (see :func:`entry_curriculum`)."""

    topics: tuple[str, ...] = ()
    """Ids of its topics, in taxonomy order."""
    terms: tuple[str, ...] = ()
    """Keys of the glossary terms it uses, in glossary order."""
    acronyms: tuple[str, ...] = ()
    """Acronyms it uses that have no glossary entry, in order of first use."""


def entry_curriculum(review: Review, taxonomy: Taxonomy | None, glossary: Glossary | None) -> EntryCurriculum:
    """The topics, glossary terms and unknown acronyms of one entry: depends on nothing else."""
    if glossary is None:
        return EntryCurriculum(match_topics(review, taxonomy) if taxonomy else ())
    return EntryCurriculum(match_topics(review, taxonomy) if taxonomy else (),
                           tuple(t.key for t in terms_used(review.entry, glossary)),
                           tuple(unknown_in(entry_text(review.entry), glossary)))


def tag_cards(cards: Sequence[Card], topics: Sequence[str]) -> list[Card]:
    """*cards* with ``topic::<id>`` tags for *topics* added."""
    extra = tuple(TOPIC_TAG_PREFIX + t for t in topics)
    return [c.with_tags(extra) for c in cards] if extra else list(cards)


def apply_curriculum(reviews: Sequence[Review], cards: Sequence[Card], taxonomy: Taxonomy | None,
                     glossary: Glossary | None, matched: Sequence[EntryCurriculum]
                     ) -> tuple[tuple[Card, ...], Curriculum]:
    """Append the glossary cards to *cards* (already tagged with their topics) and sum up the curriculum.

    *matched* is :func:`entry_curriculum` of each review.
    """
    pr_topics = {r.entry.pr_key: m.topics for r, m in zip(reviews, matched)} if taxonomy else {}
    unmatched = [r.entry for r, m in zip(reviews, matched) if taxonomy and not m.topics]
    tagged = list(cards)
    entries = [r.entry for r in reviews]
    if glossary:
        tagged.extend(glossary_cards(entries, glossary, pr_topics, [m.terms for m in matched]))
    acronyms = count_prs(m.acronyms for m in matched) if glossary else ()
    return tuple(tagged), Curriculum(taxonomy, glossary, pr_topics, tuple(unmatched), acronyms)
