"""The topic taxonomy: data in ``topics.toml``, read here (parse stage), matched purely.

A topic is an ASCII slug (used in ``topic::<id>`` tags and file names), a
Chinese and an English display name, and match rules over a PR's summary line,
review paragraph and code identifiers::

    [[topic]]
    id = "cuda-graph"
    zh = "CUDA 图"
    en = "CUDA Graphs"
    keywords = ["CUDA Graph", "CUDA 图"]   # summary or review
    summary_keywords = []                  # only in the one-line summary
    identifiers = ["*cudagraph*"]          # shell patterns over `code` identifiers
    exclude = []                           # any of these in the text vetoes the topic
    min_hits = 1                           # keyword hits the review alone needs

A PR belongs to a topic when no exclusion occurs and a keyword occurs in its
summary, or an identifier matches, or the review has ``min_hits`` keyword hits.
Nothing here knows about particular PRs: the shipped taxonomy is data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..source.datafile import DataFile, read_toml, required_string, string_list, tables
from ..text.matching import KeywordIndex, Keywords, fold, folded_identifier_matches
from ..types import Card, Review

TAXONOMY_FILE = "topics.toml"
TOPIC_TAG_PREFIX = "topic::"
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_KEYS = frozenset({"id", "zh", "en", "keywords", "summary_keywords", "identifiers", "exclude", "min_hits"})


@dataclass(frozen=True)
class Topic:
    id: str
    zh: str
    en: str
    keywords: Keywords
    summary_keywords: Keywords = Keywords(())
    identifiers: tuple[str, ...] = ()
    exclude: Keywords = Keywords(())
    min_hits: int = 1
    line: int | None = None

    @property
    def tag(self) -> str:
        return TOPIC_TAG_PREFIX + self.id

    @property
    def title(self) -> str:
        """Both display names, for tables and deck names: ``CUDA 图 · CUDA Graphs``."""
        return self.zh if fold(self.zh) == fold(self.en) else f"{self.zh} · {self.en}"


@dataclass(frozen=True)
class Taxonomy:
    path: Path
    topics: tuple[Topic, ...]

    def get(self, topic_id: str) -> Topic | None:
        return next((t for t in self.topics if t.id == topic_id), None)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.topics)

    @cached_property
    def _index(self) -> KeywordIndex:
        """Every topic's exclusions, keywords and summary keywords (sets 3i, 3i+1, 3i+2 for topic i), searched together."""
        return KeywordIndex([k for t in self.topics for k in (t.exclude, t.keywords, t.summary_keywords)])

    @cached_property
    def _sets(self) -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
        """The index's exclusion sets, keyword sets, and keyword and summary keyword sets (the non-empty ones)."""
        exclude, keywords, summary = (frozenset(3 * i + first for i, t in enumerate(self.topics)
                                                if (t.exclude, t.keywords, t.summary_keywords)[first])
                                      for first in range(3))
        return exclude, keywords, keywords | summary


def card_topics(card: Card) -> tuple[str, ...]:
    """The topic ids *card* is tagged with (``topic::<id>``), in tag order."""
    return tuple(t[len(TOPIC_TAG_PREFIX):] for t in card.tags if t.startswith(TOPIC_TAG_PREFIX))


def match_topics(review: Review, taxonomy: Taxonomy) -> tuple[str, ...]:
    """Ids of the topics *review* belongs to, in taxonomy order."""
    summary, text = fold(review.entry.title), fold(review.entry.review)
    index = taxonomy._index
    exclude, keywords, summary_sets = taxonomy._sets
    in_summary, in_text = index.parts_in(summary), index.parts_in(text)
    # A PR belongs to a topic when no exclusion occurs in its summary or review, and a keyword or summary
    # keyword occurs in the summary, or an identifier matches, or the review has min_hits keyword hits.
    vetoed = index.hits(f"{summary}\n{text}", in_summary | in_text, exclude)
    in_title = index.hits(summary, in_summary, summary_sets)
    in_review = index.hits(text, in_text, keywords)
    identifiers = tuple(map(fold, review.identifiers))
    joined = "\n".join(identifiers)
    return tuple(t.id for i, t in enumerate(taxonomy.topics)
                 if not vetoed.get(3 * i)
                 and (in_title.get(3 * i + 1) or in_title.get(3 * i + 2)
                      or (t.identifiers and folded_identifier_matches(t.identifiers, identifiers, joined))
                      or in_review.get(3 * i + 1, 0) >= t.min_hits))


def load_taxonomy(path: Path) -> Taxonomy:
    """Read ``topics.toml``; a :class:`~deckgen.errors.DataFileError` naming file and line for anything wrong."""
    where = read_toml(path)
    where.only_keys(where.data, frozenset({"topic"}), None, "the file", "a taxonomy is a list of [[topic]] tables")
    topics: list[Topic] = []
    seen: dict[str, int | None] = {}
    for table, line in tables(where, "topic"):
        topic = _topic(table, line, where)
        where.unique(seen, topic.id, line, f"topic id {topic.id!r}", "give each topic its own id")
        topics.append(topic)
    if not topics:
        raise where.error(None, "no [[topic]] tables", "add at least one topic")
    return Taxonomy(Path(path), tuple(topics))


def _topic(table: Mapping[str, Any], line: int | None, where: DataFile) -> Topic:
    where.only_keys(table, _KEYS, line, "[[topic]]", f"known keys: {', '.join(sorted(_KEYS))}")
    topic_id = required_string(table, "id", where, line, "[[topic]]")
    if not SLUG_RE.match(topic_id):
        raise where.error(line, f"topic id {topic_id!r} is not an ASCII slug",
                          "use lower-case letters, digits and single hyphens, e.g. cuda-graph")
    what = f"topic {topic_id!r}"
    min_hits = table.get("min_hits", 1)
    if not isinstance(min_hits, int) or isinstance(min_hits, bool) or min_hits < 1:
        raise where.error(line, f"{what}: min_hits must be a whole number ≥ 1", "for example min_hits = 2")
    topic = Topic(
        id=topic_id,
        zh=required_string(table, "zh", where, line, what),
        en=required_string(table, "en", where, line, what),
        keywords=Keywords(string_list(table, "keywords", where, line)),
        summary_keywords=Keywords(string_list(table, "summary_keywords", where, line)),
        identifiers=string_list(table, "identifiers", where, line),
        exclude=Keywords(string_list(table, "exclude", where, line)),
        min_hits=min_hits,
        line=line,
    )
    if not (topic.keywords or topic.summary_keywords or topic.identifiers):
        raise where.error(line, f"{what} has no match rules", "add keywords, summary_keywords or identifiers")
    return topic
