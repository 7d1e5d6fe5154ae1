"""An entry's notes: the whole card-making path for one entry, and a card rendered as a note.

:func:`make_entry_notes` is one pure function of an entry (and the taxonomy and
glossary): extraction, cards, curriculum, rendered notes.  It is two steps, so
that the cache (:mod:`deckgen.files.cachedir`) can wrap each from outside and keep
their results apart: :func:`~deckgen.cards.cards.make_result` (extraction and
cards) depends on the entry alone, and
:func:`entry_notes` on its result and the data files (editing ``topics.toml``
matches every entry again, but extracts none again).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from pathlib import Path

from ..curriculum.curriculum import (
    Curriculum,
    EntryCurriculum,
    entry_curriculum,
    tag_cards,
)
from ..curriculum.glossary import Glossary
from ..curriculum.topics import Taxonomy
from ..text.markup import anki_cards, cloze_to_html, escape, revealed, to_html
from ..text.prnumber import own_pr_number
from ..types import Card, CardKind, Entry, Review
from .lock import BuiltNote
from .notetypes import CLOZE_MODEL_ID, QA_MODEL_ID
from .thirdparty import genanki

GUID_NAMESPACE = "deckgen/v1"
GLOSSARY_LABEL = "术语表"
MIN_CARDS_PER_PR = 1
"""Fewer Anki cards than this from a PR is worth a warning.  There is no minimum a PR must reach: a review that
states one decision gets one to three cards; one that states none deckgen can read gets none, and a warning."""

@dataclass(frozen=True)
class EntryNotes:
    """One entry after the taxonomy and glossary: its review, curriculum, topic-tagged cards and their notes."""

    review: Review
    curriculum: EntryCurriculum
    cards: tuple[Card, ...]
    notes: tuple[BuiltNote, ...]
    """:func:`built_note` of each card, in card order."""
    warnings: tuple[str, ...]
    """What a build warns about the entry (:func:`entry_warnings`)."""
    fact_count: int
    """How many facts the review has, also when it comes without them (see :class:`deckgen.cache.notecache.NoteMaker`)."""


def entry_notes(review: Review, cards: Sequence[Card], taxonomy: Taxonomy | None,
                glossary: Glossary | None) -> EntryNotes:
    """The notes of an entry whose :func:`~deckgen.cards.cards.make_result` is *review* and *cards*."""
    curriculum = entry_curriculum(review, taxonomy, glossary)
    tagged = tuple(tag_cards(cards, curriculum.topics))
    return EntryNotes(review, curriculum, tagged, tuple(built_note(c) for c in tagged), entry_warnings(review, tagged),
                      len(review.facts))


def make_entry_notes(entry: Entry, taxonomy: Taxonomy | None, glossary: Glossary | None) -> EntryNotes:
    """Everything a build makes of one entry: depends on the entry, the taxonomy and the glossary alone."""
    from ..cards.cards import make_result  # here, not above: a build whose entries are all cached never loads it

    return entry_notes(*make_result(entry), taxonomy, glossary)


def entry_warnings(review: Review, cards: Sequence[Card]) -> tuple[str, ...]:
    """What a build warns about one entry: no card, and the review's own findings (no verdict, no decision)."""
    from ..extract.findings import review_findings  # only for a new entry: a cached one keeps its warnings

    entry = review.entry
    out = []
    count = sum(anki_cards(c) for c in cards)
    if count < MIN_CARDS_PER_PR:
        out.append(f"{entry.path}:{entry.title_line}: no card for this PR; its review states no design decision deckgen "
                   "can read (name each decision: 1) 2) …, **名称**: 说明, or 采用 X 而非 Y，以 Z)")
    out.extend(f"{finding.where}: {finding.text}" for finding in review_findings(review))
    return tuple(out)  # () for most entries: one shared empty tuple, not a list each


@dataclass(frozen=True)
class Corpus:
    """What the extract and card stages made of a set of seed files."""

    files: tuple[Path, ...]
    reviews: tuple[Review, ...]
    """Every entry's review; without its facts (``facts=()``) when built with ``facts=False``."""
    cards: tuple[Card, ...]
    """The PR cards, tagged with their topics, then the glossary cards."""
    warnings: tuple[str, ...]
    curriculum: Curriculum = Curriculum()
    notes: tuple[BuiltNote, ...] = ()
    """The notes of the first ``len(notes)`` cards (the PR cards), as :func:`built_note` renders them."""

    def built_notes(self) -> list[BuiltNote]:
        """The note of every card, in card order."""
        return [*self.notes, *(built_note(c) for c in self.cards[len(self.notes):])]


def card_guid(card: Card) -> str:
    """The note's identity in every collection: namespace, repository, PR and the card's stable key."""
    return guid_for(GUID_NAMESPACE, *card.guid_parts)


# Two base-91 digits at a time: a 64-bit number has at most ten (91**10 > 2**64).
_BASE91_PAIRS = [a + b for a in genanki.util.BASE91_TABLE for b in genanki.util.BASE91_TABLE]


def guid_for(*parts: str) -> str:
    """``genanki.guid_for`` of strings, without its digit-by-digit Python arithmetic (a cold build asks for every note)."""
    number = int.from_bytes(hashlib.sha256("__".join(parts).encode("utf-8")).digest()[:8], "big")
    number, fifth = divmod(number, 8281)
    number, fourth = divmod(number, 8281)
    number, third = divmod(number, 8281)
    first, second = divmod(number, 8281)
    pairs = _BASE91_PAIRS
    # genanki writes no leading zeros ("a" is the digit 0).
    return (pairs[first] + pairs[second] + pairs[third] + pairs[fourth] + pairs[fifth]).lstrip("a")


