"""The lock file: identities, note ids and dates carried from build to build (pure; no seeds, no Anki)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from operator import attrgetter
from pathlib import Path

import genanki
import pytest
from hypothesis import given
from hypothesis import strategies as st

from deckgen.deck.lock import (
    NID_STRIDE,
    BuiltNote,
    Lock,
    LockedNote,
    _plain_note,
    lock_path_for,
    read_lock,
    reconcile,
)
from deckgen.deck.notetypes import (
    CLOZE_MODEL_ID,
    QA_MODEL_ID,
    SCHEMA_VERSION,
    fingerprints,
)
from deckgen.errors import DeckgenError

T = 1_700_000_000
TYPES = fingerprints()
SOURCE = 'o/r · <span class="where">a.txt:3</span>'


def qa(key: str, question: str, answer: str, pr: str = "o/r#aaaa", kind: str = "why", summary: str = "为调度器引入预分配工作区",
       source: str = SOURCE, tags: tuple[str, ...] = ("deckgen", "repo::o::r")) -> BuiltNote:
    fields = (question, answer, "r · 为调度器引入预分配工作区", summary, f"原句：{answer}", source, "精读", "")
    return BuiltNote(pr, key, kind, QA_MODEL_ID, genanki.guid_for("test", pr, key), fields, tags)


def cloze(key: str, text: str, pr: str = "o/r#aaaa") -> BuiltNote:
    fields = (text, "r · 为调度器引入预分配工作区", "为调度器引入预分配工作区", "句子", SOURCE, "精读", "")
    return BuiltNote(pr, key, "cloze", CLOZE_MODEL_ID, genanki.guid_for("test", pr, key), fields, ("deckgen",))


DECK = [
    qa("why:avoid_why:预分配workspace", "预分配 workspace 可以避免什么问题？", "在捕获期间分配显存"),
    qa("how:avoid_how:在捕获期间分配显存", "该 PR 如何避免在捕获期间分配显存？", "预分配 workspace", kind="how"),
    qa("contrast:contrast:torchzeros", "用什么替代了「torch.zeros」？", "torch.empty", kind="contrast"),
    cloze("cloze:采用torchempty而非torchzeros", "采用 {{c1::torch.empty}} 而非 torch.zeros"),
]


def first_lock(notes: list[BuiltNote] = DECK) -> Lock:
    return reconcile(None, notes, TYPES, now=T).lock


def guids(lock: Lock) -> dict[tuple[str, str], str]:
    return {(n.pr, n.key): n.guid for n in lock.notes}


def test_first_build_dates_every_note_now_with_stable_spaced_ids() -> None:
    update = reconcile(None, DECK, TYPES, now=T)
    assert update.first_build and len(update.new) == len(DECK) and update.lock.version == 1
    assert {(n.first_seen, n.changed) for n in update.lock.notes} == {(T, T)}
    nids = [n.nid for n in update.lock.notes]
    assert len(set(nids)) == len(nids) and all(n % NID_STRIDE == 0 and n // 1000 == T for n in nids)
    assert [n.guid for n in update.new] == [n.guid for n in DECK]  # natural GUIDs on first sight


def test_rebuild_without_change_changes_nothing() -> None:
    lock = first_lock()
    update = reconcile(lock, DECK, TYPES, now=T + 500)
    assert update.noop and len(update.unchanged) == len(DECK)
    assert update.lock.to_text() == lock.to_text()


def test_a_change_is_dated_after_everything_in_the_lock_even_when_the_clock_is_behind() -> None:
    lock = first_lock()
    edited = [replace(DECK[0], fields=(DECK[0].fields[0], "捕获期间的显存分配", *DECK[0].fields[2:])), *DECK[1:]]
    update = reconcile(lock, edited, TYPES, now=T - 1000)  # e.g. a fixed SOURCE_DATE_EPOCH
    (change,) = update.changed
    assert change.after.guid == change.before.guid and change.after.nid == change.before.nid
    assert change.after.changed == T + 1 > change.before.changed
    assert change.after.first_seen == T and update.lock.version == 2


def test_moving_an_entry_is_not_a_change() -> None:
    """The source location (file, line) is provenance: a move must not re-date notes and overwrite users' edits."""
    lock = first_lock()
    moved = [replace(n, fields=tuple(f.replace("a.txt:3", "b.txt:40") for f in n.fields)) for n in DECK]
    update = reconcile(lock, list(reversed(moved)), TYPES, now=T + 10)
    assert update.noop and not update.changed
    assert update.lock.to_text() == lock.to_text()


