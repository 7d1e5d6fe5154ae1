"""Regeneration as users live it: study a deck, rebuild it from changed seeds, import again (real `anki`)."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from deckgen import BuildOptions, build_deck
from deckgen.cli import cli
from deckgen.deck.lock import Lock, LockedNote, lock_path_for, named_fields, read_lock
from deckgen.deck.package import OBSOLETE_BANNER, OBSOLETE_TAG
from deckgen.pipeline import prepare_build
from deckgen.report.plan import plan_deck
from deckgen.source.parse import parse_seed_file
from tests.conftest import SEEDS, AnkiCollection, write_seed

T0 = 1_700_000_000  # first build
T1 = 1_700_100_000  # the rebuild, a day later

NEW_PRS = """vllm-project/vllm

为前缀缓存引入分层淘汰策略，降低长上下文场景的缓存抖动。

这是一个值得精读的 PR。关键设计决策：1) 采用按访问频率分层的淘汰队列而非单一 LRU 队列，以避免热点前缀被长请求挤出；2) 通过引用计数实现缓存块的安全复用；3) 在调度器中预留水位线以尽早触发回收。

为 OpenAI 兼容服务器添加请求级超时，防止慢请求占满工作线程。

快速浏览即可。设计上值得注意：1) 采用 `asyncio.wait_for` 包装生成调用而非在引擎内部轮询，以保持引擎与服务层解耦；2) 超时后主动中止请求以释放 KV 缓存。
"""


def copy_seeds(tmp_path: Path) -> Path:
    """A private copy of seeds/: the tests edit it, never the repository's."""
    return Path(shutil.copytree(SEEDS, tmp_path / "seeds"))


def plain(field: str) -> str:
    return re.sub(r"<[^>]+>", "", field)


def remove_entry(path: Path, title_line: int) -> str:
    """Delete the entry whose summary is on *title_line* from a seed file; return its summary."""
    entry = next(e for e in parse_seed_file(path) if e.title_line == title_line)
    lines = path.read_text("utf-8").split("\n")
    end = entry.review_line - 1 + entry.review.count("\n") + 1
    del lines[entry.title_line - 1 : end + 1]  # the entry and the blank line after it
    path.write_text("\n".join(lines), encoding="utf-8")
    return entry.title


def reword_answer(seeds: Path, out: Path, lock: Lock) -> tuple[LockedNote, str]:
    """Reword the answer of one Q/A card (why, how, contrast, decision) in its seed file; return the note and its
    new answer.

    The card is found, not hard-coded: the first (by GUID) whose answer is plain
    text appearing once in the seeds and whose rewording leaves the card in the
    deck as a change of that same note.
    """
    texts = {p: p.read_text("utf-8") for p in sorted(seeds.glob("*.txt"))}
    for note in sorted(lock.notes, key=lambda n: n.guid):
        answer = named_fields(note.model, note.fields).get("Answer", "")
        if note.kind not in ("why", "how", "contrast", "decision") or "<" in answer or "&" in answer or len(answer) < 4:
            continue
        homes = [p for p, text in texts.items() if text.count(answer) == 1]
        if len(homes) != 1 or sum(t.count(answer) for t in texts.values()) != 1:
            continue
        reworded = "明显的" + answer
        homes[0].write_text(texts[homes[0]].replace(answer, reworded), encoding="utf-8")
        update = prepare_build([seeds], out, options=BuildOptions(timestamp=T1)).update
        if any(c.after.guid == note.guid and reworded in c.after.fields[1] for c in update.changed):
            return note, reworded
        homes[0].write_text(texts[homes[0]], encoding="utf-8")
    raise AssertionError("no Q/A card whose answer can be reworded in place")


@dataclass(frozen=True)
class Rebuild:
    """What the study session's rebuild changes in the seeds."""

    reworded: LockedNote
    """The note whose answer is reworded (it changes in place)."""
    new_answer: str
    removed: list[LockedNote]
    """The notes of the entry removed (another PR's)."""
    new_prs: set[str]
    """The PR keys of the two PRs added."""

    def unchanged(self, lock: Lock) -> list[LockedNote]:
        """The notes of *lock* whose PR the rebuild leaves alone."""
        return [n for n in lock.notes if n.pr not in (self.reworded.pr, self.removed[0].pr)]


