"""The HTML preview in a real headless browser (Debian's chromium): every card rendered, no script error, no network."""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from deckgen.cli import cli
from deckgen.deck.notetypes import CLOZE_MODEL_ID
from tests.browser import Browser, launch_browser
from tests.conftest import ROOT, SEEDS, read_apkg


def deck_card_count(apkg: Path) -> int:
    """Anki cards in a written deck: one per Q/A note, one per distinct deletion number of a cloze note."""
    return sum(len(set(re.findall(r"\{\{c(\d+)::", fields[0]))) if mid == CLOZE_MODEL_ID else 1
               for _, fields, _, mid in read_apkg(apkg))


def css_colour(selector: str, prop: str) -> str:
    """A colour from the templates/style.css rule whose selector list starts with *selector*, as rgb(r, g, b)."""
    css = (ROOT / "templates" / "style.css").read_text("utf-8")
    body = re.search(rf"(?m)^{re.escape(selector)}[\s,][^{{]*\{{([^}}]*)\}}", css).group(1)  # type: ignore[union-attr]
    value = re.search(rf"(?<![-\w]){prop}:\s*#([0-9a-fA-F]{{6}})", body).group(1)  # type: ignore[union-attr]
    return "rgb({}, {}, {})".format(*(int(value[i : i + 2], 16) for i in (0, 2, 4)))


@pytest.fixture(name="browser", scope="module")
def _browser() -> Iterator[Browser]:
    browser = launch_browser()
    yield browser
    browser.close()


@pytest.fixture(name="page", scope="module")
def _page(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """seeds/ built to a deck and previewed to a page by the CLI, the page opened in the browser."""
    folder = tmp_path_factory.mktemp("preview")
    runner = CliRunner()
    assert runner.invoke(cli, ["build", str(SEEDS), "-o", str(folder / "deck.apkg")]).exit_code == 0
    result = runner.invoke(cli, ["preview", str(SEEDS), "--html", str(folder / "preview.html")])
    assert result.exit_code == 0, result.output
    browser.open((folder / "preview.html").as_uri())
    return folder, deck_card_count(folder / "deck.apkg")


def test_one_rendered_card_per_deck_card_and_no_errors(browser: Browser, page: tuple[Path, int]) -> None:
    """Each card of the deck is on the page with a rendered question (cue + prompt) and answer; nothing failed."""
    folder, cards = page
    assert browser.evaluate("document.body.dataset.ready") == "true"  # the page's script ran to its end
    rendered = browser.evaluate("""Array.from(document.querySelectorAll('article.dg-card')).filter(a =>
        a.querySelector('.dg-front > .card .cue').innerText.trim() &&
        a.querySelector('.dg-front > .card').offsetHeight > 0 &&
        a.querySelector('.dg-back > .card hr#answer') &&
        a.querySelector('.dg-back > .card .meta .source').textContent.trim()).length""")
    assert rendered == browser.evaluate("document.querySelectorAll('article.dg-card').length") == cards > 0
    assert browser.evaluate("document.getElementById('dg-count').textContent") == f"{cards} / {cards}"
    shot = browser.screenshot(folder / "preview.png")
    png = shot.read_bytes()
    width, height = struct.unpack(">II", png[16:24])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and width == 1200 and height > 600
    assert browser.events_named("Runtime.exceptionThrown") == []
    assert [e for e in browser.events_named("Runtime.consoleAPICalled") if e["type"] in ("error", "assert")] == []
    assert [e["entry"] for e in browser.events_named("Log.entryAdded") if e["entry"]["level"] == "error"] == []
    requested = {e["request"]["url"] for e in browser.events_named("Network.requestWillBeSent")}
    assert requested == {(folder / "preview.html").as_uri()}


def test_night_mode_applies_the_templates_night_styles(browser: Browser, page: tuple[Path, int]) -> None:
    """The switch puts Anki's nightMode classes on the page: cards take .nightMode colours from style.css."""
    background = "getComputedStyle(document.querySelector('.dg-front > .card')).backgroundColor"
    assert browser.evaluate(background) == css_colour(".card", "background-color")
    browser.evaluate("document.getElementById('dg-night').click()")
    assert browser.evaluate(background) == css_colour(".nightMode.card", "background-color")
    assert browser.evaluate("getComputedStyle(document.querySelector('.dg-front .cue')).color") == css_colour(
        ".nightMode .cue", "color")
    browser.screenshot(page[0] / "preview-night.png")
    browser.evaluate("document.getElementById('dg-night').click()")
    assert browser.evaluate(background) == css_colour(".card", "background-color")


def test_front_back_toggle_and_card_flip(browser: Browser, page: tuple[Path, int]) -> None:
    """The toggle shows every answer side; clicking one card flips just that card."""
    visible = "Array.from(document.querySelectorAll('{}')).filter(e => e.offsetHeight > 0).length"
    cards = page[1]
    assert (browser.evaluate(visible.format(".dg-front")), browser.evaluate(visible.format(".dg-back"))) == (cards, 0)
    browser.evaluate("document.getElementById('dg-side').click()")
    assert (browser.evaluate(visible.format(".dg-front")), browser.evaluate(visible.format(".dg-back"))) == (0, cards)
    assert browser.evaluate(visible.format(".dg-back .answer, .dg-back .cloze")) >= cards
    browser.evaluate("document.getElementById('dg-side').click()")
    browser.evaluate("document.querySelector('article.dg-card').click()")
    assert browser.evaluate(visible.format(".dg-back")) == 1
    browser.evaluate("document.querySelector('article.dg-card').click()")
    assert browser.evaluate(visible.format(".dg-back")) == 0


def test_search_box_filters_cards_and_groups(browser: Browser, page: tuple[Path, int]) -> None:
    """Typing in the search box keeps exactly the cards containing the text; empty groups disappear."""
    def search(text: str) -> None:
        browser.evaluate(f"(s => {{ s.value = {text!r}; s.dispatchEvent(new Event('input')); }})"
                         "(document.getElementById('dg-search'))")

    search("LRU_CACHE")
    shown = browser.evaluate("Array.from(document.querySelectorAll('article.dg-card')).filter(a => !a.hidden)"
                             ".map(a => a.textContent.toLowerCase().includes('lru_cache'))")
    hidden = browser.evaluate("Array.from(document.querySelectorAll('article.dg-card')).filter(a => a.hidden)"
                              ".map(a => a.textContent.toLowerCase().includes('lru_cache'))")
    assert shown and all(shown) and not any(hidden)
    assert browser.evaluate("document.getElementById('dg-count').textContent") == f"{len(shown)} / {page[1]}"
    visible_prs = browser.evaluate("Array.from(document.querySelectorAll('.dg-pr')).filter(s => !s.hidden).length")
    assert 1 <= visible_prs < browser.evaluate("document.querySelectorAll('.dg-pr').length")
    search("")
    assert browser.evaluate("document.querySelectorAll('article.dg-card[hidden]').length") == 0