def test_the_repository_and_pr_on_the_source_line_are_content() -> None:
    """What a learner reads on the source line reaches users; only the file and line are provenance."""
    lock = first_lock()
    numbered = [replace(n, fields=tuple(f.replace("o/r · ", "o/r · PR #4412 · ") for f in n.fields)) for n in DECK]
    update = reconcile(lock, numbered, TYPES, now=T + 10)
    assert len(update.changed) == len(DECK) and not update.noop


def test_a_tag_change_is_a_change() -> None:
    lock = first_lock()
    update = reconcile(lock, [replace(DECK[0], tags=("deckgen", "topic::cuda")), *DECK[1:]], TYPES, now=T + 10)
    assert [c.after.tags for c in update.changed] == [("deckgen", "topic::cuda")]


@pytest.mark.parametrize("rewrite", [
    # the question side reworded, the answer kept (the key is made from the question side)
    lambda n: qa("how:avoid_how:捕获时分配显存", "该 PR 如何避免捕获时分配显存？", "预分配 workspace", kind="how"),
    # the answer reworded, the question kept word for word
    lambda n: qa("how:avoid_how:x", "该 PR 如何避免在捕获期间分配显存？", "预先分配 workspace", kind="how"),
    # both sides lightly reworded
    lambda n: qa("how:avoid_how:y", "该 PR 如何避免在图捕获期间分配显存？", "预分配一块 workspace", kind="how"),
], ids=["same-answer", "same-question", "similar"])
def test_a_rekeyed_card_keeps_its_guid(rewrite) -> None:  # type: ignore[no-untyped-def]
    lock = first_lock()
    notes = [DECK[0], rewrite(DECK[1]), *DECK[2:]]
    update = reconcile(lock, notes, TYPES, now=T + 10)
    assert not update.new and not update.obsolete
    (rekey,) = update.rekeyed
    assert rekey.after.guid == DECK[1].guid and rekey.after.key == notes[1].key
    assert update.lock.note_for(notes[1].pr, notes[1].key).nid == rekey.before.nid  # type: ignore[union-attr]
    # Next build: found by its new key directly, nothing moves again.
    assert reconcile(update.lock, notes, TYPES, now=T + 20).noop


def test_a_different_fact_is_a_new_card_and_the_old_one_obsolete() -> None:
    lock = first_lock()
    other = qa("how:avoid_how:重复编译", "该 PR 如何避免重复编译？", "缓存编译结果", kind="how")
    update = reconcile(lock, [DECK[0], other, *DECK[2:]], TYPES, now=T + 10)
    assert [n.guid for n in update.new] == [other.guid]
    assert [n.guid for n in update.obsolete] == [DECK[1].guid]


def test_same_answer_of_another_kind_is_not_the_same_card() -> None:
    lock = first_lock()
    other = qa("why:x:y", "这是什么？", "预分配 workspace", kind="why")
    update = reconcile(lock, [DECK[0], other, *DECK[2:]], TYPES, now=T + 10)
    assert len(update.new) == 1 and len(update.obsolete) == 1


def test_reworded_cloze_keeps_its_guid() -> None:
    lock = first_lock()
    reworded = cloze("cloze:选用torchempty而不是torchzeros", "选用 {{c1::torch.empty}} 而不是 torch.zeros")
    update = reconcile(lock, [*DECK[:3], reworded], TYPES, now=T + 10)
    assert [c.after.guid for c in update.changed] == [DECK[3].guid] and not update.new


def test_corrected_pr_summary_keeps_every_guid() -> None:
    """A summary fix changes the PR key of every card at once; the lock recognises the PR by its cards."""
    lock = first_lock()
    fixed = [replace(n, pr="o/r#bbbb", fields=tuple("为调度器引入预分配的工作区" if f == "为调度器引入预分配工作区" else f
                                                    for f in n.fields)) for n in DECK]
    update = reconcile(lock, fixed, TYPES, now=T + 10)
    assert not update.new and not update.obsolete
    assert {c.after.guid for c in update.changed} == {n.guid for n in DECK}
    assert {c.after.pr for c in update.changed} == {"o/r#bbbb"}


def test_an_unrelated_pr_replacing_a_removed_one_is_new() -> None:
    lock = first_lock()
    other = [qa("why:purpose_why:放宽约束", "为什么要放宽 numpy 约束？", "只排除坏版本", pr="o/r#cccc", summary="放宽 numpy 依赖约束"),
             qa("how:purpose_how:只排除坏版本", "为了只排除坏版本，该 PR 怎么做？", "用 != 精确排除", pr="o/r#cccc",
                kind="how", summary="放宽 numpy 依赖约束")]
    update = reconcile(lock, other, TYPES, now=T + 10)
    assert len(update.new) == 2 and len(update.obsolete) == len(DECK)


