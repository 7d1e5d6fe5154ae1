"""The lock memo: a rebuild takes the lock file it wrote from the cache instead of parsing it, and gets the same lock."""

from __future__ import annotations

import pickle
import sqlite3
import tempfile
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deckgen import BuildOptions, build_deck
from deckgen.cache import lockmemo
from deckgen.cache.lockmemo import KEPT, LockMemo
from deckgen.cache.resultcache import encode_payload
from deckgen.deck.lock import (
    Lock,
    LockedNote,
    lock_digest,
    lock_path_for,
    read_lock,
    reconcile,
)
from deckgen.errors import DeckgenError
from tests.cache.test_resultcache import _cache_dir, _seeds  # noqa: F401 -- the fixtures cache_dir and seeds
from tests.conftest import write_seed
from tests.deck.test_lock import _BUILT, TYPES, first_lock
from tests.test_regen import NEW_PRS

T0, T1 = 1_700_000_000, 1_700_100_000


@pytest.fixture(name="parses")
def _parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The lock files parsed from now on (a lock taken from the memo is not)."""
    parsed: list[Path] = []
    real = Lock.from_text.__func__  # type: ignore[attr-defined]

    def from_text(cls: type[Lock], text: str, path: Path) -> Lock:
        parsed.append(path)
        return real(cls, text, path)

    monkeypatch.setattr(Lock, "from_text", classmethod(from_text))
    return parsed


def rebuild_twice(seeds: Path, out: Path, *, cache: bool) -> tuple[bytes, bytes]:
    """Build, then rebuild after a seed file went and another came (new, unchanged and obsolete notes)."""
    deck = out / "deck.apkg"
    build_deck([seeds], deck, options=BuildOptions(timestamp=T0, cache=cache))
    gone = sorted(seeds.glob("*.txt"))[-1]
    text = gone.read_text("utf-8")
    gone.unlink()
    write_seed(seeds, "zz_new.txt", NEW_PRS)
    try:
        build_deck([seeds], deck, options=BuildOptions(timestamp=T1, cache=cache))
    finally:
        (seeds / "zz_new.txt").unlink()
        gone.write_text(text, encoding="utf-8")
    return deck.read_bytes(), lock_path_for(deck).read_bytes()


def test_a_rebuild_takes_its_lock_from_the_memo_and_writes_what_parsing_it_would(
        seeds: Path, cache_dir: Path, tmp_path: Path, parses: list[Path]) -> None:
    expected = rebuild_twice(seeds, tmp_path / "parsed", cache=False)
    assert parses == [lock_path_for(tmp_path / "parsed" / "deck.apkg")]  # no memo without the cache: parsed

    parses.clear()
    assert rebuild_twice(seeds, tmp_path / "recalled", cache=True) == expected
    assert parses == []  # the rebuild recalled the lock the first build wrote
    assert b'"obsolete": {' in expected[1]  # the obsolete notes' fields and tags were read from their lines


def test_an_edited_lock_file_is_parsed_and_its_edit_kept(seeds: Path, cache_dir: Path, tmp_path: Path,
                                                          parses: list[Path]) -> None:
    deck = tmp_path / "out" / "deck.apkg"
    build_deck([seeds], deck, options=BuildOptions(timestamp=T0))
    path = lock_path_for(deck)
    edited = path.read_text("utf-8").replace(f'"first_seen": {T0}', f'"first_seen": {T0 - 86400}', 1)
    path.write_text(edited, encoding="utf-8")  # a hand edit, or a merge: valid, but not what the build wrote
    with LockMemo.open() as memo:
        recalled = read_lock(path, memo.recall)
    assert parses == [path]  # the memo knew another text: this one was parsed
    assert recalled is not None and min(n.first_seen for n in recalled.notes) == T0 - 86400


def _memo_rows(cache_dir: Path) -> dict[str, bytes]:
    [store] = (cache_dir / "locks").glob("*.sqlite")
    with closing(sqlite3.connect(store)) as db:
        return dict(db.execute("SELECT key, data FROM entries"))


def _put_memo_row(cache_dir: Path, key: str, data: bytes) -> None:
    [store] = (cache_dir / "locks").glob("*.sqlite")
    with closing(sqlite3.connect(store)) as db, db:
        db.execute("UPDATE entries SET data = ? WHERE key = ?", (data, key))


@pytest.mark.parametrize("damage", ["garbage header", "garbage chunk", "other shape", "other lock",
                                    "chunk of another lock", "fewer notes"])
def test_a_damaged_or_stale_memo_is_a_miss_never_a_wrong_lock(damage: str, seeds: Path, cache_dir: Path,
                                                               tmp_path: Path, parses: list[Path]) -> None:
    deck = tmp_path / "out" / "deck.apkg"
    build_deck([seeds], deck, options=BuildOptions(timestamp=T0))
    path = lock_path_for(deck)
    stored = _memo_rows(cache_dir)
    [header] = [key for key in stored if "\0" not in key]
    chunk = header + "\0" + "0"
    lock = read_lock(path)
    assert lock is not None and len(stored) == 2  # a header and one chunk of notes
    digest = lock_digest(path.read_bytes())
    other = first_lock()
    other_digest = lock_digest(b"".join(other.byte_chunks()))
    rows = [n.memo_row() for n in lock.notes]
    damaged = {
        "garbage header": {header: stored[header][:40] + b"\0" * 64 + stored[header][104:]},
        "garbage chunk": {chunk: stored[chunk][:40] + b"\0" * 64 + stored[chunk][104:]},
        "other shape": {header: encode_payload(pickle.dumps(7))},
        "other lock": {header: encode_payload(pickle.dumps((other_digest, 1, 1, [], [len(other.notes)]))),
                       chunk: encode_payload(pickle.dumps((other_digest, 0, [n.memo_row() for n in other.notes])))},
        "chunk of another lock": {chunk: encode_payload(pickle.dumps((other_digest, 0, rows)))},
        # The file's digest, with rows that do not fit its lines.
        "fewer notes": {header: encode_payload(pickle.dumps((digest, lock.version, lock.schema, [], [len(rows) - 1]))),
                        chunk: encode_payload(pickle.dumps((digest, 0, rows[:-1])))},
    }[damage]
    for key, data in damaged.items():
        _put_memo_row(cache_dir, key, data)
    parses.clear()
    with LockMemo.open() as memo:
        assert read_lock(path, memo.recall) == lock
    assert parses == [path]


def test_a_long_lock_is_kept_in_chunks_and_a_shorter_one_leaves_none_behind(tmp_path: Path, cache_dir: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lockmemo, "_NOTES_PER_ROW", 3)
    longer = first_lock()  # 4 notes: two chunks
    shorter = Lock(longer.version, longer.schema, longer.notes[:2], longer.notetypes)
    path = tmp_path / "deck.lock.json"
    with LockMemo.open() as memo:
        for lock, rows in ((longer, 3), (shorter, 2)):
            written = b"".join(lock.byte_chunks())
            path.write_bytes(written)
            memo.remember(path, lock, lock_digest(written))
            assert len(_memo_rows(cache_dir)) == rows  # the header and each chunk
            assert memo.recall(path, written) == lock


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(_BUILT, min_size=1, max_size=8, unique_by=lambda n: (n.pr, n.key)), st.booleans(),
                          st.integers(0, 2)),
                min_size=1, max_size=4), st.data())
def test_a_recalled_lock_is_the_parsed_lock_through_any_builds(builds: list[tuple[list, bool, int]],
                                                              data: st.DataObject) -> None:
    """Build after build (new, changed, re-keyed, obsolete and pruned notes), the lock recalled from the memo equals
    the parsed one, notes' fields and tags included, and the next lock made from either is the same text."""
    with tempfile.TemporaryDirectory() as folder, LockMemo.open() as memo, \
            mock.patch.object(lockmemo, "_NOTES_PER_ROW", 3):  # notes in several chunks
        path = Path(folder) / "deck.lock.json"
        recalled: Lock | None = None
        parsed: Lock | None = None
        for step, (built, prune, grace) in enumerate(builds):
            options = {"now": T0 + 10 * step, "grace": grace, "prune": prune}
            lock = reconcile(recalled, built, TYPES, **options).lock  # type: ignore[arg-type]
            written = b"".join(lock.byte_chunks())
            assert written == b"".join(reconcile(parsed, built, TYPES, **options).lock.byte_chunks())  # type: ignore[arg-type]
            path.write_bytes(written)
            memo.remember(path, lock, lock_digest(written))
            recalled, parsed = read_lock(path, memo.recall), read_lock(path)
            assert recalled is not None and parsed is not None and recalled.notes
            assert "fields" not in vars(recalled.notes[0])  # taken from the memo, not parsed
            i = data.draw(st.integers(0, len(parsed.notes) - 1))  # one note read before any comparison
            assert (recalled.notes[i].fields, recalled.notes[i].tags) == (parsed.notes[i].fields, parsed.notes[i].tags)
            assert recalled.to_text().encode() == written
            assert recalled == parsed


