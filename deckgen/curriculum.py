"""Topics and glossary applied to a corpus: topic tags on every card, glossary cards, warnings.  Pure.

The data files are found beside the seeds (``topics.toml``, ``glossary.toml``
in a seed folder or a seed file's folder) unless given explicitly; a missing
default file switches its feature off, a missing explicit file is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from .datafile import find_beside
from .errors import DataFileError
from .glossary import GLOSSARY_FILE, Glossary, glossary_cards, load_glossary, unknown_acronyms
from .topics import TAXONOMY_FILE, TOPIC_TAG_PREFIX, Taxonomy, load_taxonomy, match_topics
from .types import Card, Entry, Review


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


def apply_curriculum(reviews: Sequence[Review], cards: Sequence[Card], taxonomy: Taxonomy | None,
                     glossary: Glossary | None) -> tuple[tuple[Card, ...], Curriculum]:
    """Tag every card with its PR's topics and append the glossary cards; the cards keep their order."""
    pr_topics: dict[str, tuple[str, ...]] = {}
    unmatched: list[Entry] = []
    if taxonomy:
        for review in reviews:
            topics = match_topics(review, taxonomy)
            pr_topics[review.entry.pr_key] = topics
            if not topics:
                unmatched.append(review.entry)
    topic_tags = {pr: tuple(TOPIC_TAG_PREFIX + t for t in topics) for pr, topics in pr_topics.items()}
    tagged = [replace(c, tags=(*c.tags, *extra)) if (extra := topic_tags.get(c.entry.pr_key)) else c for c in cards]
    entries = [r.entry for r in reviews]
    if glossary:
        tagged.extend(glossary_cards(entries, glossary, pr_topics))
    acronyms = unknown_acronyms(entries, glossary) if glossary else ()
    return tuple(tagged), Curriculum(taxonomy, glossary, pr_topics, tuple(unmatched), acronyms)