def test_removed_card_is_shipped_obsolete_for_the_grace_versions_then_pruned() -> None:
    lock = first_lock()
    rest = DECK[1:]
    update = reconcile(lock, rest, TYPES, now=T + 10, grace=1)
    (gone,) = update.obsolete
    assert (gone.guid, gone.obsolete_version, gone.obsolete_since) == (DECK[0].guid, 2, T + 10)
    assert gone.mod == T + 10 > lock.notes[0].changed  # strictly newer: Anki applies the tag and banner

    # A rebuild with nothing new is not a new version: the obsolete card stays, the bytes stay.
    same = reconcile(update.lock, rest, TYPES, now=T + 20, grace=1)
    assert same.noop and [n.guid for n in same.still_obsolete] == [gone.guid]

    extra = [*rest, qa("why:a:b", "新问题一？", "新答案一")]
    v3 = reconcile(update.lock, extra, TYPES, now=T + 30, grace=1)
    assert v3.lock.version == 3 and [n.guid for n in v3.still_obsolete] == [gone.guid]
    more = [*extra, qa("why:c:d", "新问题二？", "新答案二")]
    v4 = reconcile(v3.lock, more, TYPES, now=T + 40, grace=1)
    assert v4.lock.version == 4 and [n.guid for n in v4.pruned] == [gone.guid]
    assert gone.guid not in {n.guid for n in v4.lock.notes}


def test_prune_drops_only_cards_already_shipped_as_obsolete() -> None:
    lock = first_lock()
    v2 = reconcile(lock, DECK[1:], TYPES, now=T + 10).lock
    update = reconcile(v2, DECK[2:], TYPES, now=T + 20, prune=True)
    assert [n.guid for n in update.pruned] == [DECK[0].guid]
    assert [n.guid for n in update.obsolete] == [DECK[1].guid]  # announced once before it can go


def test_a_card_whose_source_comes_back_is_revived() -> None:
    lock = first_lock()
    v2 = reconcile(lock, DECK[1:], TYPES, now=T + 10).lock
    update = reconcile(v2, DECK, TYPES, now=T + 20)
    (change,) = update.changed
    assert change.before.obsolete and not change.after.obsolete
    assert change.after.changed == T + 20 > change.before.mod


def test_a_new_card_never_takes_a_guid_a_rekeyed_card_holds() -> None:
    lock = first_lock()
    rekeyed = qa("how:avoid_how:捕获时分配显存", "该 PR 如何避免捕获时分配显存？", "预分配 workspace", kind="how")
    v2 = reconcile(lock, [DECK[0], rekeyed, *DECK[2:]], TYPES, now=T + 10).lock
    returning = qa(DECK[1].key, "该 PR 如何避免在捕获期间分配显存？", "一个完全不同的做法", kind="how")
    update = reconcile(v2, [DECK[0], rekeyed, returning, *DECK[2:]], TYPES, now=T + 20)
    (new,) = update.new
    assert new.guid != DECK[1].guid and len({n.guid for n in update.lock.notes}) == len(update.lock.notes)


def test_template_change_dates_the_note_type_not_the_notes() -> None:
    lock = first_lock()
    changed_types = {**TYPES, QA_MODEL_ID: ("new-css-hash", TYPES[QA_MODEL_ID][1])}
    update = reconcile(lock, DECK, changed_types, now=T + 10)
    assert update.notetypes_changed == (QA_MODEL_ID,) and not update.reshaped
    assert update.lock.notetypes[QA_MODEL_ID].changed == T + 10 and not update.changed
    reshaped = reconcile(lock, DECK, {**TYPES, QA_MODEL_ID: ("h", "new-shape")}, now=T + 10)
    assert reshaped.reshaped == (QA_MODEL_ID,)


def test_lock_text_is_stable_sorted_and_one_note_per_line(tmp_path: Path) -> None:
    lock = first_lock()
    text = lock.to_text()
    assert text.startswith("{\n") and text.endswith("}\n")
    data = json.loads(text)
    assert list(data) == sorted(data)
    lines = text.splitlines()
    note_lines = [line for line in lines if line.startswith('{"changed"')]
    assert len(note_lines) == len(DECK) and all(list(json.loads(line.rstrip(","))) == sorted(json.loads(line.rstrip(",")))
                                                for line in note_lines)
    path = tmp_path / "deck.lock.json"
    path.write_text(text, encoding="utf-8")
    assert read_lock(path) == lock
    assert lock_path_for(tmp_path / "deck.apkg") == path
    assert read_lock(tmp_path / "missing.lock.json") is None


