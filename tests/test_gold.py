"""The seeds deck, and the development reviews, against the gold decisions a person listed for each PR.

tests/golden/seeds-gold.json is ../shared/gold/seeds-gold.json; tests/fixtures/dev-gold/ is ../shared/dev/gold/,
beside its seeds in tests/fixtures/dev/.  The gold files measure; neither the extractor nor its models read them.
These are floors, not the targets of issue #25 (seeds/ 39/43 decisions tested, the development reviews 0.85): a
change that tests fewer decisions, or makes a card from a part that is no decision, or leaves a PR without a
card, fails here.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from deckgen.cards.gate import REJECT, anki_cards, review_card
from deckgen.deck.notes import Corpus
from deckgen.pipeline import build_corpus
from deckgen.report.quality import PrScore, read_gold, score_corpus
from deckgen.text.segment import get_segmenter
from deckgen.types import Card, CardKind, norm

HERE = Path(__file__).parent
GOLD = read_gold(HERE / "golden" / "seeds-gold.json")


@pytest.fixture(scope="module", name="corpus")
def _corpus() -> Corpus:
    return build_corpus([HERE.parent / "seeds"])


@pytest.fixture(scope="module", name="cards")
def _cards(corpus: Corpus) -> tuple[Card, ...]:
    return corpus.cards


@pytest.fixture(scope="module", name="scores")
def _scores(corpus: Corpus) -> list[PrScore]:
    return score_corpus(corpus, GOLD)


TESTED_AT_LEAST = 25
"""Gold decisions the deck tests today (of 43): a change that tests fewer fails here.  Raise it when more are.
(30 under issue #25's rules; selecting by what reviewers keep, issue #30, takes cards holding fewer gold keys.)"""
DEV_TESTED_AT_LEAST = 50
"""The same for the development reviews (of 69)."""
DEV_OFF_TARGET_AT_MOST = 0.03
"""Off-target cards of the development reviews at most (issue #30's target); the seeds deck has none."""


def test_gold_decisions_tested_do_not_fall(scores: list[PrScore]) -> None:
    missing = [f"{s.title[:24]}…: {key}" for s in scores for key in s.untested]
    total = sum(s.decisions for s in scores)
    assert total - len(missing) >= TESTED_AT_LEAST, f"{len(missing)}/{total} gold decisions untested:\n" + "\n".join(missing)


def test_no_card_comes_from_a_part_that_is_not_a_decision(scores: list[PrScore]) -> None:
    """Off-target: an answer or gap found in the review only inside the gold's not_decisions parts."""
    off = [f"{a.card.prompt} → {' / '.join(a.tested)}" for s in scores for a in s.off]
    assert off == []


def test_no_selected_card_fails_a_hard_check(cards: tuple[Card, ...]) -> None:
    seg = get_segmenter()
    failures = [(c.prompt, f.message) for c in cards for f in review_card(c, seg) if f.severity == REJECT]
    assert failures == []


def test_no_duplicate_questions(cards: tuple[Card, ...]) -> None:
    counts = Counter((c.entry.pr_key, norm(c.cue + c.prompt)) for c in cards)
    assert [q for q, n in counts.items() if n > 1] == []


def test_cards_per_pr_follow_the_verdict(cards: tuple[Card, ...]) -> None:
    """At most 8 Anki cards a PR, fewer for a skim and fewer still for a PR not worth reading; no minimum."""
    from deckgen.cards.select import CARDS_BY_VERDICT

    per_pr: Counter[str] = Counter()
    verdicts = {}
    for card in cards:
        if card.kind != CardKind.GLOSSARY:  # glossary cards belong to no single PR
            per_pr[card.entry.title] += anki_cards(card)
            verdicts[card.entry.title] = card.verdict
    assert per_pr and all(n <= CARDS_BY_VERDICT[verdicts[t]] for t, n in per_pr.items()), per_pr
    assert max(per_pr.values()) <= 8


def test_answers_are_short(cards: tuple[Card, ...]) -> None:
    """Answers ≤ 35 units each, median ≤ 20 (card-quality A1); what a named decision does may take 45."""
    from statistics import median

    from deckgen.text.segment import units

    lengths = [units(c.answer) for c in cards if c.kind not in (CardKind.CLOZE, CardKind.DECISION)]
    decisions = [units(c.answer) for c in cards if c.kind == CardKind.DECISION]
    assert max(lengths) <= 35 and median(lengths) <= 20 and max(decisions, default=0) <= 45


@pytest.fixture(scope="module", name="dev_scores")
def _dev_scores() -> list[PrScore]:
    return score_corpus(build_corpus([HERE / "fixtures" / "dev"]), read_gold(HERE / "fixtures" / "dev-gold"))


def test_every_pr_has_a_card(scores: list[PrScore], dev_scores: list[PrScore]) -> None:
    """Every PR gets at least its headline card (issue #25): none of the seeds nor of the development reviews
    is left without one."""
    assert [s.title for s in scores if not s.cards] == []
    assert [s.title for s in dev_scores if not s.cards] == []


def test_development_reviews_hold_their_floors(dev_scores: list[PrScore]) -> None:
    tested = sum(len(s.tested) for s in dev_scores)
    off = [f"{a.card.prompt} → {' / '.join(a.tested)}" for s in dev_scores for a in s.off]
    cards = sum(len(s.cards) for s in dev_scores)
    assert tested >= DEV_TESTED_AT_LEAST and len(off) <= DEV_OFF_TARGET_AT_MOST * cards, off


def test_rendered_cards_show_no_markup_leak_or_broken_field(scores: list[PrScore], dev_scores: list[PrScore]) -> None:
    """As Anki renders them: no raw Markdown, no unpaired bracket or quote, no field cut mid-phrase, no answer
    on its own front."""
    from deckgen.report.quality import rendering_problems

    bad = [(a.card.prompt, rendering_problems(a)) for s in [*scores, *dev_scores] for a in s.cards
           if rendering_problems(a)]
    assert bad == []
