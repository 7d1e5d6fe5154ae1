"""The .apkg: stable identity, escaped fields, note types with fixed ids, atomic reproducible writes."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import genanki
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deckgen import BuildOptions
from deckgen.deck import package
from deckgen.deck.notes import card_guid, card_tags, guid_for, note_fields
from deckgen.deck.notetypes import (
    CLOZE_MODEL_ID,
    QA_MODEL_ID,
    cloze_model,
    qa_model,
    schema,
)
from deckgen.deck.package import DeckPlan, write_apkg
from deckgen.errors import OutputError
from deckgen.types import Card, CardKind, Entry, Relation, Verdict
from tests.conftest import FIXTURES, SEEDS, read_apkg

ENTRY = Entry("o/r", "为调度器引入预分配工作区", "值得精读。采用 `a<b>` 而非 c。", Path("s.txt"), 3, 5)
CARD = Card(entry=ENTRY, kind=CardKind.CONTRAST, key="contrast:contrast:c", prompt="用什么替代了「c」？",
            answer="`a<b>`", cue="r · 为调度器引入预分配工作区", sentence="采用 `a<b>` 而非 c", line=5,
            verdict=Verdict.DEEP, relation=Relation.CONTRAST)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=4))
def test_guid_for_is_genankis(parts: list[str]) -> None:
    assert guid_for(*parts) == genanki.guid_for(*parts)


def test_guid_ignores_card_text() -> None:
    """Rewording a question or answer keeps the GUID: Anki updates the note instead of duplicating it."""
    assert card_guid(CARD) == card_guid(replace(CARD, prompt="换个问法？", answer="新答案", line=9))
    assert card_guid(CARD) != card_guid(replace(CARD, key="contrast:contrast:d"))
    assert card_guid(CARD) == genanki.guid_for("deckgen/v1", "o/r", ENTRY.pr_key, "contrast:contrast:c")


def test_fields_are_escaped_html() -> None:
    question, answer, cue, summary, sentence, source, verdict, status = note_fields(CARD)
    assert answer == "<code>a&lt;b&gt;</code>"
    assert summary == "为调度器引入预分配工作区"
    assert source == 'o/r · <span class="where">s.txt:5</span>' and verdict == "精读" and status == ""


def test_tags_are_hierarchical_without_spaces() -> None:
    assert card_tags(CARD) == ["deckgen", "kind::contrast", "rel::contrast", "repo::o::r", "verdict::deep"]


def test_note_types_have_fixed_ids_on_every_field_and_template() -> None:
    for model, model_id in ((qa_model(), QA_MODEL_ID), (cloze_model(), CLOZE_MODEL_ID)):
        assert model.model_id == model_id
        assert all(isinstance(f["id"], int) for f in model.fields)
        assert all(isinstance(t["id"], int) for t in model.templates)
        assert "lang=\"zh-CN\"" in model.templates[0]["qfmt"] and ".nightMode" in model.css
    assert QA_MODEL_ID not in (1607392319,) and len({QA_MODEL_ID, CLOZE_MODEL_ID}) == 2


def test_schema_is_frozen() -> None:
    """Changing a field or template of a note type forks it in every user's collection.

    If this fails, you changed the schema: bump SCHEMA_VERSION, update this test and
    the README's "Note types" section with the import instructions for users.
    """
    assert schema() == {
        "version": 1,
        "models": [
            {"id": 1559912837,
             "fields": [["Question", 1591625101], ["Answer", 1591625102], ["Cue", 1591625103],
                        ["Summary", 1591625104], ["Sentence", 1591625105], ["Source", 1591625106],
                        ["Verdict", 1591625107], ["Status", 1591625108]],
             "templates": [["Recall", 1591625201]]},
            {"id": 2142164388,
             "fields": [["Text", 1315998701], ["Cue", 1315998702], ["Summary", 1315998703],
                        ["Sentence", 1315998704], ["Source", 1315998705], ["Verdict", 1315998706],
                        ["Status", 1315998707]],
             "templates": [["Cloze", 1315998801]]},
        ],
    }


def test_write_is_reproducible_and_compressed(tmp_path: Path) -> None:
    plan = DeckPlan([CARD], timestamp=1_700_000_000)
    a = write_apkg(plan, tmp_path / "a.apkg").read_bytes()
    b = write_apkg(plan, tmp_path / "b.apkg").read_bytes()
    assert a == b
    with zipfile.ZipFile(tmp_path / "a.apkg") as archive:
        assert [i.filename for i in archive.infolist()] == ["collection.anki2", "media"]
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in archive.infolist())
    guid, fields, tags, mid = read_apkg(tmp_path / "a.apkg")[0]
    assert (guid, mid) == (card_guid(CARD), QA_MODEL_ID)


def test_no_temporary_files_left(tmp_path: Path) -> None:
    write_apkg(DeckPlan([CARD], timestamp=1), tmp_path / "deck.apkg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deck.apkg"]


def test_output_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="is a folder"):
        write_apkg(DeckPlan([CARD], timestamp=1), tmp_path)


def _previous_deck(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    from deckgen.pipeline import build_deck

    out = tmp_path / "deck.apkg"
    build_deck([SEEDS], out, options=BuildOptions(timestamp=1_700_000_000))
    return out, {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir())}


def test_an_interrupt_while_the_collection_is_zipped_stops_the_zip_and_keeps_the_previous_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock is written while the collection is zipped in a thread: an interrupt there stops the zip at its
    next chunk, and the build leaves the previous deck and lock as they were, and no temporary file or thread."""
    import threading

    from deckgen.pipeline import build_deck

    out, before = _previous_deck(tmp_path)
    monkeypatch.setattr(package, "_ZIP_CHUNK", 16)  # tens of thousands of chunks: still zipping when interrupted
    zip_ended: list[type[BaseException] | None] = []
    real_zip = package._zip_collection

    def zip_collection(*args: Any) -> None:
        try:
            real_zip(*args)
        except BaseException as exc:
            zip_ended.append(type(exc))
            raise
        zip_ended.append(None)

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(package, "_zip_collection", zip_collection)
    monkeypatch.setattr(package, "_write_lock", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_deck([SEEDS], out, options=BuildOptions(timestamp=1_800_000_000))
    assert zip_ended == [package._Stopped]
    assert {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir())} == before
    assert not [t for t in threading.enumerate() if t.name.startswith("deckgen-zip")]