def test_a_long_lock_is_one_note_per_line_across_its_chunks(tmp_path: Path) -> None:
    """The notes are written a thousand at a time: the lines where two chunks meet are like every other."""
    template = first_lock().notes[0]
    notes = tuple(replace(template, guid=f"guid{i:05}", key=f"why:k{i:05}", nid=T * 1000 + i * NID_STRIDE)
                  for i in range(2500))
    lock = Lock(3, SCHEMA_VERSION, notes, first_lock().notetypes)
    lines = lock.to_text().splitlines()
    start = lines.index('"notes": [') + 1
    assert lines[start:start + len(notes) + 1] == [*(n.json_line() + "," for n in notes[:-1]), notes[-1].json_line(), "],"]
    path = tmp_path / "deck.lock.json"
    path.write_text(lock.to_text(), encoding="utf-8")
    assert read_lock(path) == lock


def test_lock_order_does_not_depend_on_build_order() -> None:
    """Entries reordered in the seeds: same notes, same lock text (note ids aside, which follow first sight)."""
    a = first_lock().to_text()
    b = reconcile(None, list(reversed(DECK)), TYPES, now=T).lock.to_text()
    strip = lambda text: [{k: v for k, v in json.loads(l.rstrip(",")).items() if k != "nid"}  # noqa: E731
                          for l in text.splitlines() if l.startswith('{"changed"')]
    assert strip(a) == strip(b)


def test_a_damaged_lock_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "deck.lock.json"
    path.write_text('{\n"format": 1,\n"notes": [\n{"guid": \n', encoding="utf-8")
    with pytest.raises(DeckgenError, match=rf"^{path}:5: not valid JSON .*restore it from version control"):
        read_lock(path)
    path.write_text('{"format": 1, "notes": [{}], "notetypes": {}, "schema": 1, "version": 1}', encoding="utf-8")
    with pytest.raises(DeckgenError, match=rf"^{path}: not a deckgen lock file \(missing 'model'\)"):
        read_lock(path)
    note = json.loads(first_lock().to_text())["notes"][0]
    path.write_text(json.dumps({"format": 1, "notes": [{**note, "model": 7}], "notetypes": {}, "schema": 1, "version": 1}),
                    encoding="utf-8")
    with pytest.raises(DeckgenError, match=r"not a deckgen lock file \(bad value: unknown note type 7 for note"):
        read_lock(path)
    path.write_text('{"format": 99}', encoding="utf-8")
    with pytest.raises(DeckgenError, match="lock file format 99; this deckgen reads format 1"):
        read_lock(path)


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)))  # any text a note can hold (not lone surrogates)
_TIME = st.integers(0, 253_402_300_799)


_NOTES = st.builds(LockedNote, guid=_TEXT, pr=_TEXT, key=_TEXT, kind=_TEXT, model=st.sampled_from([QA_MODEL_ID, CLOZE_MODEL_ID]),
                 nid=st.integers(0, 2**53 - 1), hash=_TEXT, first_seen=_TIME, changed=_TIME,
                 fields=st.lists(_TEXT, max_size=8).map(tuple), tags=st.lists(_TEXT, max_size=4).map(tuple),
                 obsolete_version=st.none() | _TIME, obsolete_since=_TIME)


@given(_NOTES)
def test_a_lock_line_is_what_the_json_encoder_writes_and_reads_back(note: LockedNote) -> None:
    """The hand-written line (see LockedNote.json_line) against the json module's: the same text, and read back equal."""
    line = note.json_line()
    assert line == json.dumps(note.to_json(), ensure_ascii=False, sort_keys=True)
    assert LockedNote.from_json(json.loads(line)) == (note if note.obsolete else replace(note, obsolete_since=None))
    # Every line deckgen writes of a current note is read the plain way (else the test below compares nothing).
    assert (_plain_note(json.loads(line)) is None) == note.obsolete


def _typed(note: LockedNote) -> dict[str, object]:
    """A note's attributes with the type of each value and item: 12 == 12.0 == True, but only one is an int."""
    return {name: (value, type(value), tuple(map(type, value)) if isinstance(value, tuple) else ())
            for name, value in vars(note).items()}


def _outcome(read, row):  # type: ignore[no-untyped-def]
    try:
        return _typed(read(row))
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        return type(exc), str(exc)


