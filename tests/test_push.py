"""``deckgen push`` as learners meet it: a real Anki desktop (aqt 26.9.3, under Xvfb) running the real AnkiConnect.

Each test starts Anki with a throw-away profile and the add-on (tests/desktop/ankiconnect.py), pushes with the
command line, and reads the collection through Anki's own backend while Anki is stopped, as a learner's study
between pushes is done there too.  Skipped, with the reason, where Anki desktop or the add-on is missing; in
CI (DECKGEN_REQUIRE_DESKTOP) that is a failure.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from deckgen.cli import cli
from deckgen.deck.lock import lock_path_for, read_lock
from deckgen.deck.notetypes import NOTE_TYPE_IDS
from deckgen.deck.package import OBSOLETE_BANNER, OBSOLETE_TAG
from deckgen.source.parse import parse_seed_file
from tests.conftest import SEEDS, AnkiCollection, write_seed
from tests.desktop.ankiconnect import AnkiDesktop, CutOff, free_port
from tests.test_regen import NEW_PRS, answer_good, card_state, change_seeds, copy_seeds, remove_entry

T0 = 1_700_000_000  # the first push


@pytest.fixture(name="anki")
def _anki() -> Iterator[AnkiDesktop]:
    with AnkiDesktop() as desktop:
        yield desktop


def push(runner: CliRunner, seeds: Path, out: Path, url: str, *args: str) -> Result:
    return runner.invoke(cli, ["push", str(seeds), "-o", str(out), "--url", url, *args])


def snapshot(path: Path) -> tuple[object, ...]:
    """Everything of a collection a push may change: notes, cards and reviews, row by row."""
    anki = AnkiCollection(path)
    try:
        db = anki.col.db
        return (db.all("select id, guid, mid, mod, tags, flds from notes order by id"),
                db.all("select id, nid, did, ord, mod, type, queue, due, ivl, reps from cards order by id"),
                db.all("select * from revlog order by id"),
                sorted(d.name for d in anki.col.decks.all_names_and_ids()))
    finally:
        anki.close()


def test_with_anki_not_running_the_push_exits_1_with_one_line_and_writes_nothing(tmp_path: Path,
                                                                                 runner: CliRunner) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens: Anki is not running, or runs without AnkiConnect
    out = tmp_path / "decks" / "deck.apkg"
    result = push(runner, SEEDS, out, url)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: cannot reach AnkiConnect at {url} (")
    assert result.stderr.endswith("): start Anki; if it is running, install the AnkiConnect add-on (Tools → Add-ons → "
                                  "Get Add-ons, code 2055492159) and restart Anki\n")
    assert len(result.stderr.splitlines()) == 1 and not result.stdout
    assert not out.parent.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--check"], "No such option '--check'"),
    (["--topic", "rocm"], "No such option '--topic'"),
    (["--url", "127.0.0.1:8765"], "Invalid value for '--url': '127.0.0.1:8765' is not an http:// or https:// address"),
])
def test_push_takes_builds_deck_options_only(runner: CliRunner, tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(cli, ["push", str(SEEDS), "-o", str(tmp_path / "deck.apkg"), *args])
    assert result.exit_code == 2 and message in result.stderr


def test_study_session_survives_a_push(tmp_path: Path, anki: AnkiDesktop, runner: CliRunner,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The study session of tests/test_regen.py, pushed instead of imported, with the learner's tag (and Anki's
    ``marked``) also on a note the rebuild rewords, and cards moved to a deck of the learner's own."""
    seeds = copy_seeds(tmp_path)
    out = tmp_path / "decks" / "deck.apkg"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(T0))
    anki.start()
    first = push(runner, seeds, out, anki.url)
    assert first.exit_code == 0, first.output
    v1 = read_lock(lock_path_for(out))
    assert v1 is not None
    assert first.stdout.splitlines()[-1] == (f"Pushed to Anki at {anki.url}: {len(v1.notes)} new, 0 updated, "
                                             "0 unchanged, 0 obsolete suspended notes")
    anki.stop()

    rebuild = change_seeds(seeds, out, v1)
    reworded, new_answer, removed, unchanged = rebuild.reworded, rebuild.new_answer, rebuild.removed, rebuild.unchanged(v1)

    # The study session, in the collection the push made: reviews, the learner's tags, a card moved away.
    collection = AnkiCollection(anki.collection)
    col = collection.col
    nid_of = {n.guid: col.db.scalar("select id from notes where guid=?", n.guid) for n in v1.notes}
    assert None not in nid_of.values() and col.note_count() == len(v1.notes)
    assert {col.models.get(mid)["name"] for mid in NOTE_TYPE_IDS} == {"deckgen Q/A", "deckgen Cloze"}  # the .apkg's ids
    reviewed = [col.card_ids_of_note(nid_of[n.guid])[0] for n in (reworded, removed[0], unchanged[0], unchanged[-1])]
    for cid in reviewed:
        answer_good(collection, cid)
    states = {cid: card_state(collection, cid) for cid in reviewed}
    for guid, tags in ((reworded.guid, ["my::keep", "marked"]), (unchanged[1].guid, ["my::keep"])):
        note = col.get_note(nid_of[guid])
        for tag in tags:
            note.add_tag(tag)
        col.update_note(note)
    mine = col.decks.id("我的牌组")
    moved = [col.card_ids_of_note(nid_of[n.guid])[0] for n in (reworded, unchanged[2])]
    col.set_deck(moved, mine)
    collection.close()
    before = snapshot(anki.collection)

    # The rebuild comes after the study session: its changes are newer than the learner's edits.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(time.time()) + 60))
    anki.start()
    dry = push(runner, seeds, out, anki.url, "--dry-run")
    assert dry.exit_code == 0, dry.output
    lines = dry.stdout.splitlines()
    anki.stop()
    assert snapshot(anki.collection) == before, "--dry-run changed the collection"
    assert read_lock(lock_path_for(out)) == v1, "--dry-run wrote the lock file"
    counts = {line.split()[0]: int(line.split()[1]) for line in lines[1:] if line.startswith("  ") and
              line.split()[0] in ("new", "update", "edited", "unchanged", "suspend")}
    assert counts["edited"] == 0

    anki.start()
    second = push(runner, seeds, out, anki.url)
    assert second.exit_code == 0, second.output
    anki.stop()
    check = runner.invoke(cli, ["build", "--check", str(seeds), "-o", str(out)])
    assert check.exit_code == 0, check.output  # the push wrote what a build writes
    v2 = read_lock(lock_path_for(out))
    assert v2 is not None and v2.version == 2
    new_guids = {n.guid for n in v2.notes if n.pr in rebuild.new_prs}
    obsolete = [n for n in v2.notes if n.obsolete]  # the removed entry's, and a glossary card it alone used
    assert {n.guid for n in removed} <= {n.guid for n in obsolete}
    assert second.stdout.splitlines()[-1] == (
        f"Pushed to Anki at {anki.url}: {len(new_guids)} new, {counts['update']} updated, "
        f"{counts['unchanged']} unchanged, {len(obsolete)} obsolete suspended notes")
    assert counts["new"] == len(new_guids) > 0 and counts["suspend"] == len(obsolete)

    collection = AnkiCollection(anki.collection)
    col = collection.col
    try:
        guid_to_nid = dict(col.db.all("select guid, id from notes"))
        # New notes are added, with the GUIDs the .apkg gives them.
        assert new_guids <= set(guid_to_nid)
        # The reworded note: updated in place, the learner's tags and Anki's "marked" kept, deckgen's refreshed.
        note = col.get_note(nid_of[reworded.guid])
        assert new_answer in note["Answer"]
        after = next(n for n in v2.notes if n.guid == reworded.guid)
        assert set(note.tags) == {*after.tags, "my::keep", "marked"}
        # The unchanged note keeps the learner's tag; moved cards stay in the learner's deck.
        assert "my::keep" in col.get_note(nid_of[unchanged[1].guid]).tags
        assert {col.get_card(cid).did for cid in moved} == {mine}
        # Reviews and scheduling kept; the removed entry's reviewed card is suspended, nothing else about it moved.
        assert col.db.scalar("select count() from revlog") == len(reviewed)
        for cid in reviewed:
            nid, ctype, queue, ivl, due, reps, did = card_state(collection, cid)
            was = states[cid]
            assert (nid, ctype, ivl, due, reps) == (was[0], was[1], was[3], was[4], was[5])
            assert queue == (-1 if cid == reviewed[1] else was[2])
            assert did == (mine if cid in moved else was[6])
        # The removed entry's notes: tagged, their banner on, every card suspended.
        for gone in obsolete:
            obsolete = col.get_note(nid_of[gone.guid])
            assert OBSOLETE_TAG in obsolete.tags and OBSOLETE_BANNER in col.get_card(obsolete.card_ids()[0]).question()
            assert {col.get_card(cid).queue for cid in obsolete.card_ids()} == {-1}
        # No duplicates: one note per GUID, and the live notes are exactly the deck's.
        assert col.db.scalar("select count(distinct guid) from notes") == col.note_count() == len(v2.notes)
        live = {n.guid for n in v2.notes if not n.obsolete}
        assert {g for g, nid in guid_to_nid.items() if OBSOLETE_TAG not in col.get_note(nid).tags} == live
        # The same deck imported afterwards as an .apkg adds nothing and updates nothing.
        log = collection.import_apkg(out)
        assert not log.new and not log.updated and not log.conflicting
        assert col.note_count() == len(v2.notes)
    finally:
        collection.close()


