"""Scoring cards against gold labels: a decision is tested by an answer or a gap; a card is off-target when what
it tests occurs in the review only inside a not_decisions part."""

from __future__ import annotations

from dataclasses import replace

import pytest

from deckgen.errors import DeckgenError
from deckgen.report.quality import context_free, repeated, score, score_pr
from deckgen.text.markup import deletion
from deckgen.types import CardKind
from tests.cards.test_gate import BASE, CLOZE, ENTRY
from tests.conftest import FIXTURES

PR = {"file": "s.txt", "title": ENTRY.title, "not_decisions": ["值得精读。"],
      "decisions": [{"key": "减少初始化开销", "alt_keys": []}, {"key": "`workspace`", "alt_keys": ["预分配"]},
                    {"key": "逐层守卫", "alt_keys": []}]}


def test_decisions_are_tested_by_answers_and_gaps_with_markup_ignored() -> None:
    result = score_pr(PR, [BASE, CLOZE], ENTRY.review)
    assert result.tested == ["减少初始化开销", "`workspace`"] and result.untested == ["逐层守卫"]
    assert (len(result.cards), result.checkable, result.off) == (2, 2, [])


def test_a_card_testing_only_a_non_decision_part_is_off_target() -> None:
    praise = replace(BASE, key="why:praise", answer="值得精读")
    result = score_pr(PR, [praise], ENTRY.review)
    assert [a.card.key for a in result.off] == ["why:praise"] and result.checkable == 1
    elsewhere = replace(BASE, key="why:x2", answer="不在评审里的话")
    assert score_pr(PR, [elsewhere], ENTRY.review).checkable == 0


def test_a_cloze_note_counts_one_card_per_deletion_number() -> None:
    two = replace(CLOZE, prompt="通过" + deletion(1, "预分配") + " `workspace` 来避免" + deletion(2, "在捕获期间分配显存"))
    assert [a.ordinal for a in score_pr(PR, [two], ENTRY.review).cards] == [1, 2]


def test_gold_prs_missing_from_the_seeds_are_an_error() -> None:
    gold = [{"file": "good.txt", "title": "no such PR", "decisions": [], "not_decisions": []}]
    with pytest.raises(DeckgenError, match="not found"):
        score([FIXTURES / "good.txt"], gold)


def test_a_headline_answer_found_in_the_summary_is_on_target() -> None:
    """The summary line is never a not_decisions part: an answer it holds is on target, though the review says
    the same words only in its praise."""
    pr = {**PR, "not_decisions": ["值得精读。采用 `torch.empty`"]}
    headline = replace(BASE, key="headline:x", answer="预分配工作区")
    review = "值得精读。采用 `torch.empty`" + ENTRY.review
    assert score_pr({**pr, "title": ENTRY.title}, [headline], review).off == []


def test_rendering_problems_see_what_a_learner_sees() -> None:
    from deckgen.report.quality import anki_cards, rendering_problems

    [clean] = anki_cards(BASE)
    assert rendering_problems(clean) == []
    [raw] = anki_cards(replace(BASE, cue="r · 调整 `x` 的缓存"))  # the cue is plain text: a backtick shows
    assert rendering_problems(raw) == ["raw Markdown"]
    [cut] = anki_cards(replace(BASE, answer="预分配的"))
    assert "mid-phrase" in rendering_problems(cut)
    [shown] = anki_cards(replace(BASE, answer="预分配工作区", prompt="为什么要预分配工作区？"))
    assert "answer on front" in rendering_problems(shown)
    [unpaired] = anki_cards(replace(BASE, answer="「预分配"))
    assert "unbalanced" in rendering_problems(unpaired)


def test_the_oracle_counts_what_any_candidate_tests() -> None:
    pr = {"title": ENTRY.title, "decisions": [{"key": "workspace"}, {"key": "减少初始化开销"}], "not_decisions": []}
    scored = score_pr(pr, [], ENTRY.review, candidates=[CLOZE])
    assert scored.tested == [] and scored.reachable == 1


def test_context_free_and_repeated_questions_are_counted_across_a_deck() -> None:
    """A question under the repository's cue alone that fits any of its PRs (corpus/dev at c48fc35: 【sglang】该 PR
    新增什么？) is counted, and so is a front another card of the deck shows too, whatever its PR."""
    bare = replace(BASE, kind=CardKind.HEADLINE, cue="r", prompt="该 PR 新增什么？", answer="预分配工作区")
    other_pr = replace(BASE, entry=replace(ENTRY, title="另一个 PR"))
    assert context_free([BASE, bare]) == [bare]
    assert repeated([BASE, bare, other_pr]) == [other_pr]
    assert repeated([BASE, CLOZE]) == []
