"""The per-entry results cache and worker processes: never a different byte, never a crash, never shared."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from deckgen import BuildOptions
from deckgen.cache import notecache, resultcache, results
from deckgen.cache.resultcache import ResultCache, extractor_version, source_version
from deckgen.cli import cli
from deckgen.deck.lock import lock_path_for
from deckgen.files.datadir import data_dir
from deckgen.pipeline import build_deck
from deckgen.source.parse import parse_seed_file
from deckgen.types import Entry
from tests.conftest import FIXTURES, SEEDS

T0 = 1_700_000_000


@pytest.fixture(name="cache_dir")
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder of this test's own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(name="seeds")
def _seeds(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SEEDS, tmp_path / "seeds"))


def build(seeds: Path, out: Path, **options: Any) -> tuple[bytes, bytes]:
    """Build into *out* (a fresh folder: no lock file) with *options* and return the deck's and lock file's bytes."""
    deck = out / "deck.apkg"
    build_deck([seeds], deck, BuildOptions(timestamp=T0, **options))
    return deck.read_bytes(), lock_path_for(deck).read_bytes()


def stored(cache_dir: Path, kind: str = "results") -> dict[str, bytes]:
    """Every entry's bytes in the *kind* cache (the stores of every version)."""
    rows: dict[str, bytes] = {}
    for store in sorted((cache_dir / kind).glob("*.sqlite")):
        with closing(sqlite3.connect(store)) as db:
            rows.update(db.execute("SELECT key, data FROM entries"))
    return rows


def notes_rows(cache_dir: Path) -> tuple[int, int]:
    """How many rows of single entries (what workers sent) and of whole seed files the notes cache holds."""
    rows = stored(cache_dir, "notes")
    files = sum(key.startswith("file:") for key in rows)
    return len(rows) - files, files


def notes_files(cache_dir: Path) -> int:
    """How many seed files the notes cache holds, when it holds nothing else."""
    singles, files = notes_rows(cache_dir)
    assert singles == 0
    return files


def restore(cache_dir: Path, rows: dict[str, bytes], kind: str = "results") -> None:
    """Put *rows* in place of the stored bytes of the *kind* cache (the one store it has)."""
    [store] = (cache_dir / kind).glob("*.sqlite")
    with closing(sqlite3.connect(store)) as db, db:
        db.executemany("UPDATE entries SET data = ? WHERE key = ?", [(data, key) for key, data in rows.items()])


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "truncate": lambda data: data[: len(data) // 2],
    "flip": lambda data: data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:],
    "zeros": lambda data: bytes(len(data)),
    "garbage": lambda data: b"\x80\x05garbage" * 50,
    "empty": lambda data: b"",
    # intact framing around a pickle of something else: must be refused, not used
    "wrong-object": lambda data: resultcache.encode_payload(b"\x80\x05\x95\x05\x00\x00\x00\x00\x00\x00\x00\x8c\x01x\x94."),
}
"""Ways an entry's stored bytes can be damaged."""


def extend_last_review(seeds: Path) -> Entry:
    """Add a sentence to the review of the last entry of the last seed file; return that entry as it was."""
    path = sorted(seeds.glob("*.txt"))[-1]
    last = parse_seed_file(path)[-1]
    path.write_text(path.read_text("utf-8").replace(last.review, last.review + "另外，采用缓存而非重算，以避免重复分词。"),
                    encoding="utf-8")
    return last