def test_delete_obsolete_deletes_the_removed_entrys_notes(tmp_path: Path, anki: AnkiDesktop, runner: CliRunner) -> None:
    seeds = copy_seeds(tmp_path)
    out = tmp_path / "deck.apkg"
    anki.start()
    assert push(runner, seeds, out, anki.url).exit_code == 0
    victim = parse_seed_file(sorted(seeds.glob("*.txt"))[0])[0]
    remove_entry(sorted(seeds.glob("*.txt"))[0], victim.title_line)
    result = push(runner, seeds, out, anki.url, "--delete-obsolete")
    assert result.exit_code == 0, result.output
    anki.stop()
    lock = read_lock(lock_path_for(out))
    assert lock is not None
    gone = {n.guid for n in lock.notes if n.obsolete}
    assert gone and result.stdout.splitlines()[-1].endswith(f", {len(gone)} obsolete deleted notes")
    collection = AnkiCollection(anki.collection)
    try:
        held = {guid for (guid,) in collection.col.db.all("select guid from notes")}
        assert held == {n.guid for n in lock.notes if not n.obsolete}
        assert not collection.col.find_notes(f"tag:{OBSOLETE_TAG}")
    finally:
        collection.close()


def test_a_push_cut_short_is_completed_by_the_next(tmp_path: Path, anki: AnkiDesktop, runner: CliRunner,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Anki quits after the second of several packages: the push exits 1, and the next one sends the rest."""
    from deckgen.push import send

    monkeypatch.setattr(send, "NOTES_PER_PACKAGE", 10)
    seeds = copy_seeds(tmp_path)
    out = tmp_path / "deck.apkg"
    anki.start()
    with CutOff(anki, after=2) as cut:
        cut_short = push(runner, seeds, out, cut.url)
    assert cut_short.exit_code == 1
    lock = read_lock(lock_path_for(out))
    assert lock is not None and len(lock.notes) > 20
    assert cut_short.stderr.startswith(f"Error: cannot reach AnkiConnect at {cut.url} (")
    assert cut_short.stderr.endswith(f"(the push stopped after 20 of {len(lock.notes)} changes; what it sent is in "
                                     "the collection, and the next deckgen push sends the rest)\n")
    assert "Traceback" not in cut_short.output
    assert snapshot(anki.collection)[0] and len(snapshot(anki.collection)[0]) == 20  # type: ignore[arg-type]

    anki.start()
    again = push(runner, seeds, out, anki.url)
    assert again.exit_code == 0, again.output
    assert again.stdout.splitlines()[-1] == (f"Pushed to Anki at {anki.url}: {len(lock.notes) - 20} new, 0 updated, "
                                             "20 unchanged, 0 obsolete suspended notes")
    anki.stop()
    collection = AnkiCollection(anki.collection)
    try:
        col = collection.col
        assert col.db.scalar("select count(distinct guid) from notes") == col.note_count() == len(lock.notes)
        assert {guid for (guid,) in col.db.all("select guid from notes")} == {n.guid for n in lock.notes}
        log = collection.import_apkg(out)
        assert not log.new and not log.updated and not log.conflicting
    finally:
        collection.close()


@pytest.fixture(name="guarded")
def _guarded(tmp_path: Path) -> Iterator[AnkiDesktop]:
    """Anki whose AnkiConnect wants the API key "sesame" and says it speaks API version 5, holding a first deck."""
    with AnkiDesktop(apiKey="sesame", apiVersion=5) as desktop:
        yield desktop


def test_failures_found_before_sending_change_nothing(tmp_path: Path, guarded: AnkiDesktop, runner: CliRunner,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, a wrong key, too old an AnkiConnect: exit 1 with one line, no deck, no lock file, the collection as it was."""
    seeds = copy_seeds(tmp_path)
    collection = AnkiCollection(guarded.collection)
    collection.import_apkg(seeds_apkg(tmp_path))
    collection.close()
    before = snapshot(guarded.collection)
    out = tmp_path / "out" / "deck.apkg"
    url = guarded.url
    guarded.start()
    key_hint = ("pass the key from AnkiConnect's config (Tools → Add-ons → AnkiConnect → Config, \"apiKey\") with "
                "--api-key or DECKGEN_ANKICONNECT_KEY\n")
    no_key = push(runner, seeds, out, url)
    wrong_key = push(runner, seeds, out, url, "--api-key", "open")
    monkeypatch.setenv("DECKGEN_ANKICONNECT_KEY", "sesame")
    too_old = push(runner, seeds, out, url)
    guarded.stop()
    assert (no_key.exit_code, wrong_key.exit_code, too_old.exit_code) == (1, 1, 1)
    assert no_key.stderr == f"Error: AnkiConnect at {url} wants an API key: {key_hint}"
    assert wrong_key.stderr == f"Error: AnkiConnect at {url} refused the API key: {key_hint}"
    assert too_old.stderr == (f"Error: AnkiConnect at {url} speaks API version 5; deckgen needs 6 or newer: update the "
                              "add-on (Tools → Add-ons → AnkiConnect → Check for Updates) and restart Anki\n")
    assert not out.parent.exists()
    assert snapshot(guarded.collection) == before


def test_a_note_type_changed_in_anki_stops_the_push(tmp_path: Path, anki: AnkiDesktop, runner: CliRunner) -> None:
    """A learner added a field to deckgen's Q/A note type: the push says so and sends nothing."""
    from deckgen.deck.notetypes import QA_MODEL_ID

    seeds = copy_seeds(tmp_path)
    collection = AnkiCollection(anki.collection)
    collection.import_apkg(seeds_apkg(tmp_path))
    models = collection.col.models
    notetype = models.get(QA_MODEL_ID)
    models.add_field(notetype, models.new_field("我的笔记"))
    models.update_dict(notetype)
    collection.close()
    write_seed(seeds, "zz_new_prs.txt", NEW_PRS)
    before = snapshot(anki.collection)
    out = tmp_path / "out" / "deck.apkg"
    anki.start()
    result = push(runner, seeds, out, anki.url)
    anki.stop()
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: the note type 'deckgen Q/A' in Anki has fields Question, Answer, Cue, "
                                    "Summary, Sentence, Source, Verdict, Status, 我的笔记; this deck's are Question, "
                                    "Answer, Cue, Summary, Sentence, Source, Verdict, Status: nothing was pushed.")
    assert len(result.stderr.splitlines()) == 1
    assert not out.parent.exists()
    assert snapshot(anki.collection) == before