def change_seeds(seeds: Path, out: Path, v1: Lock) -> Rebuild:
    """(b) reword an answer; (c) remove an entry of another PR; (a) add two new PRs."""
    reworded, new_answer = reword_answer(seeds, out, v1)
    victim_file = sorted(seeds.glob("*.txt"))[-1]
    victim = next(e for e in reversed(parse_seed_file(victim_file)) if e.pr_key != reworded.pr)
    remove_entry(victim_file, victim.title_line)
    write_seed(seeds, "zz_new_prs.txt", NEW_PRS)
    return Rebuild(reworded, new_answer, [n for n in v1.notes if n.pr == victim.pr_key],
                   {e.pr_key for e in parse_seed_file(seeds / "zz_new_prs.txt")})


def answer_good(anki: AnkiCollection, card_id: int) -> None:
    """One review with the 'Good' button, as the reviewer screen does it."""
    from anki.scheduler.v3 import CardAnswer

    col = anki.col
    card = col.get_card(card_id)
    card.start_timer()
    states = col._backend.get_scheduling_states(card_id)
    col.sched.answer_card(col.sched.build_answer(card=card, states=states, rating=CardAnswer.GOOD))


def guids_of(anki: AnkiCollection, log_entries) -> set[str]:  # type: ignore[no-untyped-def]
    """GUIDs of the notes an import log lists (entries carry the collection's note id)."""
    return {anki.col.db.scalar("select guid from notes where id=?", entry.id.nid) for entry in log_entries}


def card_state(anki: AnkiCollection, card_id: int) -> tuple:
    return tuple(anki.col.db.first("select nid, type, queue, ivl, due, reps, did from cards where id=?", card_id))


def test_study_session_survives_regeneration(tmp_path: Path, anki: AnkiCollection) -> None:
    seeds = copy_seeds(tmp_path)
    out = tmp_path / "decks" / "deck.apkg"
    build_deck([seeds], out, options=BuildOptions(timestamp=T0))
    v1 = read_lock(lock_path_for(out))
    assert v1 is not None and v1.version == 1

    first = anki.import_apkg(out)
    col = anki.col
    assert len(first.new) == len(v1.notes) and not first.conflicting
    nid_of = {n.guid: col.db.scalar("select id from notes where guid=?", n.guid) for n in v1.notes}
    notes_before = col.note_count()

    rebuild = change_seeds(seeds, out, v1)
    reworded, new_answer, removed, new_pr_keys = rebuild.reworded, rebuild.new_answer, rebuild.removed, rebuild.new_prs

    # Study before the rebuild lands: review the reworded card, a removed one and two others.
    unchanged = rebuild.unchanged(v1)
    reviewed_notes = [reworded, removed[0], unchanged[0], unchanged[-1]]
    reviewed = [cid for n in reviewed_notes for cid in col.card_ids_of_note(nid_of[n.guid])[:1]]
    for cid in reviewed:
        answer_good(anki, cid)
    states = {cid: card_state(anki, cid) for cid in reviewed}
    revlog = col.db.scalar("select count() from revlog")
    assert revlog == len(reviewed) and all(s[5] == 1 for s in states.values())
    # A user tag on a note the rebuild leaves alone.
    tagged = col.get_note(nid_of[unchanged[1].guid])
    tagged.add_tag("my::keep")
    col.update_note(tagged)

    plan = plan_deck([seeds], out, options=BuildOptions(timestamp=T1))
    report = build_deck([seeds], out, options=BuildOptions(timestamp=T1))
    v2 = read_lock(lock_path_for(out))
    assert v2 is not None and v2.version == 2 and report.changes is not None
    second = anki.import_apkg(out)  # Anki's default options
    counts = {k: len(getattr(second, k)) for k in ("new", "updated", "duplicate", "conflicting")}
    print("import log after the rebuild:", counts)

    new_guids = {n.guid for n in v2.notes if n.pr in new_pr_keys}
    assert {n.pr for n in v2.notes if n.guid in new_guids} == new_pr_keys
    assert guids_of(anki, second.new) == new_guids, "exactly the new PRs' cards arrive as new"
    assert col.note_count() == notes_before + len(new_guids)
    assert not second.conflicting

    # The reworded card: same note, new text.
    note = col.get_note(nid_of[reworded.guid])
    assert new_answer in note["Answer"] and reworded.guid in guids_of(anki, second.updated)

    # Reviews and scheduling untouched, the removed entry's reviewed card included.
    assert col.db.scalar("select count() from revlog") == revlog
    assert {cid: card_state(anki, cid) for cid in reviewed} == states

    # The user's tag on the unchanged note survived (it imported as a duplicate).
    assert "my::keep" in col.get_note(tagged.id).tags
    assert tagged.guid in guids_of(anki, second.duplicate)

    # The removed entry's notes: tagged, with the banner on the front.
    for gone in removed:
        obsolete = col.get_note(nid_of[gone.guid])
        assert OBSOLETE_TAG in obsolete.tags and obsolete["Status"]
        assert OBSOLETE_BANNER in col.get_card(obsolete.card_ids()[0]).question()
    assert {n.id for n in (col.get_note(i) for i in col.find_notes(f"tag:{OBSOLETE_TAG}"))} >= {
        nid_of[g.guid] for g in removed}

    # No duplicates: one note per question among live notes, one per GUID.
    live = [col.get_note(i) for i in col.find_notes(f"-tag:{OBSOLETE_TAG}")]
    fronts = [(n.fields[0], n["Summary"]) for n in live]
    assert len(fronts) == len(set(fronts))
    assert col.db.scalar("select count(distinct guid) from notes") == col.note_count()

    # The plan said so before the import.
    assert len(plan.new) == counts["new"]
    assert plan.updated == counts["updated"]
    assert len(plan.unchanged) + len(plan.obsolete) - plan.newly_obsolete == counts["duplicate"]