_TAG_UNSAFE = re.compile(r"[\s\"]+")


@lru_cache(maxsize=4096)  # the same few repository, kind, verdict and topic tags on every note
def tag(*parts: str) -> str:
    return "::".join(_TAG_UNSAFE.sub("_", part.strip()) for part in parts if part.strip())


# A PR's cards share its cue, title and source line, and a fact's cards share its sentence: each is
# rendered once (half of the rendering of a big corpus), not once per card.
_escape = lru_cache(maxsize=4096)(escape)
_to_html = lru_cache(maxsize=4096)(to_html)


OWN_TAG_PREFIXES = ("kind::", "topic::", "verdict::", "repo::", "rel::", "deckgen::")
"""The namespaces of the tags deckgen sets (with ``deckgen`` itself); any other tag on a note is the learner's."""


def own_tag(tag: str) -> bool:
    """Whether *tag* is one of deckgen's (Anki compares tags without regard to case, so this does too)."""
    folded = tag.casefold()
    return folded == "deckgen" or folded.startswith(OWN_TAG_PREFIXES)


def card_tags(card: Card) -> list[str]:
    owner, _, name = card.entry.repo.partition("/")
    tags = ["deckgen", tag("repo", owner, name), tag("kind", card.kind.value)]
    if card.kind != CardKind.GLOSSARY:  # a glossary card has no reading verdict or relation of its own
        tags += [tag("verdict", card.verdict.value), tag("rel", card.relation.value)]
    tags.extend(card.tags)
    return sorted(set(tags))


def note_fields(card: Card) -> list[str]:
    """Field values in note-type order (see :mod:`deckgen.deck.notetypes`), all HTML-escaped.

    A glossary card belongs to no PR: its Summary is empty, so its back has no line labelled
    PR, and the templates label its Sentence (the term's meaning) 释义 instead of 原文; its
    Verdict says 术语表.
    """
    glossary = card.kind == CardKind.GLOSSARY
    cloze = card.kind == CardKind.CLOZE
    verdict = GLOSSARY_LABEL if glossary else card.verdict.label
    sentence = _to_html(cloze_context(card.prompt, card.sentence) if cloze else card.sentence)
    # The cue is a plain label; the summary may name code (`X`), shown as code like the review's own.
    shared = [_escape(card.cue), "" if glossary else _to_html(card.entry.title), sentence, source_field(card),
              _escape(verdict), ""]
    if cloze:
        return [cloze_to_html(card.prompt), *shared]
    return [to_html(card.prompt), to_html(card.answer), *shared]


def source_field(card: Card) -> str:
    """Where *card* comes from, for a learner: the repository and the PR's number when the seed names it
    (:func:`own_pr_number`), then the seed file and line as a smaller detail (``<span class="where">``,
    provenance, not content: see :func:`deckgen.deck.lock.content_fields`)."""
    entry = card.entry
    number = None if card.kind == CardKind.GLOSSARY else own_pr_number(entry.title, entry.review)
    head = f"{entry.repo} · PR #{number}" if number else entry.repo
    return f'{_escape(head)} · <span class="where">{_escape(f"{entry.path.name}:{card.line}")}</span>'


MIN_CONTEXT_UNITS = 4
"""Less of the source sentence than this beyond a cloze's text (它, 但, 此外，) is not worth a 原文 line."""
_CODE_SPAN_RE = re.compile(r"`[^`\n]+`")
_LEADING_PUNCT = "，,。；;：:、 "
_TRAILING_PUNCT = "，,；;：:、 "


def cloze_context(prompt: str, sentence: str) -> str:
    """What a cloze card's source *sentence* adds to the card's own text (*prompt*, its gaps revealed).

    A cloze's text is most of its sentence, so the 原文 line shows only the rest: the words
    before and after the part the card shows, ``…`` standing for that part, and each only when
    it has at least :data:`MIN_CONTEXT_UNITS`; empty (no 原文 line) when nothing is left.  Code
    spans are never cut.  Plain text with backticks, like *sentence*.
    """
    text = revealed(prompt)
    start = sentence.find(text)
    if start >= 0:  # the usual case: the card shows a piece of the sentence as it stands
        end = start + len(text)
    else:  # reworded at the edges (它 → 该 PR, 但 left out): the span from the first to the last matching run
        blocks = [b for b in SequenceMatcher(None, sentence, text, autojunk=False).get_matching_blocks() if b.size >= 2]
        if not blocks:
            return sentence
        start, end = blocks[0].a, blocks[-1].a + blocks[-1].size
    for span in _CODE_SPAN_RE.finditer(sentence):  # the shown part takes in a code span it cuts
        if span.start() < start < span.end():
            start = span.start()
        if span.start() < end < span.end():
            end = span.end()
    from ..text.segment import units  # here: a build whose notes are all cached renders none (and loads no segmenter)

    before, after = sentence[:start].rstrip(_TRAILING_PUNCT), sentence[end:].lstrip(_LEADING_PUNCT)
    before = before if units(before) >= MIN_CONTEXT_UNITS else ""
    after = after if units(after) >= MIN_CONTEXT_UNITS else ""
    if not before and not after:
        return ""
    return f"{before}…{after}"


def model_id(card: Card) -> int:
    """The id of the note type *card* is a note of."""
    return CLOZE_MODEL_ID if card.kind == CardKind.CLOZE else QA_MODEL_ID


def built_note(card: Card) -> BuiltNote:
    """*card* as this build renders it, for the lock to compare with what users have."""
    return BuiltNote(card.entry.pr_key, card.key, card.kind.value, model_id(card), card_guid(card),
                     tuple(note_fields(card)), tuple(card_tags(card)))
