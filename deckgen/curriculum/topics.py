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
A PR that belongs to none gets the catch-all topic, when the taxonomy has one::

    [catch_all]                            # the topic of PRs that match no other
    id = "other"
    zh = "其他"
    en = "Other"

The built-in taxonomy (see :mod:`.builtin`) is a file of this format too; a
repository's file is laid over it by :func:`layer_taxonomy` unless it says
``use_builtin = false``.  Nothing here knows about particular PRs: every
taxonomy is data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..errors import DataFileError
from ..source.datafile import DataFile, read_toml, required_string, string_list, tables
from ..text.matching import KeywordIndex, Keywords, fold, folded_identifier_matches
from ..types import Card, Entry, Review
from .origin import Origin, origin_label, where_to_add

TAXONOMY_FILE = "topics.toml"
TOPIC_TAG_PREFIX = "topic::"
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_KEYS = frozenset({"id", "zh", "en", "keywords", "summary_keywords", "identifiers", "exclude", "min_hits"})
_FILE_KEYS = frozenset({"topic", "catch_all", "use_builtin"})
_CATCH_ALL_KEYS = frozenset({"id", "zh", "en"})


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
    """The file a person edits: the repository's, or the built-in one (see :attr:`origin`)."""
    topics: tuple[Topic, ...]
    """In study order; the catch-all, if any, last."""
    catch_all: str | None = None
    """The id of the topic a PR that matches no other gets (a topic without match rules), if any."""
    use_builtin: bool = True
    """As the file says: False when it stands alone instead of being laid over the built-in taxonomy."""
    origin: Origin = Origin.FILE

    @property
    def label(self) -> str:
        return origin_label(self.path, self.origin, "taxonomy")

    def is_unmatched(self, topic_ids: tuple[str, ...]) -> bool:
        """Whether a PR with these topics matched none of the taxonomy's rules (it has the catch-all, or nothing)."""
        return not topic_ids or topic_ids == (self.catch_all,)

    def unmatched_warning(self, entry: Entry) -> str:
        """The build's warning about a PR that matches no topic."""
        there = f"to {where_to_add(self.path, self.origin, TAXONOMY_FILE)}" if self.origin is Origin.BUILTIN else "there"
        fix = f"add a keyword for it {there}"
        if self.catch_all is None:
            return f"{entry.path}:{entry.title_line}: this PR matches no topic in {self.label}; {fix}"
        return (f"{entry.path}:{entry.title_line}: this PR matches no topic in {self.label}, so its cards are tagged "
                f"{TOPIC_TAG_PREFIX}{self.catch_all}; {fix}")

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
    matched = tuple(t.id for i, t in enumerate(taxonomy.topics)
                    if not vetoed.get(3 * i)
                    and (in_title.get(3 * i + 1) or in_title.get(3 * i + 2)
                         or (t.identifiers and folded_identifier_matches(t.identifiers, identifiers, joined))
                         or in_review.get(3 * i + 1, 0) >= t.min_hits))
    return matched if matched or taxonomy.catch_all is None else (taxonomy.catch_all,)


@dataclass(frozen=True)
class TopicEvidence:
    """Why a PR has a topic: what matched (nothing, for the catch-all)."""

    topic: str
    summary: tuple[str, ...] = ()
    """Keywords and summary keywords, as the taxonomy writes them, found in the PR's summary line."""
    review: tuple[tuple[str, int], ...] = ()
    """Keywords found in the review, each with its number of occurrences."""
    identifiers: tuple[str, ...] = ()
    """The review's `code` identifiers that match one of the topic's patterns."""


def explain_topics(review: Review, taxonomy: Taxonomy) -> tuple[TopicEvidence, ...]:
    """The evidence for each topic :func:`match_topics` gives *review*, in the same order (for ``topics --explain``)."""
    summary, text = fold(review.entry.title), fold(review.entry.review)
    out = []
    for topic_id in match_topics(review, taxonomy):
        topic = taxonomy.get(topic_id)
        assert topic is not None  # match_topics gives the taxonomy's ids
        words = (*topic.keywords.found(summary), *topic.summary_keywords.found(summary))
        names = [n for n in dict.fromkeys(review.identifiers)
                 if topic.identifiers and folded_identifier_matches(topic.identifiers, (fold(n),), fold(n))]
        out.append(TopicEvidence(topic_id, tuple(dict.fromkeys(words)), topic.keywords.counts(text), tuple(names)))
    return tuple(out)


