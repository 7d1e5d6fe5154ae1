"""Cards against gold labels: which listed decisions some card tests, and which cards come from no decision.

Takes the cards of a corpus (:func:`deckgen.pipeline.build_corpus`) and gold PR lists (JSON: ``file``, ``title``,
``decisions`` with ``key`` and ``alt_keys``, ``not_decisions``); gives a :class:`PrScore` per gold PR.
``benchmarks/quality.py`` prints the scores; ``tests/test_gold.py`` and ``tests/test_written.py`` hold floors on them.

* A decision is **tested** when some card of its PR has its key, or one of its alternative keys, in its answer
  (Q/A) or in a cloze gap.
* A PR has **no card** when none of its cards is in the deck.
* The **rendered** checks look at each card's fields as Anki shows them (HTML made text): Markdown left raw
  (``**``, backticks), brackets or quotes that do not pair, an answer or question that starts or ends mid-phrase
  (the gate's word lists), and an answer that shows on its own front.
* A card is **off-target** when its answer (or a gap) occurs in the review, but only inside the gold
  ``not_decisions`` parts; it is *checkable* when its answer occurs in the summary line or the review at all.
  The summary line is never inside a ``not_decisions`` part: an answer found there (a headline card's) is on
  target.
* The **oracle** is the share of decisions some *candidate* card of the PR that passes the quality gate tests,
  selected or not: what selection could reach at best.
* A question is **context-free** when its cue names only the repository and the question holds too little else
  to say which PR it is about (:func:`deckgen.cards.gate.check_context_free`); it is **repeated** when another
  card of the deck asks the very same front.

Backticks and bold markers are markup only: every comparison is made without them.  The extractor never reads
the gold files: they are a measure, not rule data.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DeckgenError
from ..options import BuildOptions
from ..cards.cards import make_candidates
from ..cards.gate import BAD_START, balanced, check_context_free, ends_mid_phrase, warnings_unless_rejected
from ..text.segment import get_segmenter
from ..deck.notes import Corpus, note_fields
from ..pipeline import build_corpus
from ..text.markup import cloze_plain, deletions, strip_markdown
from .preview import deck_cards
from ..source.parse import parse_corpus
from ..types import Card, CardKind, Entry, norm

GoldPr = dict[str, Any]
"""One PR of a gold file, as JSON gives it."""


def plain(text: str) -> str:
    """*text* without Markdown: what the gold files compare."""
    return strip_markdown(text).replace("`", "")


@dataclass(frozen=True)
class AnkiCard:
    """One Anki card of a deckgen note: its kind and the texts it tests (its answer, or its gaps)."""

    card: Card
    ordinal: int
    tested: tuple[str, ...]

    @property
    def kind(self) -> str:
        return self.card.kind.value


def anki_cards(card: Card) -> Iterator[AnkiCard]:
    """The Anki cards of *card* (as :func:`deckgen.report.preview.deck_cards` splits a note) and what each tests."""
    for shown in deck_cards([card]):
        if card.kind != CardKind.CLOZE:
            yield AnkiCard(card, 1, (plain(card.answer),))
        else:
            yield AnkiCard(card, shown.ordinal, tuple(plain(b) for n, b in deletions(card.prompt) if n == shown.ordinal))


def read_gold(path: Path) -> list[GoldPr]:
    """The PRs of a gold JSON file, or of every JSON file in a folder."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    return [pr for f in files for pr in json.loads(f.read_text(encoding="utf-8"))]


def decision_keys(decision: dict[str, Any]) -> list[str]:
    """What a card must show to test a gold decision: its key or one of its alt_keys, in plain text."""
    return [plain(k) for k in [decision["key"], *decision.get("alt_keys", [])]]


def labelled_entries(folder: Path) -> Iterator[tuple[Entry, GoldPr]]:
    """The entries of a labelled corpus (*folder* with ``seeds/`` and ``gold/``) that have gold, with it."""
    gold = {(pr["file"], pr["title"]): pr for pr in read_gold(folder / "gold")}
    for entry in parse_corpus([folder / "seeds"]):
        pr = gold.get((entry.path.name, entry.title))
        if pr is not None:
            yield entry, pr


def _spans(text: str, part: str) -> list[tuple[int, int]]:
    found, start = [], text.find(part)
    while part and start >= 0:
        found.append((start, start + len(part)))
        start = text.find(part, start + 1)
    return found


def off_target(tested: str, review: str, excluded: Sequence[tuple[int, int]]) -> bool | None:
    """Whether *tested* occurs in *review* only inside *excluded* spans; None when it does not occur at all."""
    occurrences = _spans(review, tested)
    if not occurrences:
        return None
    return all(any(a <= s and e <= b for a, b in excluded) for s, e in occurrences)


@dataclass
class PrScore:
    title: str
    decisions: int
    tested: list[str]
    untested: list[str]
    cards: list[AnkiCard]
    off: list[AnkiCard]
    checkable: int
    reachable: int = 0
    """Decisions some candidate that passes the gate tests (the oracle)."""


def tests(decision: dict[str, Any], texts: Sequence[str]) -> bool:
    """Whether a card testing one of *texts* (plain answers or gaps) tests the gold *decision*."""
    return any(k in t for k in decision_keys(decision) for t in texts)


