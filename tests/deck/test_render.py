"""The preview renders cards exactly as Anki does: compared with the real `anki` package, card by card."""

from __future__ import annotations

import re
from pathlib import Path

from deckgen import BuildOptions, build_corpus, build_deck
from deckgen.deck.notes import card_guid
from deckgen.deck.render import render_card, render_cloze, render_template
from tests.conftest import SEEDS, AnkiCollection, write_seed

STYLE_RE = re.compile(r"^<style>.*?</style>", re.S)


def assert_renders_like_anki(anki: AnkiCollection, sources: list[Path], tmp_path: Path) -> int:
    """Import the deck built from *sources* and compare every card's question and answer with ours."""
    deck = tmp_path / "deck.apkg"
    build_deck(sources, deck, options=BuildOptions(timestamp=1_700_000_000))
    anki.import_apkg(deck)
    ours = {(card_guid(card), r.ordinal): r for card in build_corpus(sources).cards for r in render_card(card)}
    compared = 0
    for cid in anki.col.find_cards(""):
        card = anki.col.get_card(cid)
        mine = ours.pop((card.note().guid, card.ord + 1))
        assert STYLE_RE.sub("", card.question()) == mine.question
        assert STYLE_RE.sub("", card.answer()) == mine.answer
        compared += 1
    assert not ours, "cards rendered by the preview that Anki does not have"
    return compared


def test_every_seeds_card_renders_like_anki(anki: AnkiCollection, tmp_path: Path) -> None:
    """Q/A and cloze cards of seeds/: identical HTML, question and answer side."""
    assert assert_renders_like_anki(anki, [SEEDS], tmp_path) > 50


def test_hostile_text_renders_like_anki(anki: AnkiCollection, tmp_path: Path) -> None:
    """Markup-like text in the seed (escaped by deckgen) survives the templates the same way in both."""
    seed = write_seed(tmp_path, "h.txt", (
        "o/r\n\n让 `Vec<T>` 与 a && b 的调度器支持 {{c1::x}} 语法。\n\n"
        "值得精读。关键设计：1) 采用 `std::vector<int>` 而非 `T*`，以避免 <script>alert(1)</script> 注入；"
        "2) 通过 `a_b/c.d` 实现 \"引号\" 与 'quote' 的转义；3) 使用 `x & y` 配合 `cfg::{{name}}` 以减少重复分配。\n"))
    assert assert_renders_like_anki(anki, [seed], tmp_path) >= 3


def test_sections_and_cloze_filter() -> None:
    """Sections show only for non-empty fields; inactive deletions stay visible."""
    template = "{{#A}}[{{A}}]{{/A}}{{^B}}no B{{/B}}{{cloze:T}}"
    text = "x {{c1::one}} y {{c2::two::hint}}"
    assert render_template(template, {"A": "", "B": "b", "T": text}, ordinal=2) == (
        'x <span class="cloze-inactive" data-ordinal="1">one</span> y '
        '<span class="cloze" data-cloze="two" data-ordinal="2">[hint]</span>')
    assert render_template(template, {"A": "a", "B": "", "T": ""}) == "[a]no B"
    assert render_cloze(text, 1, "answer").startswith('x <span class="cloze" data-ordinal="1">one</span>')
