"""Hostile seed text reaches the cards as text: imported into a real Anki collection, nothing in it runs."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from deckgen import BuildOptions, build_deck
from deckgen.deck.notetypes import CLOZE_MODEL_ID, QA_MODEL_ID
from deckgen.deck.package import DeckPlan, write_apkg
from deckgen.text.markup import deletion, escape, sanitize_html
from deckgen.types import Card, CardKind, Entry, Relation, Verdict
from tests.conftest import FIXTURES, AnkiCollection

HOSTILE = FIXTURES / "hostile.txt"
# What Anki's own templates and deckgen's templates and markup may put on a card; nothing else.
ALLOWED_TAGS = {"div", "span", "hr", "b", "code", "style"}
ALLOWED_ATTRIBUTES = {"class", "lang", "id", "data-cloze", "data-ordinal"}
# Every one of these is in tests/fixtures/hostile.txt and must be readable, as written, on some card.
LITERALS = [
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<svg onload=alert(1)>",
    '<a href="javascript:alert(1)">链接</a>', '<iframe src="javascript:alert(1)"></iframe>',
    '<b onmouseover="alert(1)">粗体</b>', "Map<T>", "std::vector<int>", "a<b>", " & ", "{{c1::泄漏}}", "与 }} 问题",
    "{{Front}}", "a::b", "{{c2::跳转}}", "torch::Tensor", "[sound:evil.mp3]", r"\(\href{javascript:alert(1)}{x}\)",
    "[latex]x[/latex]", r"\[y\]", "[$]z[/$]",
]
MATH_DELIMITERS = re.compile(r"\\[()\[\]]")


class RenderedCard(HTMLParser):
    """The tags, attributes and text nodes of a card as Anki renders it (the style block left out)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.texts: list[str] = []
        self._in_style = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if not self._in_style:
            self.texts.append(data)

    @property
    def visible(self) -> str:
        return "".join(self.texts)


def rendered(anki: AnkiCollection) -> list[tuple[object, RenderedCard, RenderedCard]]:
    cards = [anki.col.get_card(cid) for cid in anki.col.find_cards("")]
    return [(card, RenderedCard(card.question()), RenderedCard(card.answer())) for card in cards]


def assert_inert(card: object, page: RenderedCard) -> None:
    """No tag, attribute, Anki media tag or MathJax delimiter that corpus text could have brought in."""
    for tag, attrs in page.tags:
        assert tag in ALLOWED_TAGS, (tag, attrs)
        for name, value in attrs:
            assert name in ALLOWED_ATTRIBUTES, (tag, name, value)
    # MathJax matches math only inside one run of text between elements.
    assert not any(MATH_DELIMITERS.search(text) for text in page.texts), page.texts
    assert not card.question_av_tags() and not card.answer_av_tags()  # type: ignore[attr-defined]


@pytest.fixture(name="hostile_deck")
def _hostile_deck(tmp_path: Path) -> tuple[Path, int]:
    # The file name is hostile too: it is shown on every card as the source.
    seed = tmp_path / "seeds" / "<img src=x onerror=alert(2)>[sound:x.mp3].txt"
    seed.parent.mkdir()
    shutil.copy(HOSTILE, seed)
    report = build_deck([seed.parent], tmp_path / "hostile.apkg", options=BuildOptions(timestamp=1_700_000_000))
    return report.output, report.cards


def test_hostile_text_is_shown_as_text_and_nothing_runs(anki: AnkiCollection, hostile_deck: tuple[Path, int]) -> None:
    """<script>, on*= handlers, javascript: URLs, Anki media tags and MathJax from seeds are all plain text on the card."""
    deck, expected_cards = hostile_deck
    anki.import_apkg(deck)
    pages = rendered(anki)
    assert len(pages) == expected_cards > 0
    text = ""
    for card, question, answer in pages:
        assert_inert(card, question)
        assert_inert(card, answer)
        text += question.visible + answer.visible
    missing = [literal for literal in LITERALS if literal not in text]
    assert not missing
    assert "<img src=x onerror=alert(2)>[sound:x.mp3].txt" in text


def test_cloze_syntax_in_seeds_makes_no_extra_cloze_cards(anki: AnkiCollection, hostile_deck: tuple[Path, int]) -> None:
    """{{c1::…}} / {{c2::…}} in seed text never become deletions: each cloze card is one of deckgen's own."""
    deck, _ = hostile_deck
    anki.import_apkg(deck)
    for card, question, answer in rendered(anki):
        if card.note().note_type()["type"] != 1:  # type: ignore[attr-defined]
            continue
        ordinals = {value for tag, attrs in question.tags for name, value in attrs if name == "data-ordinal"}
        assert ordinals == {str(card.ord + 1)}  # type: ignore[attr-defined]


ENTRY = Entry("o/r", "修复 a::b 的解析", "值得精读。用 `torch::Tensor` 替代 `Vec<T>`。", Path("s.txt"), 3, 5)