def test_rebuild_without_change_is_byte_identical_and_check_passes(tmp_path: Path, runner: CliRunner,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    seeds = copy_seeds(tmp_path)
    out = tmp_path / "decks" / "deck.apkg"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(T0))
    assert runner.invoke(cli, ["build", "-q", str(seeds), "-o", str(out)]).exit_code == 0
    first, lock_text = out.read_bytes(), lock_path_for(out).read_text("utf-8")
    monkeypatch.delenv("SOURCE_DATE_EPOCH")  # the wall clock must not matter any more
    assert runner.invoke(cli, ["build", "-q", str(seeds), "-o", str(out)]).exit_code == 0
    assert out.read_bytes() == first and lock_path_for(out).read_text("utf-8") == lock_text

    result = runner.invoke(cli, ["build", "--check", str(seeds), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"Up to date: {out} (deck version 1)\n"


def test_check_fails_on_a_change_and_writes_nothing(tmp_path: Path, runner: CliRunner) -> None:
    seeds = copy_seeds(tmp_path)
    out = tmp_path / "decks" / "deck.apkg"
    build_deck([seeds], out, options=BuildOptions(timestamp=T0))
    write_seed(seeds, "zz_new_prs.txt", NEW_PRS)
    before = sorted((p.name, p.read_bytes()) for p in out.parent.iterdir())

    result = runner.invoke(cli, ["build", "--check", str(seeds), "-o", str(out)])
    assert result.exit_code == 1
    assert "Out of date:" in result.stderr and " new" in result.stderr and str(out) in result.stderr
    assert sorted((p.name, p.read_bytes()) for p in out.parent.iterdir()) == before

    out.unlink()
    shutil.rmtree(seeds)
    seeds = copy_seeds(tmp_path)
    result = runner.invoke(cli, ["build", "--check", str(seeds), "-o", str(out)])
    assert result.exit_code == 1 and f"{out}: missing" in result.stderr


def test_source_date_epoch_dates_the_first_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3
    import zipfile

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1600000000")
    out = tmp_path / "deck.apkg"
    build_deck([SEEDS], out)
    (tmp_path / "c.anki2").write_bytes(zipfile.ZipFile(out).read("collection.anki2"))
    with sqlite3.connect(tmp_path / "c.anki2") as db:
        mods = {m for (m,) in db.execute("select mod from notes")}
        ids = [i for (i,) in db.execute("select id from notes")]
        card_ids = [i for (i,) in db.execute("select id from cards")]
    assert mods == {1_600_000_000}
    assert len(set(ids)) == len(ids) and len(set(card_ids)) == len(card_ids)
    assert all(1_600_000_000_000 <= i < 1_600_000_100_000 for i in ids)  # "Added" = first seen


def test_plan_command_reports_and_advises(tmp_path: Path, runner: CliRunner) -> None:
    seeds = copy_seeds(tmp_path)
    out = tmp_path / "deck.apkg"
    result = runner.invoke(cli, ["plan", str(seeds), "-o", str(out)])
    assert result.exit_code == 0 and "first build" in result.stdout and not out.exists()

    build_deck([seeds], out, options=BuildOptions(timestamp=T0))
    result = runner.invoke(cli, ["plan", str(seeds), "-o", str(out)])
    assert "no change, deck version 1" in result.stdout and "changes nothing" in result.stdout

    write_seed(seeds, "zz_new_prs.txt", NEW_PRS)
    result = runner.invoke(cli, ["plan", str(seeds), "-o", str(out)])
    assert result.exit_code == 0
    new_line = next(line for line in result.stdout.splitlines() if line.strip().startswith("new"))
    assert int(new_line.split()[1]) == len(prepare_build([seeds], out).update.new) > 0
    assert "【vllm · 前缀缓存】" in result.stdout  # the new PR's cards, under the cue naming what it changes
    assert "Default import options are fine" in result.stdout
    assert read_lock(lock_path_for(out)).version == 1  # type: ignore[union-attr]  # plan wrote nothing


def test_summary_shows_changes_after_the_first_build(tmp_path: Path, runner: CliRunner) -> None:
    seeds = copy_seeds(tmp_path)
    out = tmp_path / "deck.apkg"
    assert "Deck version" not in runner.invoke(cli, ["build", str(seeds), "-o", str(out)]).stdout
    write_seed(seeds, "zz_new_prs.txt", NEW_PRS)
    update = prepare_build([seeds], out).update
    # New PRs change no note of the old ones but a glossary card they use, which gains their topic tags.
    assert {(c.before.kind, c.before.fields) for c in update.changed} <= {(c.after.kind, c.after.fields) for c in update.changed}
    assert all(c.after.kind == "glossary" and set(c.before.tags) < set(c.after.tags) for c in update.changed)
    result = runner.invoke(cli, ["build", str(seeds), "-o", str(out)])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1].startswith(f"Deck version 2: {len(update.new)} new, {len(update.changed)} changed,")


def write_entries(path: Path, repo: str, entries: list) -> None:  # type: ignore[type-arg]
    path.write_text(repo + "\n\n" + "".join(f"{e.title}\n\n{e.review}\n\n" for e in entries), encoding="utf-8")


def test_reordering_and_moving_entries_changes_nothing(tmp_path: Path) -> None:
    """Seed files renamed (so reordered), entries reversed, one entry moved to a new file: same notes, no re-dating."""
    seeds = copy_seeds(tmp_path)
    out = tmp_path / "deck.apkg"
    build_deck([seeds], out, options=BuildOptions(timestamp=T0))
    first, second = sorted(seeds.glob("*.txt"))
    first.rename(seeds / ("zz_" + first.name))
    entries = parse_seed_file(second)
    repo = second.read_text("utf-8").split("\n")[0]
    write_entries(second, repo, list(reversed(entries[1:])))
    write_entries(seeds / "005_moved.txt", repo, entries[:1])

    update = prepare_build([seeds], out, options=BuildOptions(timestamp=T1)).update
    assert update.noop, (update.new, update.changed, update.obsolete)
    assert len(update.unchanged) == len(read_lock(lock_path_for(out)).notes)  # type: ignore[union-attr]


def test_a_pr_repeated_in_a_later_file_gives_one_set_of_cards(tmp_path: Path, runner: CliRunner) -> None:
    seeds = copy_seeds(tmp_path)
    first = sorted(seeds.glob("*.txt"))[0]
    entry = parse_seed_file(first)[0]
    repo = first.read_text("utf-8").split("\n")[0]
    prs = sum(len(parse_seed_file(p)) for p in seeds.glob("*.txt"))
    later = seeds / "zz_corrected.txt"
    write_entries(later, repo, [entry])
    out = tmp_path / "deck.apkg"
    result = runner.invoke(cli, ["build", str(seeds), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"Warning: {first}:{entry.title_line}: duplicate PR: {later}:3 has the same repository and summary" in result.stderr
    notes = [n for n in read_lock(lock_path_for(out)).notes if n.pr == entry.pr_key]  # type: ignore[union-attr]
    assert notes and all("zz_corrected.txt:" in named_fields(n.model, n.fields)["Source"] for n in notes)
    assert result.stdout.startswith(f"Built {prs} PRs")  # the repeated PR counts once


def test_template_change_reaches_users_with_default_options(tmp_path: Path, anki: AnkiCollection,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from deckgen.deck import notetypes
    from deckgen.deck.notetypes import QA_MODEL_ID

    out = tmp_path / "deck.apkg"
    build_deck([SEEDS], out, options=BuildOptions(timestamp=T0))
    anki.import_apkg(out)
    read = notetypes._read
    monkeypatch.setattr(notetypes, "_read", lambda name: read(name) + ("\n/* v2 */" if name == "style.css" else ""))
    plan = plan_deck([SEEDS], out, options=BuildOptions(timestamp=T1))
    assert not plan.changed and any("styling changed" in line for line in plan.advice)
    build_deck([SEEDS], out, options=BuildOptions(timestamp=T1))
    log = anki.import_apkg(out)
    assert not log.new and not log.updated and not log.conflicting and log.duplicate
    anki.reopen()
    assert anki.col.models.get(QA_MODEL_ID)["css"].endswith("/* v2 */")


def test_schema_change_advice_works_in_anki(tmp_path: Path, anki: AnkiCollection, monkeypatch: pytest.MonkeyPatch) -> None:
    """A field added (a schema change): plan's advice, followed in Anki, updates every note and keeps reviews."""
    from anki.import_export_pb2 import ImportAnkiPackageUpdateCondition

    from deckgen.deck import lock, notes, notetypes
    from deckgen.deck.notetypes import QA_MODEL_ID

    out = tmp_path / "deck.apkg"
    build_deck([SEEDS], out, options=BuildOptions(timestamp=T0))
    anki.import_apkg(out)
    nid = anki.col.find_notes(f"mid:{QA_MODEL_ID}")[0]
    cid = anki.col.card_ids_of_note(nid)[0]
    answer_good(anki, cid)
    state = card_state(anki, cid)

    monkeypatch.setattr(notetypes, "QA_FIELDS", (*notetypes.QA_FIELDS, ("Extra", 1_591_625_109)))
    monkeypatch.setitem(lock.FIELD_NAMES, QA_MODEL_ID, (*lock.FIELD_NAMES[QA_MODEL_ID], "Extra"))
    fields = notes.note_fields
    monkeypatch.setattr(notes, "note_fields", lambda card: fields(card) + ([] if card.kind.value == "cloze" else ["extra"]))
    # A real change to that code is a new notes-cache version by itself; one patched in memory is not.
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(tmp_path / "cache-of-the-changed-code"))
    plan = plan_deck([SEEDS], out, options=BuildOptions(timestamp=T1))
    assert "Merge note types" in plan.advice[0] and "Update notes: Always" in plan.advice[0]
    build_deck([SEEDS], out, options=BuildOptions(timestamp=T1))
    qa_notes = len(anki.col.find_notes(f"mid:{QA_MODEL_ID}"))

    merged = anki.import_apkg(out, merge_notetypes=True)
    assert not merged.conflicting and not merged.new and not merged.updated  # Anki re-dated the merged notes
    again = anki.import_apkg(out, update_notes=ImportAnkiPackageUpdateCondition.IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_ALWAYS)
    assert len(again.updated) == qa_notes and not again.new and not again.conflicting
    anki.reopen()
    assert anki.col.get_note(nid)["Extra"] == "extra"
    assert card_state(anki, cid) == state and anki.col.db.scalar("select count() from revlog") == 1
    assert sorted(m.name for m in anki.col.models.all_names_and_ids() if m.name.startswith("deckgen")) == [
        "deckgen Cloze", "deckgen Q/A"]


def test_check_and_plan_use_the_same_taxonomy_as_the_build(tmp_path: Path, runner: CliRunner) -> None:
    """Topic tags are content: --check must compare with a build using the same taxonomy, not the default one."""
    seeds = copy_seeds(tmp_path)
    taxonomy = tmp_path / "elsewhere.toml"
    (seeds / "topics.toml").rename(taxonomy)
    out = tmp_path / "deck.apkg"
    assert runner.invoke(cli, ["build", "-q", str(seeds), "-o", str(out), "--taxonomy", str(taxonomy)]).exit_code == 0
    same = runner.invoke(cli, ["build", "--check", str(seeds), "-o", str(out), "--taxonomy", str(taxonomy)])
    assert same.exit_code == 0, same.output
    plan = runner.invoke(cli, ["plan", str(seeds), "-o", str(out), "--taxonomy", str(taxonomy)])
    assert "no change, deck version 1" in plan.stdout
    other = runner.invoke(cli, ["build", "--check", str(seeds), "-o", str(out)])
    assert other.exit_code == 1 and "a build would make deck version 2" in other.stderr


def test_a_deck_built_before_the_readable_source_line_updates_in_place(tmp_path: Path, anki: AnkiCollection,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #22 changed every note's Source (repository and PR, the file and line a detail) and made what a learner
    reads of it content: the first rebuild re-dates every note once, and Anki updates each in place, reviews kept."""
    from deckgen.deck import lock, notes
    from deckgen.text.markup import escape

    out = tmp_path / "deck.apkg"
    # The fields and content hash as deckgen made them before: "repo · file:line", all of it provenance.
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(tmp_path / "cache-of-the-old-code"))
    monkeypatch.setattr(notes, "source_field", lambda card: escape(f"{card.entry.repo} · {card.entry.path.name}:{card.line}"))
    monkeypatch.setattr(lock, "content_fields", lambda model, fields: {
        k: v for k, v in named_fields(model, fields).items() if k != "Source"})
    build_deck([SEEDS], out, options=BuildOptions(timestamp=T0))
    first = anki.import_apkg(out)
    cid = anki.col.find_cards("tag:kind::why")[0]
    answer_good(anki, cid)
    state = card_state(anki, cid)
    assert "<span" not in anki.col.get_card(cid).note()["Source"]

    monkeypatch.undo()
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(tmp_path / "cache-of-the-new-code"))
    plan = plan_deck([SEEDS], out, options=BuildOptions(timestamp=T1))
    assert len(plan.changed) == len(first.new) and not plan.new
    # what plan says changed: the source line, as a learner reads it (the file and line are not content)
    assert any(line.endswith("— Source: vllm-project/vllm · 000_7e666… → vllm-project/vllm") for line in plan.changed)
    build_deck([SEEDS], out, options=BuildOptions(timestamp=T1))
    log = anki.import_apkg(out)
    assert not log.conflicting and not log.new and not log.duplicate
    assert len(log.updated) == len(first.new)
    anki.reopen()
    assert card_state(anki, cid) == state and anki.col.db.scalar("select count() from revlog") == 1
    sources = {anki.col.get_note(nid)["Source"] for nid in anki.col.find_notes("")}
    assert all(s.startswith('vllm-project/vllm · <span class="where">') for s in sources)
