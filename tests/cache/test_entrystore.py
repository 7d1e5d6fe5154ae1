"""The per-entry caches' storage: one SQLite file per kind and version, never in a build's way."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from deckgen.cache import entrystore
from deckgen.cache.entrystore import EntryStore
from tests.cache.test_resultcache import _cache_dir, _seeds, build, notes_files, stored  # noqa: F401 -- the fixtures cache_dir and seeds


def the_store(cache_dir: Path, kind: str = "results") -> Path:
    [store] = (cache_dir / kind).glob("*.sqlite")
    return store


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_damaged_store_is_started_again(damage: str, seeds: Path, cache_dir: Path, tmp_path: Path) -> None:
    expected = build(seeds, tmp_path / "a")
    entries = len(stored(cache_dir))
    for kind in ("results", "notes"):
        path = the_store(cache_dir, kind)
        data = path.read_bytes()
        path.write_bytes({"garbage": b"not a database, not at all" * 1000, "truncated": data[: len(data) // 3],
                          "empty": b""}[damage])
    assert build(seeds, tmp_path / "b") == expected
    assert len(stored(cache_dir)) == entries  # kept again
    assert notes_files(cache_dir) == len(list(seeds.glob("*.txt")))


def test_a_store_another_build_is_writing_is_waited_for_then_done_without(
        seeds: Path, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = build(seeds, tmp_path / "a", cache=False)
    build(seeds, tmp_path / "b")
    monkeypatch.setattr(entrystore, "_WAIT_SECONDS", 0.05)
    with closing(sqlite3.connect(the_store(cache_dir), isolation_level=None)) as other:
        other.execute("DELETE FROM entries WHERE rowid % 2 = 0")  # so the next build has entries to store
        left = stored(cache_dir)
        other.execute("BEGIN EXCLUSIVE")  # another build in the middle of writing
        assert build(seeds, tmp_path / "c") == expected
        other.execute("ROLLBACK")
    assert stored(cache_dir) == left  # it could not write: it went on without


def test_what_one_store_wrote_another_reads(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entrystore, "_BATCH", 2)
    writer = EntryStore.open("kind", "v1")
    reader = EntryStore.open("kind", "v1")
    writer.put("a", b"1")
    assert reader.get("a") is None  # still pending in the writer
    writer.put("b", b"2")  # a whole batch: written now
    assert reader.get("a") == b"1" and reader.keys() == {"a", "b"}
    writer.put("a", b"3")
    writer.close()
    assert reader.get("a") == b"3"
    assert EntryStore.open("kind", "v2").get("a") is None  # another version: another store
    reader.close()
    assert reader.get("a") is None and not reader.enabled


def test_many_keys_are_read_in_their_order_a_few_at_a_time(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entrystore, "_KEYS_PER_QUERY", 2)
    with EntryStore.open("kind", "v1") as store:
        for key in "abcde":
            store.put(key, key.encode() * 3)
        store.flush()
        wanted = ["e", "x", "a", "a", "c", "y", "b"]
        assert list(store.get_many(wanted)) == [None if k in "xy" else k.encode() * 3 for k in wanted]
        assert list(store.get_many([])) == []
    assert list(EntryStore.open("kind", None).get_many(["a"])) == [None]


def test_no_version_or_no_cache_folder_is_a_store_that_keeps_nothing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(tmp_path / "cache"))
    off = EntryStore.open("kind", None)
    off.put("a", b"1")
    assert not off.enabled and off.get("a") is None and not off.keys()
    (tmp_path / "cache").mkdir(mode=0o777)
    (tmp_path / "cache").chmod(0o777)  # others could write there
    assert not EntryStore.open("kind", "v1").enabled


def test_a_store_that_cannot_be_written_is_read_as_it_is(seeds: Path, cache_dir: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from deckgen.cache.resultcache import extractor_version
    from tests.cache.test_resultcache import no_extraction

    expected = build(seeds, tmp_path / "a")
    rows = stored(cache_dir)
    real_open = os.open

    def read_only_disk(path: object, flags: int, *args: object) -> int:
        if str(path).endswith(".sqlite") and flags & (os.O_RDWR | os.O_WRONLY):
            raise PermissionError(13, "Permission denied", str(path))  # a read-only cache folder, even for root
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", read_only_disk)
    no_extraction(monkeypatch)  # everything comes from the store
    assert build(seeds, tmp_path / "b") == expected
    store = EntryStore.open("results", extractor_version())
    assert store.enabled
    store.put("new", b"x")
    store.close()
    assert stored(cache_dir) == rows  # nothing written
