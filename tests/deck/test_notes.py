"""A card rendered as a note: what its fields say on the back of the card, as Anki renders it."""

from __future__ import annotations

import html
import re
from pathlib import Path

from deckgen.deck.notes import note_fields
from deckgen.deck.package import DeckPlan, write_apkg
from deckgen.types import Card, CardKind, Entry, Relation, Verdict
from tests.conftest import AnkiCollection

ENTRY = Entry("o/r", "为调度器引入预分配工作区", "值得精读。采用 `a<b>` 而非 c。", Path("s.txt"), 3, 5)
GLOSSARY_ENTRY = Entry("o/r", "术语表 · deckgen glossary", "[[term]] term = \"DCP\"", Path("glossary.toml"), 7, 7)
GLOSSARY_CARD = Card(entry=GLOSSARY_ENTRY, kind=CardKind.GLOSSARY, key="glossary:term:dcp", prompt="术语「DCP」指什么？",
                     answer="解码上下文并行（Decode Context Parallelism）", cue="r · 术语",
                     sentence="解码阶段把 KV cache 按 token 切到多卡。", line=7, verdict=Verdict.UNKNOWN,
                     relation=Relation.TERM)


def back_text(anki: AnkiCollection, tmp_path: Path, card: Card) -> str:
    """The visible text of *card*'s back as Anki renders it (the style block and tags removed)."""
    out = write_apkg(DeckPlan([card], timestamp=1_700_000_000), tmp_path / f"{card.key}.apkg")
    anki.import_apkg(out)
    (cid,) = anki.col.find_cards("")
    page = anki.col.get_card(cid).answer()
    return html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<style>.*?</style>", "", page, flags=re.S)))


def test_a_glossary_card_has_no_pr_line(anki: AnkiCollection, tmp_path: Path) -> None:
    """A term belongs to no PR: no line of its back is labelled PR, its meaning is 释义, its verdict 术语表."""
    question, answer, cue, summary, sentence, source, verdict, status = note_fields(GLOSSARY_CARD)
    assert summary == "" and verdict == "术语表"
    back = back_text(anki, tmp_path, GLOSSARY_CARD)
    assert "PR" not in back and "deckgen glossary" not in back and "原文" not in back
    assert "释义解码阶段把 KV cache 按 token 切到多卡。" in back
    assert "术语表" in back and "glossary.toml:7" in back


def test_a_pr_card_keeps_its_pr_line(anki: AnkiCollection, tmp_path: Path) -> None:
    card = Card(entry=ENTRY, kind=CardKind.CONTRAST, key="contrast:contrast:c", prompt="用什么替代了「c」？",
                answer="`a<b>`", cue="r · 为调度器引入预分配工作区", sentence="采用 `a<b>` 而非 c", line=5,
                verdict=Verdict.DEEP, relation=Relation.CONTRAST)
    back = back_text(anki, tmp_path, card)
    assert "原文采用 a<b> 而非 c" in back and "PR为调度器引入预分配工作区" in back and "释义" not in back
