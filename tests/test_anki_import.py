"""The deck as a user meets it: imported into a real Anki collection and rendered."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from deckgen.deck.notetypes import CLOZE_MODEL_ID, QA_MODEL_ID
from tests.conftest import AnkiCollection

TAG_RE = re.compile(r"<[^>]+>")


def visible(html: str) -> str:
    """What a person reads: the rendered HTML without its style block and tags."""
    html = re.sub(r"<style>.*?</style>", "", html, flags=re.S)
    return TAG_RE.sub("", html)


def test_seeds_deck_imports_and_renders(anki: AnkiCollection, seeds_deck: Path) -> None:
    log = anki.import_apkg(seeds_deck)
    note_ids = anki.col.find_notes("")
    assert len(log.new) == len(note_ids) > 0
    assert not log.updated and not log.duplicate and not log.conflicting

    per_pr: Counter[str] = Counter()
    for cid in anki.col.find_cards(""):
        card = anki.col.get_card(cid)
        note = card.note()
        question, answer = card.question(), card.answer()
        for html in (question, answer):
            text = visible(html)
            assert "**" not in text and "`" not in text and "{{" not in text, text
        assert note.tags, note.guid
        # every question carries its cue: the repository, and what the PR changes (a headline card: the repository)
        # The headline card, and the summary's own cloze, have the repository alone as their cue.
        shown = visible(question).replace("【vllm】", "").strip()
        summary_card = "kind::headline" in note.tags or all(
            part.strip() in note["Summary"] for part in shown.split("[...]") if part.strip())
        assert "【vllm · " in visible(question) or (summary_card and "【vllm】" in visible(question))
        # a glossary card belongs to no PR: it has no summary, so no line labelled PR
        assert bool(note["Summary"]) == ("kind::glossary" not in note.tags)
        assert note["Source"].startswith("vllm-project/vllm · ")
        if "kind::glossary" not in note.tags:  # glossary cards belong to no single PR
            per_pr[note["Summary"]] += 1
    # Fewer, better cards: no PR gets more than the cap, and a PR whose review states no readable decision none.
    assert 10 <= len(per_pr) <= 16 and max(per_pr.values()) <= 8, per_pr


def test_note_types_and_deck(anki: AnkiCollection, seeds_deck: Path) -> None:
    anki.import_apkg(seeds_deck)
    anki.reopen()
    used = {anki.col.get_note(nid).mid for nid in anki.col.find_notes("")}
    assert used == {QA_MODEL_ID, CLOZE_MODEL_ID}
    names = {d.name for d in anki.col.decks.all_names_and_ids()}
    assert "PR 设计决策::vllm-project/vllm" in names
    css = anki.col.models.get(QA_MODEL_ID)["css"]
    assert ".nightMode" in css and "Noto Sans CJK SC" in css


def test_reimport_of_same_deck_changes_nothing(anki: AnkiCollection, seeds_deck: Path) -> None:
    """The same package twice: every note is a duplicate, nothing new, nothing updated."""
    first = anki.import_apkg(seeds_deck)
    second = anki.import_apkg(seeds_deck)
    assert len(second.duplicate) == len(first.new)
    assert not second.new and not second.updated