def test_double_colon_inside_a_deletion_is_not_a_hint(anki: AnkiCollection, tmp_path: Path) -> None:
    """Clozing `torch::Tensor` blanks it whole: Anki would otherwise show "Tensor" as the hint and reveal only "torch"."""
    prompt = "用 " + deletion(1, "`torch::Tensor`") + " 替代 `Vec<T>`，而不是 a::b 或 {{c2::伪造}}"
    card = Card(entry=ENTRY, kind=CardKind.CLOZE, key="cloze:torch", prompt=prompt, answer="`torch::Tensor`",
                cue="r · 修复 a::b 的解析", sentence="用 `torch::Tensor` 替代 `Vec<T>`", line=5,
                verdict=Verdict.DEEP, relation=Relation.TERM)
    out = write_apkg(DeckPlan([card, replace(card, key="cloze:other")], timestamp=1), tmp_path / "cloze.apkg")
    anki.import_apkg(out)
    pages = rendered(anki)
    assert len(pages) == 2
    for card_, question, answer in pages:
        assert_inert(card_, question)
        assert "用 [...] 替代 Vec<T>，而不是 a::b 或 {{c2::伪造}}" in question.visible
        assert "Tensor" not in question.visible.split("替代")[0]
        assert "用 torch::Tensor 替代 Vec<T>，而不是 a::b 或 {{c2::伪造}}" in answer.visible


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("[sound:a.mp3]", "&#91;sound:a.mp3]"),
        (r"\(x\) \[y\]", r"\<span></span>(x\<span></span>) \<span></span>&#91;y\<span></span>]"),
        ("{{c1::x}}", "&#123;&#123;c1::x&#125;&#125;"),
        ("a\x1fb\x00c", "a\ufffdb\ufffdc"),
        ("bad-\udcff-name", "bad-\ufffd-name"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),
    ],
    ids=["anki-media-tag", "mathjax", "cloze", "field-separator", "surrogate", "whitespace-kept"],
)
def test_escape_neutralises_anki_markup(text: str, html: str) -> None:
    assert escape(text) == html


def test_lock_file_cannot_smuggle_markup_onto_obsolete_cards(anki: AnkiCollection, tmp_path: Path) -> None:
    """The lock file is input too: an obsolete note's fields come from it, and an edited one stays inert text."""
    out = tmp_path / "deck.apkg"
    build_deck([FIXTURES / "good.txt"], out, options=BuildOptions(timestamp=1_600_000_000))
    lock = out.with_suffix(".lock.json")
    data = json.loads(lock.read_text(encoding="utf-8"))
    planted = []
    qa = next(note for note in data["notes"] if note["model"] == QA_MODEL_ID)
    # One note of each note type: a cloze one made from the Q/A note (a fixture's deck need not have a cloze card).
    cloze = dict(qa, kind="cloze", model=CLOZE_MODEL_ID, fields=[qa["fields"][0], *qa["fields"][2:]])
    for index, note in enumerate([cloze, qa]):
        fake = dict(note, key=f"{note['kind']}:gone{index}", guid=f"planted-{index}", nid=note["nid"] + 999 + index)
        fake["fields"] = ["<img src=x onerror=alert(1)>{{c1::torch::Tensor}}" if note["kind"] == "cloze" else
                          "<script>alert(2)</script> [sound:x.mp3]", "\\(\\href{javascript:alert(3)}{x}\\) }}",
                          *note["fields"][2:]]
        fake["tags"] = [*note["tags"], "bad tag"]
        planted.append(fake)
    data["notes"].extend(planted)
    lock.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    build_deck([FIXTURES / "good.txt"], out, options=BuildOptions(timestamp=1_700_000_000))

    anki.import_apkg(out)
    text = ""
    for card, question, answer in rendered(anki):
        assert_inert(card, question)
        assert_inert(card, answer)
        text += question.visible + answer.visible
    for literal in ("<img src=x onerror=alert(1)>", "<script>alert(2)</script> [sound:x.mp3]",
                    "\\(\\href{javascript:alert(3)}{x}\\) }}", "torch::Tensor"):
        assert literal in text
    planted_ids = anki.col.find_notes("tag:bad_tag")
    assert len(planted_ids) == 2
    assert all("deckgen::obsolete" in anki.col.get_note(nid).tags for nid in planted_ids)


def test_sanitizing_deckgen_s_own_fields_changes_nothing(seeds_deck: Path) -> None:
    """Read back from the lock file, every field deckgen wrote is kept byte for byte (no churn in users' notes)."""
    data = json.loads(seeds_deck.with_suffix(".lock.json").read_text(encoding="utf-8"))
    fields = [(field, note["model"] == CLOZE_MODEL_ID) for note in data["notes"] for field in note["fields"]]
    assert len(fields) > 100
    assert [f for f, cloze in fields if sanitize_html(f, cloze=cloze) != f] == []