# Values at and past every limit, and of every JSON type.
_EDGES = [-1, 0, 2**53 - 1, 2**53, 253_402_300_799, 253_402_300_800, True, False, 1.0, 1.5, "12", "x", None, [], {},
          QA_MODEL_ID, float(CLOZE_MODEL_ID), str(QA_MODEL_ID), ["x", 1], ["x", None], {"version": 1, "since": 2}]
_JSON_VALUE = st.sampled_from(_EDGES) | st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=2), max_leaves=6)


def _assert_read_alike(row: dict[str, object]) -> None:
    """from_json (plain when it can) makes the very note, or raises the very error, that the converting reader does."""
    assert _outcome(LockedNote.from_json, row) == _outcome(LockedNote._converted, row), row


def test_each_value_of_a_lock_row_at_its_limits_reads_as_the_converting_reader_reads_it() -> None:
    row = json.loads(first_lock().notes[0].json_line())
    for name in [*row, "obsolete", "extra"]:
        _assert_read_alike({k: v for k, v in row.items() if k != name})
        for value in _EDGES:
            _assert_read_alike({**row, name: value})
            if isinstance(row.get(name), list):
                _assert_read_alike({**row, name: [*row[name], value]})


@given(_NOTES, st.data())
def test_any_lock_row_reads_as_the_converting_reader_reads_it(note: LockedNote, data: st.DataObject) -> None:
    """Rows of any note with values replaced, keys removed or added, list items added."""
    row: dict[str, object] = json.loads(note.json_line())
    for name in data.draw(st.lists(st.sampled_from([*row, "obsolete", "extra"]), max_size=3)):
        action = data.draw(st.sampled_from(["replace", "delete", "item"]))
        if action == "delete":
            row.pop(name, None)
        elif action == "item" and isinstance(row.get(name), list):
            row[name] = [*row[name], data.draw(_JSON_VALUE)]  # type: ignore[misc]
        else:
            row[name] = data.draw(_JSON_VALUE)
    _assert_read_alike(row)


_LOCK_KEY = attrgetter("pr", "key", "guid")
# Few PRs, keys and texts, so that builds share, re-key, reword and drop notes.
_BUILT = st.builds(lambda pr, key, kind, question, answer: qa(key, question, answer, pr=pr, kind=kind),
                   st.sampled_from(["o/r#aaaa", "o/r#bbbb", "o/s#cccc"]), st.sampled_from([f"why:k{i}" for i in range(6)]),
                   st.sampled_from(["why", "how"]), st.sampled_from(["问题一？", "问题二？", "该 PR 如何避免问题一？"]),
                   st.sampled_from(["答案一", "答案二", "预分配 workspace"]))


@given(st.lists(st.tuples(st.lists(_BUILT, max_size=8), st.booleans(), st.integers(0, 2)), min_size=1, max_size=4))
def test_a_lock_holds_what_its_update_reports_in_lock_order(builds: list[tuple[list[BuiltNote], bool, int]]) -> None:
    """Whatever a sequence of builds adds, changes, re-keys, drops and prunes: the new lock holds exactly the notes the
    update reports, once each, sorted as written; every old note is in it or pruned."""
    lock: Lock | None = None
    distinct = True  # no build so far had two notes with one PR and key (which then share a GUID)
    for step, (built, prune, grace) in enumerate(builds):
        update = reconcile(lock, built, TYPES, now=T + 10 * step, grace=grace, prune=prune)
        notes = update.lock.notes
        reported = [*update.new, *(c.after for c in update.changed), *update.unchanged, *update.obsolete,
                    *update.still_obsolete]
        assert Counter(map(LockedNote.json_line, notes)) == Counter(map(LockedNote.json_line, reported))
        assert list(notes) == sorted(notes, key=_LOCK_KEY)
        assert update.lock.to_text() == replace(update.lock, in_lock_order=False).to_text()
        kept = {n.guid for n in notes} | {n.guid for n in update.pruned}
        assert all(n.guid in kept for n in (lock.notes if lock else ()))
        distinct = distinct and len({(n.pr, n.key) for n in built}) == len(built)
        if distinct:
            assert len({n.guid for n in notes}) == len(notes) == len({n.nid for n in notes})
        # Each built note's own note in the new lock, in build order (the plan and package take them from here).
        assert [(n.pr, n.key, n.hash) for n in update.of_built] == [(b.pr, b.key, b.hash) for b in built]
        in_lock = set(map(id, notes))
        assert all(id(n) in in_lock for n in update.of_built)
        if len({(n.pr, n.key) for n in built}) == len(built):
            assert all(n is update.lock.note_for(n.pr, n.key) for n in update.of_built)
        lock = update.lock
