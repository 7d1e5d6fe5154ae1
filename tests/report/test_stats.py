"""deckgen stats: the numbers agree with the deck build writes, read back from the .apkg."""

from __future__ import annotations

import html
import json
import re
import statistics
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from deckgen.cli import cli
from deckgen.deck.notetypes import CLOZE_MODEL_ID
from deckgen.text.segment import units
from tests.conftest import SEEDS, read_apkg, write_seed

CLOZE_RE = re.compile(r"\{\{c(\d+)::(.*?)\}\}", re.S)


def text_of(field: str) -> str:
    """A field's text as the learner reads it: no tags, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", field))


def deck_numbers(apkg: Path) -> dict[str, object]:
    """Count what the written deck holds, from its notes alone."""
    by_kind: Counter[str] = Counter()
    by_verdict: Counter[str] = Counter()
    by_topic: Counter[str] = Counter()
    per_pr: Counter[str] = Counter()
    lengths: list[int] = []
    notes = read_apkg(apkg)
    for _, fields, tags, mid in notes:
        if mid == CLOZE_MODEL_ID:
            bodies: dict[str, str] = {}
            for ordinal, body in CLOZE_RE.findall(fields[0]):
                bodies[ordinal] = bodies.get(ordinal, "") + text_of(body)
            answers, summary = list(bodies.values()), fields[2]
        else:
            answers, summary = [text_of(fields[1])], fields[3]
        lengths += [units(a) for a in answers]
        for tag in tags.split():
            group, _, value = tag.partition("::")
            counter = {"kind": by_kind, "verdict": by_verdict, "topic": by_topic}.get(group)
            if counter is not None:
                counter[value] += len(answers)
        if "kind::glossary" not in tags.split():  # glossary notes belong to no single PR
            per_pr[summary] += len(answers)
    return {"notes": len(notes), "cards": len(lengths), "by_kind": by_kind, "by_verdict": by_verdict,
            "by_topic": by_topic, "per_pr": per_pr, "lengths": lengths}


def test_stats_json_agrees_with_the_built_deck(runner: CliRunner, tmp_path: Path) -> None:
    """Every count in `stats --json` is what the .apkg written by `build` holds."""
    out = tmp_path / "deck.apkg"
    built = runner.invoke(cli, ["build", str(SEEDS), "-o", str(out)])
    assert built.exit_code == 0, built.output
    result = runner.invoke(cli, ["stats", str(SEEDS), "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    deck = deck_numbers(out)

    assert (stats["notes"], stats["cards"]) == (deck["notes"], deck["cards"])
    assert f"{stats['prs']} PRs, {stats['cards']} cards" in built.stdout
    assert stats["cards_by_kind"] == dict(deck["by_kind"])
    assert stats["cards_by_verdict"] == dict(deck["by_verdict"])
    assert stats["cards_by_topic"] == dict(deck["by_topic"])
    assert sum(stats["prs_by_verdict"].values()) == stats["prs"]
    # PRs with no card at all are not in the deck, and stats lists exactly those; every other PR is in the deck.
    per_pr = deck["per_pr"]
    assert all(p["cards"] == 0 for p in stats["prs_with_few_cards"])
    assert len(per_pr) == stats["prs"] - len(stats["prs_with_few_cards"])
    assert not {p["title"] for p in stats["prs_with_few_cards"]} & {html.unescape(s) for s in per_pr}
    lengths = sorted(deck["lengths"])
    answer = stats["answer_length"]
    assert (answer["count"], answer["min"], answer["max"]) == (len(lengths), lengths[0], lengths[-1])
    assert answer["median"] == statistics.median(lengths)
    assert sum(answer["buckets"].values()) == len(lengths)
    assert answer["buckets"]["1-5"] == sum(1 for n in lengths if n <= 5)
    assert answer["buckets"]["36+"] == sum(1 for n in lengths if n > 35)
    # Build's warnings are the stats' warnings.
    assert [line.removeprefix("Warning: ") for line in built.stderr.splitlines()] == stats["warnings"]


def test_decisions_without_card_are_not_in_the_deck(runner: CliRunner, seeds_deck: Path) -> None:
    """A decision listed as producing no card has no note whose source sentence is that decision."""
    stats = json.loads(runner.invoke(cli, ["stats", str(SEEDS), "--json"]).stdout)
    sentences = {text_of(fields[-4]) for _, fields, _, _ in read_apkg(seeds_deck)}
    assert stats["decisions"] > len(stats["decisions_without_card"])
    for decision in stats["decisions_without_card"]:
        assert decision["sentence"] not in sentences


def test_stats_text_for_a_corpus_with_no_decision(runner: CliRunner, tmp_path: Path) -> None:
    """Exact report for one PR whose summary says nothing of what changed and whose review states no decision: no
    card asks "该 PR 做了什么改动？" (it fits any PR of the repository, issue #30), so the PR has no card, and the
    warnings say so, what the review lacks and that it matches no topic of the built-in taxonomy."""
    seed = write_seed(tmp_path, "s.txt", "o/r\n\n一些小改动。\n\n只是换了时间戳格式。\n")
    result = runner.invoke(cli, ["stats", str(seed)])
    assert result.exit_code == 0
    assert result.stdout == f"""\
1 PRs in 1 seed file(s): 0 decisions (0 facts), 0 notes, 0 cards
cards by kind:     none
cards by topic:    none
cards by verdict:  none
PRs by verdict:    unknown 1
answer length (units): min 0 · median 0 · p90 0 · max 0
    1-5                           0
   6-10                           0
  11-20                           0
  21-35                           0
    36+                           0
PRs without a card: 1
  {seed}:3  0 card(s)  一些小改动。
decisions that produced no card: 0
warnings: 4
  {seed}:3: no card for this PR; its review states no design decision deckgen can read (name each decision: 1) 2) …, **名称**: 说明, or 采用 X 而非 Y，以 Z)
  {seed}:5: no reading verdict (精读 / 快速浏览 / 不值得精读) found in the review (say whether the PR is worth reading: 值得精读, 快速浏览 or 不值得精读)
  {seed}:5: no design decision found in the review (name decisions as 1) 2) … or **名称**: 说明, or with connectives such as 采用 X 而非 Y, X，以避免 Y)
  {seed}:3: this PR matches no topic in the built-in taxonomy, so its cards are tagged topic::other; add a keyword for it to a topics.toml beside the seeds
"""


def test_stats_refuses_bad_input_like_build(runner: CliRunner, tmp_path: Path) -> None:
    seed = write_seed(tmp_path, "bad.txt", "o/r\n\n标题\n")
    result = runner.invoke(cli, ["stats", str(seed)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {seed}:3: PR summary without a review paragraph")
