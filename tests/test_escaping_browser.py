"""Hostile seed text in the HTML preview, opened in a real browser (Debian's chromium): shown, never run."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from deckgen.cli import cli
from tests.browser import Browser, launch_browser
from tests.conftest import FIXTURES
from tests.test_escaping import LITERALS

# Every element's tag name, and every attribute that could run code or load something.
TAGS_JS = "Array.from(new Set(Array.from(document.querySelectorAll('*')).map(e => e.localName))).sort()"
LIVE_ATTRIBUTES_JS = """Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes)
    .filter(a => a.name.startsWith('on') || /^\\s*javascript:/i.test(a.value) || ['src', 'srcdoc'].includes(a.name))
    .map(a => e.localName + ' ' + a.name + '=' + a.value))"""


@pytest.fixture(scope="module", name="browser")
def _browser() -> Iterator[Browser]:
    browser = launch_browser()
    yield browser
    browser.close()


def preview(browser: Browser, seeds: Path, folder: Path) -> Path:
    """Build and preview *seeds* with the CLI, and open the page (a fresh load: earlier events are dropped)."""
    runner = CliRunner()
    assert runner.invoke(cli, ["build", str(seeds), "-o", str(folder / "deck.apkg")]).exit_code == 0
    page = folder / "preview.html"
    result = runner.invoke(cli, ["preview", str(seeds), "--html", str(page)])
    assert result.exit_code == 0, result.output
    browser.events.clear()
    browser.open(page.as_uri())
    return page


def test_hostile_text_in_the_preview_is_text(browser: Browser, tmp_path: Path) -> None:
    """The page of a hostile seed file has no element or attribute the page of a plain one lacks, and nothing ran."""
    preview(browser, FIXTURES / "good.txt", tmp_path / "plain")
    plain_tags = set(browser.evaluate(TAGS_JS))

    seeds = tmp_path / "seeds"
    seeds.mkdir()
    shutil.copy(FIXTURES / "hostile.txt", seeds / "<img src=x onerror=alert(2)>.txt")
    page = preview(browser, seeds, tmp_path / "hostile")

    assert browser.evaluate("document.body.dataset.ready") == "true"  # the page's own script ran to its end
    assert set(browser.evaluate(TAGS_JS)) <= plain_tags
    assert browser.evaluate(LIVE_ATTRIBUTES_JS) == []
    assert browser.events_named("Page.javascriptDialogOpening") == []  # no alert() ran
    assert browser.events_named("Runtime.exceptionThrown") == []
    assert {e["request"]["url"] for e in browser.events_named("Network.requestWillBeSent")} == {page.as_uri()}
    text = browser.evaluate("document.body.textContent")
    assert [literal for literal in LITERALS if literal not in text] == []