def test_a_disk_error_while_the_collection_is_zipped_names_the_deck(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An error in the zip's thread is the build's error: a clear message, the previous files kept."""
    import errno
    import os

    from deckgen.pipeline import build_deck

    out, before = _previous_deck(tmp_path)

    def disk_full(header: bytes) -> bytes:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(package, "_as_in_memory", disk_full)
    with pytest.raises(OutputError, match=r"deck\.apkg: writing failed \(No space left on device\); the previous file is unchanged"):
        build_deck([SEEDS], out, options=BuildOptions(timestamp=1_800_000_000))
    assert {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir())} == before


@pytest.mark.parametrize("enabled", [True, False])
def test_a_build_leaves_the_cycle_collector_as_it_found_it(enabled: bool, tmp_path: Path) -> None:
    import gc

    from deckgen.pipeline import build_deck

    seen: list[bool] = []
    real = package.write_apkg
    try:
        gc.enable() if enabled else gc.disable()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("deckgen.pipeline.write_apkg", lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
            build_deck([SEEDS], tmp_path / "deck.apkg", options=BuildOptions(timestamp=1_700_000_000))
        assert seen == [False]  # paused while the build works
        assert gc.isenabled() == enabled
    finally:
        gc.enable()


def test_the_plan_carries_each_cards_lock_note_and_the_deck_is_the_one_lookups_make(tmp_path: Path) -> None:
    """A build hands the plan each card's note in the new lock (from reconcile), so packaging looks none up."""
    from deckgen.deck.package import apkg_bytes
    from deckgen.pipeline import build_deck, prepare_build

    out = tmp_path / "deck.apkg"
    build_deck([SEEDS], out, options=BuildOptions(timestamp=1_700_000_000))
    (tmp_path / "extra.txt").write_text((FIXTURES / "good.txt").read_text("utf-8"), "utf-8")
    prepared = prepare_build([SEEDS, tmp_path / "extra.txt"], out, options=BuildOptions(timestamp=1_800_000_000))  # new notes and old
    plan, lock = prepared.plan, prepared.update.lock
    assert prepared.update.new and prepared.update.unchanged
    assert len(plan.locked) == len(plan.cards)
    assert all(n is lock.note_for(c.entry.pr_key, c.key) for c, n in zip(plan.cards, plan.locked))
    assert apkg_bytes(plan) == apkg_bytes(replace(plan, locked=()))


def test_a_package_of_some_notes_keeps_their_rows_and_adds_the_tags_given(tmp_path: Path) -> None:
    """What a push imports: only the notes asked for, each as the whole package has it (GUID, note id, date, study
    position), with the learner's tags besides its own; obsolete notes only when asked for."""
    from deckgen.deck.package import OBSOLETE_TAG, package_rows
    from deckgen.pipeline import build_deck, prepare_build

    out = tmp_path / "deck.apkg"
    build_deck([SEEDS, FIXTURES / "good.txt"], out, options=BuildOptions(timestamp=1_700_000_000))
    plan = prepare_build([SEEDS], out, options=BuildOptions(timestamp=1_800_000_000)).plan  # good.txt's are obsolete
    rows = list(package_rows(plan))
    live = [r for r in rows if OBSOLETE_TAG not in r.tags]
    gone = [r for r in rows if OBSOLETE_TAG in r.tags]
    assert live and gone
    chosen = {live[-1].guid: ("my::keep",), gone[0].guid: ()}
    some = {r.guid: r for r in package_rows(replace(plan, only=chosen))}
    assert set(some) == set(chosen)
    ours = live[-1]._replace(tags=tuple(sorted({*live[-1].tags, "my::keep"})), model=live[-1].model.model_id)
    assert some[live[-1].guid]._replace(model=some[live[-1].guid].model.model_id) == ours
    kept = some[gone[0].guid]
    assert (kept.fields, kept.tags, kept.nid, kept.mod) == (gone[0].fields, gone[0].tags, gone[0].nid, gone[0].mod)