def test_a_recalled_note_is_its_line_until_asked_for_its_fields(tmp_path: Path) -> None:
    lock = first_lock()
    path = tmp_path / "deck.lock.json"
    written = b"".join(lock.byte_chunks())
    path.write_bytes(written)
    with LockMemo.open() as memo:
        memo.remember(path, lock, lock_digest(written))
        recalled = memo.recall(path, written)
    assert recalled is not None
    note = recalled.notes[0]
    assert "fields" not in vars(note) and "tags" not in vars(note)
    assert note.json_line() == lock.notes[0].json_line()
    assert (note.fields, note.tags) == (lock.notes[0].fields, lock.notes[0].tags)
    assert "fields" in vars(note)
    with pytest.raises(AttributeError, match="no attribute 'colour'"):
        note.colour  # noqa: B018 -- only fields and tags are read from the line


def test_without_the_cache_nothing_is_remembered(seeds: Path, cache_dir: Path, tmp_path: Path) -> None:
    build_deck([seeds], tmp_path / "out" / "deck.apkg", options=BuildOptions(timestamp=T0, cache=False))
    assert not (cache_dir / "locks").exists() or not list((cache_dir / "locks").glob("*.sqlite"))


def test_the_memo_keeps_the_last_few_lock_files(tmp_path: Path, cache_dir: Path) -> None:
    lock = first_lock()
    written = b"".join(lock.byte_chunks())
    paths = [tmp_path / f"deck{i}.lock.json" for i in range(KEPT + 3)]
    with LockMemo.open() as memo:
        for path in paths:
            path.write_bytes(written)
            memo.remember(path, lock, lock_digest(written))
        assert memo.recall(paths[-1], written) == lock
    assert 1 <= len(_memo_rows(cache_dir)) <= KEPT
    assert str(paths[-1].resolve()) in _memo_rows(cache_dir)
    assert isinstance(lock.notes[0], LockedNote)


def test_a_lock_with_a_guid_twice_is_never_recalled_but_refused_where_it_is(tmp_path: Path) -> None:
    first = first_lock()
    lock = Lock(first.version, first.schema, (*first.notes, replace(first.notes[0], nid=first.notes[0].nid + 10)),
                first.notetypes)  # as a bad merge of two branches' lock files can leave it
    path = tmp_path / "deck.lock.json"
    written = b"".join(lock.byte_chunks())
    path.write_bytes(written)
    with LockMemo.open() as memo:
        memo.remember(path, lock, lock_digest(written))
        with pytest.raises(DeckgenError, match=rf"^{path}:\d+: GUID .* appears on two notes"):
            read_lock(path, memo.recall)