def score_pr(pr: GoldPr, cards: Sequence[Card], review_text: str, candidates: Sequence[Card] = ()) -> PrScore:
    """How the cards of one PR (none of them glossary cards) do against its gold entry; *candidates* are the PR's
    candidate cards that pass the gate, for the oracle."""
    shown = [a for c in cards for a in anki_cards(c)]
    texts = [t for a in shown for t in a.tested]
    tested, untested = [], []
    for decision in pr["decisions"]:
        (tested if tests(decision, texts) else untested).append(decision["key"])
    offered = [t for c in candidates for a in anki_cards(c) for t in a.tested]
    reachable = sum(1 for decision in pr["decisions"] if tests(decision, offered))
    # The summary line heads the text: a headline card's answer comes from it, and no not_decisions part is in it.
    title = plain(pr["title"])
    review = title + "\n" + plain(review_text)
    excluded = [span for part in pr.get("not_decisions", []) for span in _spans(review, plain(part))
                if span[0] > len(title)]
    off, checkable = [], 0
    for anki_card in shown:
        verdicts = [off_target(t, review, excluded) for t in anki_card.tested]
        if any(v is not None for v in verdicts):
            checkable += 1
            if any(verdicts):
                off.append(anki_card)
    return PrScore(pr["title"], len(pr["decisions"]), tested, untested, shown, off, checkable, reachable)


def score_corpus(corpus: Corpus, gold: Sequence[GoldPr]) -> list[PrScore]:
    """A score for each gold PR whose seed file is in *corpus*; an error if one of them is not in it."""
    by_pr: dict[tuple[str, str], list[Card]] = {}
    reviews = {(r.entry.path.name, r.entry.title): r.entry.review for r in corpus.reviews}
    for card in corpus.cards:
        if card.kind != CardKind.GLOSSARY:  # glossary cards belong to no PR
            by_pr.setdefault((card.entry.path.name, card.entry.title), []).append(card)
    files = {f.name for f in corpus.files}
    gold = [pr for pr in gold if pr["file"] in files]  # a gold folder may describe more seed files than given
    missing = [pr["title"] for pr in gold if (pr["file"], pr["title"]) not in reviews]
    if missing or not gold:
        raise DeckgenError(f"gold PRs not found in the seeds: {missing}" if missing else "no gold PR is in these seeds")
    seg = get_segmenter()
    offered = {(r.entry.path.name, r.entry.title): [c.card for c in make_candidates(r, seg)
                                                    if warnings_unless_rejected(c.card, seg) is not None]
               for r in corpus.reviews}
    return [score_pr(pr, by_pr.get((pr["file"], pr["title"]), []), reviews[(pr["file"], pr["title"])],
                     offered[(pr["file"], pr["title"])]) for pr in gold]


def score(sources: Sequence[Path], gold: Sequence[GoldPr], options: BuildOptions | None = None) -> list[PrScore]:
    """Build the cards of *sources* as ``deckgen build`` would, and score them against *gold*."""
    return score_corpus(build_corpus(sources, options or BuildOptions()), gold)


_TAG = re.compile(r"<[^>]+>")
RENDERED_CHECKS = ("raw Markdown", "unbalanced", "mid-phrase", "answer on front")


def visible(field: str) -> str:
    """What a learner reads of an HTML field: its text, entities decoded."""
    return html.unescape(_TAG.sub("", field))


def rendering_problems(card: AnkiCard) -> list[str]:
    """Which of :data:`RENDERED_CHECKS` the card fails, as Anki renders its fields."""
    fields = [visible(f) for f in note_fields(card.card)]
    if card.card.kind == CardKind.CLOZE:
        front = cloze_plain(card.card.prompt, style="blank")
        asked = [fields[0]]
    else:
        front, asked = fields[0], [fields[0], fields[1]]
    problems = []
    if any("**" in text or "`" in text for text in fields[:-2]):  # every field a learner reads, not Verdict/Status
        problems.append("raw Markdown")
    if not all(balanced(text) for text in asked):
        problems.append("unbalanced")
    answers = [visible(strip_markdown(t)) for t in card.tested]
    question = fields[0].strip() if card.card.kind != CardKind.CLOZE else ""
    seg = get_segmenter()
    if any(a.strip().startswith(BAD_START) or ends_mid_phrase(a.strip(), seg) for a in answers) \
            or (question and question.startswith(BAD_START)):
        problems.append("mid-phrase")
    shown = norm(f"{card.card.cue} {front}")
    if any(a and norm(a) in shown for a in answers):
        problems.append("answer on front")
    return problems


def context_free(cards: Sequence[Card]) -> list[Card]:
    """The question cards of *cards* whose question, with its cue, would fit any PR of its repository."""
    seg = get_segmenter()
    return [c for c in cards if check_context_free(c, seg)]


def repeated(cards: Sequence[Card]) -> list[Card]:
    """The cards of a deck (*cards*, glossary cards included) whose front another card before them shows."""
    seen: set[str] = set()
    again = []
    for card in cards:
        front = norm(f"{card.cue}{cloze_plain(card.prompt, style='blank')}")
        if front in seen:
            again.append(card)
        seen.add(front)
    return again