def load_taxonomy(path: Path) -> Taxonomy:
    """Read ``topics.toml``; a :class:`~deckgen.errors.DataFileError` naming file and line for anything wrong."""
    where = read_toml(path)
    where.only_keys(where.data, _FILE_KEYS, None, "the file",
                    "a taxonomy is a list of [[topic]] tables, an optional [catch_all] table and use_builtin = true/false")
    topics: list[Topic] = []
    seen: dict[str, int | None] = {}
    for table, line in tables(where, "topic"):
        topic = _topic(table, line, where)
        where.unique(seen, topic.id, line, f"topic id {topic.id!r}", "give each topic its own id")
        topics.append(topic)
    if not topics:
        raise where.error(None, "no [[topic]] tables", "add at least one topic")
    catch_all = _catch_all(where)
    if catch_all is not None:
        if catch_all.id in seen:
            raise where.error(catch_all.line, f"the catch-all topic's id {catch_all.id!r} is a [[topic]]'s id too "
                              f"(line {seen[catch_all.id]})", "give the catch-all an id of its own")
        topics.append(catch_all)
    return Taxonomy(Path(path), tuple(topics), catch_all.id if catch_all else None,
                    where.boolean("use_builtin", True))


def _catch_all(where: DataFile) -> Topic | None:
    """The ``[catch_all]`` table's topic (no match rules), if the file has one."""
    table = where.data.get("catch_all")
    if table is None:
        return None
    line = where.header_line("catch_all")
    if not isinstance(table, dict):
        raise where.error(where.key_line("catch_all"), "'catch_all' must be a table", 'write [catch_all] with id, zh and en')
    where.only_keys(table, _CATCH_ALL_KEYS, line, "[catch_all]", "known keys: en, id, zh (it has no match rules)")
    topic_id = _slug(required_string(table, "id", where, line, "[catch_all]"), where, line)
    what = f"catch-all topic {topic_id!r}"
    return Topic(topic_id, required_string(table, "zh", where, line, what), required_string(table, "en", where, line, what),
                 Keywords(()), line=line)


def _slug(topic_id: str, where: DataFile, line: int | None) -> str:
    if not SLUG_RE.match(topic_id):
        raise where.error(line, f"topic id {topic_id!r} is not an ASCII slug",
                          "use lower-case letters, digits and single hyphens, e.g. cuda-graph")
    return topic_id


def layer_taxonomy(own: Taxonomy, base: Taxonomy) -> Taxonomy:
    """*own* over *base*: *own*'s topics first, in its order, then *base*'s other topics; one catch-all, *own*'s first.

    A topic of *own* replaces *base*'s topic with the same id (its rules too: nothing of the
    base topic is kept).  The result has *own*'s path, so messages send people to that file.
    """
    catch_all = own.get(own.catch_all) if own.catch_all else (base.get(base.catch_all) if base.catch_all else None)
    mine = [t for t in own.topics if t.id != own.catch_all]
    ids = {t.id for t in mine}
    if catch_all is not None and catch_all.id in ids:
        clash = own.get(catch_all.id)
        raise DataFileError(own.path, clash.line if clash else None,
                            f"topic id {catch_all.id!r} is the built-in catch-all topic's (PRs that match no topic get it)",
                            "give the topic another id, or name the catch-all yourself with a [catch_all] table")
    topics = [*mine, *(t for t in base.topics if t.id not in ids and t.id != base.catch_all)]
    if catch_all is not None:
        topics.append(catch_all)
    return Taxonomy(own.path, tuple(topics), catch_all.id if catch_all else None, own.use_builtin, Origin.LAYERED)


def _topic(table: Mapping[str, Any], line: int | None, where: DataFile) -> Topic:
    where.only_keys(table, _KEYS, line, "[[topic]]", f"known keys: {', '.join(sorted(_KEYS))}")
    topic_id = _slug(required_string(table, "id", where, line, "[[topic]]"), where, line)
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
