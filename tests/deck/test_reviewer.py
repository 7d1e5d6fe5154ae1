"""The cards as Anki desktop shows them: seeds/ imported into a fresh profile and shown by the real reviewer.

Anki (aqt) runs under ``xvfb-run`` with a small add-on (``tests/desktop/addon``) that shows
chosen cards — Q/A, cloze and glossary, front and back — through the reviewer's own
question/answer display, in the light and dark theme and at two window widths, and reads the
reviewer's computed styles and layout (not pixels, except to count the divider's rows).
Screenshots are left under the pytest tmp folder (``…/reviewer0/shown/shots``) for a person
to look at; ``results.json`` beside them has every measurement.

Skipped where aqt, xvfb-run or Qt's xcb libraries are missing; with DECKGEN_REQUIRE_DESKTOP
set (as in CI) that is a failure instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.desktop import reviewer
from tests.desktop.reviewer import REQUIRE_ENV, require_desktop, run

CHECKS = [
    "every_kind_renders",
    "theme_applied",
    "code_colour_matches_answer",
    "code_no_midword_break",
    "code_word_break_style",
    "answer_divider_single_line",
    "answer_divider_within_column",
    "glossary_not_labelled_pr",
    "cloze_sentence_not_repeated",
    "source_line_readable",
    "no_console_messages",
    "console_capture_works",
    "no_unexpected_dialogs",
]


@pytest.fixture(scope="module", name="shown")
def _shown(seeds_deck: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of the reviewer over the cards of seeds/ that cover every kind and code in answers."""
    require_desktop()
    result = run(seeds_deck, tmp_path_factory.mktemp("reviewer") / "shown")
    status = result["run"]
    assert status["ok"], (f"Anki did not finish: {status['status']}\n{status['error'] or ''}\n"
                          f"log ({result['out']}/anki.log) ends:\n{status['log_tail']}")
    return result


@pytest.mark.parametrize("name", CHECKS)
def test_reviewer_shows(shown: dict[str, Any], name: str) -> None:
    check = shown["checks"][name]
    failures = json.dumps(check["failures"][:6], ensure_ascii=False, indent=1)
    assert check["ok"], (f"{check['description']}: {check.get('failure_count', 0)} of {check['checked']} failed "
                         f"(results and screenshots in {shown['out']})\n{failures}")


def test_screenshots_are_kept_for_a_person(shown: dict[str, Any]) -> None:
    shots = sorted(Path(shown["out"], "shots").rglob("*.png"))
    assert len(shots) == len(shown["renders"]) > 0
    assert all(path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for path in shots)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ldd and Xvfb: Linux only")
def test_missing_qt_libraries_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with aqt and Xvfb but without Qt's xcb libraries is told which ones (ldd's "not found")."""
    plugin = tmp_path / "libqxcb.so"
    plugin.write_bytes(b"")
    monkeypatch.setattr(reviewer, "_qt_binaries", lambda: [plugin])
    monkeypatch.setattr(reviewer, "_installed", lambda module: True)
    monkeypatch.setattr(reviewer.shutil, "which", lambda name: f"/usr/bin/{name}")
    ldd = "\tlibxcb-cursor.so.0 => not found\n\tlibc.so.6 => /lib/libc.so.6\n\tlibxkbcommon-x11.so.0 => not found\n"
    monkeypatch.setattr(reviewer.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, ldd, ""))
    assert reviewer.missing_requirements() == [
        "libqxcb.so needs libraries that are not installed: libxcb-cursor.so.0, libxkbcommon-x11.so.0"]


def test_without_anki_desktop_the_test_is_skipped_or_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reviewer, "missing_requirements", lambda: ["aqt (Anki desktop) is not installed"])
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="aqt .Anki desktop. is not installed"):
        require_desktop()
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE_ENV} is set, but Anki desktop cannot run here"):
        require_desktop()