def no_extraction(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any attempt to extract an entry fail the test."""
    def refuse(entry: object) -> None:
        raise AssertionError(f"extracted {entry} although it is in the cache")

    monkeypatch.setattr(results, "make_result", refuse)


def test_cached_uncached_and_warm_builds_are_byte_identical(seeds: Path, cache_dir: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    uncached = build(seeds, tmp_path / "a", cache=False)
    assert not cache_dir.joinpath("results").exists()  # --no-cache neither reads nor writes
    cold = build(seeds, tmp_path / "b")
    entries = sum(len(parse_seed_file(p)) for p in seeds.glob("*.txt"))
    assert len(stored(cache_dir)) == entries
    no_extraction(monkeypatch)
    warm = build(seeds, tmp_path / "c")
    assert cold == uncached
    assert warm == uncached


def test_only_changed_entries_are_extracted_again(seeds: Path, cache_dir: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    build(seeds, tmp_path / "a")
    last = extend_last_review(seeds)
    made: list[str] = []
    real = results.make_result
    monkeypatch.setattr(results, "make_result", lambda entry: made.append(entry.title) or real(entry))
    after = build(seeds, tmp_path / "b")
    assert made == [last.title]
    assert after == build(seeds, tmp_path / "c", cache=False)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_cached_bytes_are_a_miss_never_a_crash(damage: str, seeds: Path, cache_dir: Path, tmp_path: Path) -> None:
    expected = build(seeds, tmp_path / "a")
    restore(cache_dir, {key: DAMAGE[damage](data) for key, data in stored(cache_dir).items()})
    shutil.rmtree(cache_dir / "notes")  # else the build needs nothing from the results cache
    assert build(seeds, tmp_path / "b") == expected
    assert all(resultcache.intact_payload(data) for data in stored(cache_dir).values())  # made and stored again


def test_the_cache_is_private(seeds: Path, cache_dir: Path, tmp_path: Path) -> None:
    build(seeds, tmp_path / "a")
    files = list((cache_dir / "results").iterdir())
    assert files and any(f.suffix == ".sqlite" for f in files)
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in [cache_dir / "results", *files])


def test_a_cache_folder_others_can_write_to_is_not_used(seeds: Path, cache_dir: Path, tmp_path: Path) -> None:
    cache_dir.mkdir()
    cache_dir.chmod(0o777)  # e.g. DECKGEN_CACHE_DIR=/some/shared/folder: someone else could plant files
    assert not ResultCache.open().enabled
    expected = build(seeds, tmp_path / "a", cache=False)
    assert build(seeds, tmp_path / "b") == expected
    assert not (cache_dir / "results").exists()


def test_entries_differing_in_anything_extraction_sees_have_different_keys(seeds: Path) -> None:
    entry = parse_seed_file(sorted(seeds.glob("*.txt"))[0])[0]
    from dataclasses import replace

    variants = [replace(entry, review=entry.review + "。"), replace(entry, title=entry.title + "x"),
                replace(entry, repo="a/b"), replace(entry, title_line=entry.title_line + 1),
                replace(entry, review_line=entry.review_line + 1), replace(entry, path=entry.path.with_name("x.txt"))]
    keys = {e.content_key for e in [entry, *variants]}
    assert len(keys) == 1 + len(variants)


def copy_package(tmp_path: Path) -> Path:
    package = resultcache.PACKAGE
    return Path(shutil.copytree(package, tmp_path / "pkg", ignore=shutil.ignore_patterns("__pycache__")))


@pytest.mark.parametrize(("module", "changes_version"), [
    ("cards/cards.py", True),  # an extraction-stage module
    ("cards/gate.py", True),
    ("extract/relations.py", True),
    ("types.py", True),  # imported by them: the Card and Review classes
    ("text/markup.py", True),  # imported by gate
    ("cli.py", False),  # nothing to do with extraction
    ("deck/package.py", False),  # packaging runs on every build anyway
    ("deck/notes.py", False),  # rendering notes: the notes cache's version
])
def test_extractor_version_follows_the_extraction_code(module: str, changes_version: bool, tmp_path: Path) -> None:
    package = copy_package(tmp_path)
    before = source_version(package)
    with (package / module).open("a", encoding="utf-8") as f:
        f.write("\n# an edit\n")
    assert before is not None
    assert (source_version(package) != before) is changes_version
    assert extractor_version() == source_version(resultcache.PACKAGE)


def test_results_of_another_extractor_version_are_not_used(seeds: Path, cache_dir: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    build(seeds, tmp_path / "a")
    monkeypatch.setattr(resultcache, "extractor_version", lambda: "another-version")
    monkeypatch.setattr(notecache, "extractor_version", lambda: "another-version")  # the notes cache's version holds it
    made: list[str] = []
    real = results.make_result
    monkeypatch.setattr(results, "make_result", lambda entry: made.append(entry.title) or real(entry))
    notecache.render_version.cache_clear()
    try:
        build(seeds, tmp_path / "b")
    finally:
        notecache.render_version.cache_clear()
    assert len(made) == sum(len(parse_seed_file(p)) for p in seeds.glob("*.txt"))


def test_stale_versions_are_removed_and_recent_ones_kept(cache_dir: Path) -> None:
    results_dir = cache_dir / "results"
    results_dir.mkdir(parents=True, mode=0o700)
    cache_dir.chmod(0o700)
    old, recent = results_dir / "old-version.sqlite", results_dir / "recent-version.sqlite"
    old_layout = results_dir / "old-version-of-files"  # <version>/<xx>/<key>: deckgen before its SQLite stores
    (old_layout / "ab").mkdir(parents=True)
    (old_layout / "ab" / "abcdef").write_bytes(b"")
    for path in (old, recent, Path(f"{old}-wal")):
        path.write_bytes(b"")
    two_days_ago = os.stat(old).st_mtime - 2 * 86400
    for path in (old, old_layout, Path(f"{old}-wal")):
        os.utime(path, (two_days_ago, two_days_ago))
    assert ResultCache.open().enabled
    assert sorted(p.name for p in results_dir.iterdir() if not p.name.startswith(extractor_version() or "-")) \
        == ["recent-version.sqlite"]


@pytest.mark.parametrize("jobs", [2, 1])
def test_jobs_give_the_same_deck_as_one_process(jobs: int, seeds: Path, cache_dir: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """--jobs 2, or one worker for a big build (here: any build), make the deck the main process makes."""
    runner = CliRunner()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(T0))
    one, two = tmp_path / "one" / "deck.apkg", tmp_path / "two" / "deck.apkg"
    used: list[int] = []
    start = results._Workers.__init__
    monkeypatch.setattr(results._Workers, "__init__",
                        lambda self, jobs, companion: used.append(jobs) or start(self, jobs, companion))
    assert runner.invoke(cli, ["build", str(seeds), "-o", str(one), "--no-cache", "-q"]).exit_code == 0
    assert used == []  # the seeds are few: made in this process
    monkeypatch.setattr(results, "MIN_ENTRIES_PER_JOB", 1)  # now use workers anyway
    monkeypatch.setattr(results, "OWN_PROCESS_ENTRIES", 1)
    made_here: list[str] = []  # what workers append goes to their own copy of the list
    make_notes = notecache.NoteMaker._make
    monkeypatch.setattr(notecache.NoteMaker, "_make",
                        lambda self, review, cards: made_here.append(review.entry.title) or make_notes(self, review, cards))
    decoded: list[str] = []
    decode = results.decode
    monkeypatch.setattr(results, "decode", lambda data, entry: decoded.append(entry.title) or decode(data, entry))
    result = runner.invoke(cli, ["build", str(seeds), "-o", str(two), "--jobs", str(jobs), "-q"])
    assert result.exit_code == 0, result.output
    assert used == [jobs]
    # Several workers make their entries' notes too, whose bytes hold the results: this process decodes those only.
    # One worker leaves the notes to this process, which decodes the results.
    every = [e.title for p in sorted(seeds.glob("*.txt")) for e in parse_seed_file(p)]
    assert (made_here, decoded) == (([], []) if jobs > 1 else (every, every))
    assert two.read_bytes() == one.read_bytes()
    assert lock_path_for(two).read_bytes() == lock_path_for(one).read_bytes()
    # What the workers made went to the cache like anything else, their entries' notes too: in a row per file,
    # as the workers sent it when they rendered them.
    files = list(seeds.glob("*.txt"))
    assert len(stored(cache_dir)) == len(every)
    assert notes_rows(cache_dir) == (0, len(files))


def test_jobs_must_be_positive(runner: CliRunner, seeds: Path, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["build", str(seeds), "-o", str(tmp_path / "d.apkg"), "--jobs", "0"])
    assert result.exit_code == 2


def test_a_result_comes_back_from_its_bytes_field_for_field(seeds: Path) -> None:
    # Reviews, facts and cards pickle as constructor calls (deckgen.types): every field must make the
    # trip, the ones left at their defaults by extraction too (so they are set here).
    from dataclasses import fields, replace

    entry = parse_seed_file(sorted(seeds.glob("*.txt"))[0])[0]
    review, cards = results.make_result(entry)
    facts = tuple(replace(f, name="名", lead="引", prefix="前", verb="实现", marker="通过") for f in review.facts)
    review = replace(review, facts=facts, identifiers=("x_y",), pr_refs=("#1",))
    cards = tuple(replace(c, score=0.5, tags=("topic::t",)) for c in cards)
    back = resultcache.decode(resultcache.encode(entry, (review, cards)), entry)
    assert back is not None and back[0].entry is entry
    for before, after in [(review, back[0]), *zip(review.facts, back[0].facts), *zip(cards, back[1])]:
        assert [getattr(after, f.name) for f in fields(before)] == [getattr(before, f.name) for f in fields(before)]


def test_only_the_entry_being_cached_is_left_out_of_its_bytes(seeds: Path) -> None:
    first, second = parse_seed_file(sorted(seeds.glob("*.txt"))[0])[:2]
    data = resultcache.encode_without(first, (first, second, first))
    assert first.review.encode() not in data and second.review.encode() in data
    stand_in = parse_seed_file(sorted(seeds.glob("*.txt"))[0])[0]  # equal to first, not the same object
    back = resultcache.decode_tuple(data, stand_in, 3)
    assert back is not None and back[0] is stand_in and back[2] is stand_in
    assert back[1] == second and back[1] is not second


def test_encoding_and_decoding_leave_no_reference_cycles(seeds: Path) -> None:
    # Builds pause the cycle collector (deckgen.pipeline): garbage in a cycle would stay for the whole build.
    import gc

    entry = parse_seed_file(sorted(seeds.glob("*.txt"))[0])[0]
    result = results.make_result(entry)
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            assert resultcache.decode(resultcache.encode(entry, result), entry) is not None
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_making_entries_leaves_no_cyclic_garbage(seeds: Path) -> None:
    # Workers run without the cycle collector (deckgen.cache.results): an object cycle per entry would pile up
    # for the whole extraction.  Every memo is emptied before each entry, so the paths that make new
    # things (jieba's HMM, a new relation finder, fresh token tuples) run for every review.
    import gc

    entries = [e for path in [*sorted(seeds.glob("*.txt")), *sorted((FIXTURES / "heldout").glob("*.txt"))]
               for e in parse_seed_file(path)]
    results.make_result(entries[0])
    memos = results.memo_caches()
    gc.collect()
    gc.disable()
    try:
        for entry in entries:
            for memo in memos:
                memo.cache_clear()
            resultcache.encode(entry, results.make_result(entry))
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_big_build_sends_what_is_missing_to_a_worker_before_reading_the_cache(
        seeds: Path, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker sets jieba up and makes the new entry while this process reads and handles the cached ones."""
    build(seeds, tmp_path / "warm")
    changed = extend_last_review(seeds)
    monkeypatch.setattr(results, "OWN_PROCESS_ENTRIES", 1)  # every build is big enough
    events: list[str] = []
    start, get_many = results._Workers.__init__, ResultCache.get_many
    monkeypatch.setattr(results._Workers, "__init__",
                        lambda self, jobs, companion: events.append("worker") or start(self, jobs, companion))
    monkeypatch.setattr(ResultCache, "get_many",
                        lambda self, wanted: events.extend(["read"] * len(wanted)) or get_many(self, wanted))
    entries = [e for p in sorted(seeds.glob("*.txt")) for e in parse_seed_file(p)]
    with results.result_stream(entries) as stream:
        arrivals = [(index, review.entry) for index, (review, _), _ in stream]
    assert events[0] == "worker" and events.count("worker") == 1 and events.count("read") == len(entries) - 1
    # Cached entries first, in entry order, then the one the worker made; each with its own index.
    assert [i for i, _ in arrivals] == [*(i for i in range(len(entries)) if i != len(entries) - 1), len(entries) - 1]
    assert all(entries[i] is entry for i, entry in arrivals)
    assert arrivals[-1][1].review != changed.review
    # The deck does not depend on the route: the same as a build without cache or worker.
    assert build(seeds, tmp_path / "routed") == build(seeds, tmp_path / "clean", cache=False)


def test_leaving_the_stream_early_stops_its_workers(seeds: Path, cache_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing

    monkeypatch.setattr(results, "OWN_PROCESS_ENTRIES", 1)
    entries = [e for p in sorted(seeds.glob("*.txt")) for e in parse_seed_file(p)]
    with pytest.raises(KeyboardInterrupt):
        with results.result_stream(entries, cache=False) as stream:
            assert multiprocessing.active_children()  # the worker started with the stream
            for _ in stream:
                raise KeyboardInterrupt
    assert multiprocessing.active_children() == []


def test_extractor_version_follows_the_rule_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cue lists in rules/ decide which cards an entry gets, as code does: an edit there is a new version."""
    rules = Path(shutil.copytree(data_dir("rules"), tmp_path / "rules"))
    monkeypatch.setattr(resultcache, "data_dir", lambda name: rules if name == "rules" else data_dir(name))
    before = source_version(resultcache.PACKAGE)
    with (rules / "roles.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n# an edit\n")
    assert before is not None and source_version(resultcache.PACKAGE) != before


def test_a_later_build_takes_the_noted_version_until_a_file_changes(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The version is worked out from the sources once, then taken from the cache folder by the files' signatures."""
    package = copy_package(tmp_path)
    worked_out = source_version(package)
    resultcache._noted_versions.cache_clear()  # as a new process finds them
    resultcache._read.clear()
    real_closure = resultcache._module_closure
    monkeypatch.setattr(resultcache, "_module_closure", lambda *args: pytest.fail("read the sources again"))
    assert source_version(package) == worked_out
    with (package / "cards" / "gate.py").open("a", encoding="utf-8") as f:
        f.write("\n# an edit\n")
    monkeypatch.setattr(resultcache, "_module_closure", real_closure)
    assert source_version(package) not in (worked_out, None)
    (package / "cards" / "gate.py").unlink()  # gone: the noted version is not taken either
    monkeypatch.setattr(resultcache, "_module_closure", lambda *args: ({}, {}))
    assert source_version(package) != worked_out
