"""Topics and glossary applied to a corpus: topic tags on every card, glossary cards, warnings.  Pure.

The data files are found beside the seeds (``topics.toml``, ``glossary.toml``
in a seed folder or a seed file's folder) unless given explicitly, and laid over
the built-in ones (see :mod:`.builtin`); with no file, the built-in one alone is
used.  A missing explicit file is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DataFileError
from ..source.datafile import find_beside
from ..types import Card, Entry, Review
from .builtin import with_builtin_glossary, with_builtin_taxonomy
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
    """PRs that match no topic (they have the catch-all topic, if the taxonomy has one; none without a taxonomy)."""
    unknown_acronyms: tuple[tuple[str, int], ...] = ()
    """Acronyms in the seeds with no glossary entry, with the number of PRs using each."""

    @property
    def topic_order(self) -> tuple[str, ...]:
        return self.taxonomy.ids if self.taxonomy else ()

    def warnings(self) -> tuple[str, ...]:
        out = [self.taxonomy.unmatched_warning(e) for e in self.unmatched if self.taxonomy]
        if self.unknown_acronyms and self.glossary:
            listed = ", ".join(f"{a} ({n} PR{'s' if n > 1 else ''})" for a, n in self.unknown_acronyms)
            out.append(f"{len(self.unknown_acronyms)} acronym(s) in the seeds have no entry in {self.glossary.label}: "
                       f"{listed} ({self.glossary.unknown_advice('each', say_where=False)})")
        return tuple(out)


def load_data_files(sources: Iterable[Path], taxonomy: Path | None = None,
                    glossary: Path | None = None) -> tuple[Taxonomy, Glossary]:
    """The taxonomy and glossary for a build: the given files, else the ones beside the seeds, over the built-in ones."""
    sources = list(sources)
    tax_path = _explicit(taxonomy, "--taxonomy") or find_beside(sources, TAXONOMY_FILE)
    glo_path = _explicit(glossary, "--glossary") or find_beside(sources, GLOSSARY_FILE)
    return (with_builtin_taxonomy(load_taxonomy(tax_path) if tax_path else None),
            with_builtin_glossary(load_glossary(glo_path) if glo_path else None))


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
    unmatched = [r.entry for r, m in zip(reviews, matched) if taxonomy and taxonomy.is_unmatched(m.topics)]
    tagged = list(cards)
    entries = [r.entry for r in reviews]
    if glossary:
        tagged.extend(glossary_cards(entries, glossary, pr_topics, [m.terms for m in matched]))
    acronyms = count_prs(m.acronyms for m in matched) if glossary else ()
    return tuple(tagged), Curriculum(taxonomy, glossary, pr_topics, tuple(unmatched), acronyms)