def seeds_apkg(tmp_path: Path) -> Path:
    """The deck of seeds/ as a learner imported it before pushing."""
    from deckgen import BuildOptions, build_deck

    deck = tmp_path / "imported" / "seeds.apkg"
    build_deck([SEEDS], deck, BuildOptions(timestamp=T0))
    return deck


def test_a_big_push_draws_a_bar_on_a_terminal(tmp_path: Path, anki: AnkiDesktop) -> None:
    from tests.test_progress import ENTRIES, run_on_terminal

    entries = "".join(f"为模块 {n} 引入缓存。\n\n值得精读。采用分段缓存 S{n} 而非全局缓存 G{n}，以避免锁竞争 L{n}。\n\n"
                      for n in range(ENTRIES))
    seeds = write_seed(tmp_path, "big.txt", f"o/r\n\n{entries}")
    anki.start()
    code, stdout, terminal = run_on_terminal(["push", str(seeds), "-o", str(tmp_path / "deck.apkg"), "--url", anki.url])
    assert code == 0, terminal
    assert "Pushing to Anki" in terminal and "100%" in terminal
    from deckgen.pipeline import build_corpus

    notes = len(build_corpus([seeds]).cards)  # every note is new to an empty collection
    assert notes >= ENTRIES and stdout.splitlines()[-1].startswith(f"Pushed to Anki at {anki.url}: {notes} new")
