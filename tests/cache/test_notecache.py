"""The notes cache: topic matching and note rendering skipped for unchanged entries, never a different byte."""

from __future__ import annotations

import shutil
import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

from deckgen import BuildOptions
from deckgen.cache import notecache, resultcache, results
from deckgen.curriculum.glossary import Glossary
from deckgen.curriculum.topics import Taxonomy
from deckgen.deck.notes import EntryNotes
from deckgen.progress import NoProgress
from deckgen.source.parse import parse_seed_file
from deckgen.types import Card, Review
from tests.cache.test_resultcache import (  # noqa: F401
    DAMAGE,
    _cache_dir,
    _seeds,
    build,
    extend_last_review,
    no_extraction,
    notes_files,
    notes_rows,
    restore,
    stored,
)


def count_work(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Titles of the entries matched against the taxonomy and glossary, and a mark per note rendered."""
    done: list[str] = []
    real = notecache.entry_notes

    def counted(review: Review, cards: Sequence[Card], taxonomy: Taxonomy | None, glossary: Glossary | None) -> EntryNotes:
        made = real(review, cards, taxonomy, glossary)
        done.extend([review.entry.title, *("note" for _ in made.notes)])
        return made

    monkeypatch.setattr(notecache, "entry_notes", counted)
    return done


def test_warm_builds_match_and_render_nothing_and_give_the_same_bytes(seeds: Path, cache_dir: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    uncached = build(seeds, tmp_path / "a", cache=False)
    assert not (cache_dir / "notes").exists()  # --no-cache neither reads nor writes
    cold = build(seeds, tmp_path / "b")
    assert notes_files(cache_dir) == len(list(seeds.glob("*.txt")))
    done = count_work(monkeypatch)
    warm = build(seeds, tmp_path / "c")
    assert done == []
    assert cold == uncached and warm == uncached


def results_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Titles of the entries looked up in the results cache."""
    asked: list[str] = []
    get_many = resultcache.ResultCache.get_many
    monkeypatch.setattr(resultcache.ResultCache, "get_many",
                        lambda self, entries: asked.extend(e.title for e in entries) or get_many(self, entries))
    return asked


@pytest.mark.parametrize("notes", ["kept", "gone"])
def test_the_results_cache_is_read_only_for_entries_the_notes_cache_lacks(notes: str, seeds: Path, cache_dir: Path,
                                                                          tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored entry holds its review and cards too: a warm build reads one cache, and extracts nothing."""
    expected = build(seeds, tmp_path / "a")
    if notes == "gone":
        shutil.rmtree(cache_dir / "notes")
    asked = results_read(monkeypatch)
    no_extraction(monkeypatch)
    assert build(seeds, tmp_path / "b") == expected
    entries = [e.title for p in sorted(seeds.glob("*.txt")) for e in parse_seed_file(p)]
    assert asked == ([] if notes == "kept" else entries)


def extracted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Titles of the entries extracted (in this process)."""
    done: list[str] = []
    make = results.make_result
    monkeypatch.setattr(results, "make_result", lambda entry: done.append(entry.title) or make(entry))
    return done


def test_a_changed_entry_is_extracted_again_and_its_file_matched_and_rendered_again(
        seeds: Path, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(seeds, tmp_path / "a")
    last = extend_last_review(seeds)
    done, made = count_work(monkeypatch), extracted(monkeypatch)
    after = build(seeds, tmp_path / "b")
    assert made == [last.title]
    changed_file = sorted(seeds.glob("*.txt"))[-1]
    assert [d for d in done if d != "note"] == [e.title for e in parse_seed_file(changed_file)] and "note" in done
    assert after == build(seeds, tmp_path / "c", cache=False)


def encoded_here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of entries of each notes row encoded in this process (workers count in their own copies)."""
    rows: list[int] = []
    encode = notecache.encode_with
    monkeypatch.setattr(notecache, "encode_with", lambda entries, value: rows.append(len(entries)) or encode(entries, value))
    return rows


def test_workers_store_each_file_they_made_whole_as_its_row_and_the_next_build_reads_it(
        seeds: Path, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --jobs 2 a worker makes and renders a file's entries together and sends the file's row: this process
    stores it as sent, and encodes nothing (which would give each string of the notes it holds a UTF-8 copy)."""
    monkeypatch.setattr(results, "MIN_ENTRIES_PER_JOB", 1)
    encoded = encoded_here(monkeypatch)
    expected = build(seeds, tmp_path / "a", jobs=2)
    files = sorted(seeds.glob("*.txt"))
    assert notes_rows(cache_dir) == (0, len(files)) and encoded == []
    assert expected == build(seeds, tmp_path / "uncached", cache=False)
    done = count_work(monkeypatch)
    no_extraction(monkeypatch)
    assert build(seeds, tmp_path / "b") == expected and done == [] and encoded == []


def test_workers_making_part_of_a_file_leave_its_row_to_this_process(seeds: Path, cache_dir: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Two entries of a file changed: the workers make those two, the rest of the file comes from the results cache,
    and this process puts the file's row together from both."""
    build(seeds, tmp_path / "a")
    path = sorted(seeds.glob("*.txt"))[-1]
    text, changed = path.read_text("utf-8"), parse_seed_file(path)[-2:]
    for entry in changed:
        text = text.replace(entry.review, entry.review + "另外，采用缓存而非重算，以避免重复分词。")
    path.write_text(text, "utf-8")
    monkeypatch.setattr(results, "MIN_ENTRIES_PER_JOB", 1)
    made_here: list[str] = []  # what workers append goes to their own copy of the list
    make_notes = notecache.NoteMaker._make
    monkeypatch.setattr(notecache.NoteMaker, "_make",
                        lambda self, review, cards: made_here.append(review.entry.title) or make_notes(self, review, cards))
    encoded = encoded_here(monkeypatch)
    after = build(seeds, tmp_path / "b", jobs=2)
    assert made_here == [e.title for e in parse_seed_file(path)[:-2]]  # the two changed ones: in the workers
    assert encoded == [len(parse_seed_file(path))]  # the changed file's row, put together here
    assert after == build(seeds, tmp_path / "uncached", cache=False)
    assert notes_rows(cache_dir)[0] == 0
    done = count_work(monkeypatch)
    assert build(seeds, tmp_path / "c") == after and done == []
    from deckgen.pipeline import build_corpus

    with_facts = build_corpus([seeds])
    assert done == []  # the row put together here holds every entry's facts: it is read as it is
    assert [r.facts for r in with_facts.reviews] == [r.facts for r in build_corpus([seeds], options=BuildOptions(cache=False)).reviews]


def test_a_long_file_is_stored_in_rows_of_a_few_entries(seeds: Path, cache_dir: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notecache, "MAX_ENTRIES_PER_ROW", 2)
    expected = build(seeds, tmp_path / "a")
    assert expected == build(seeds, tmp_path / "a2", cache=False)  # rows of two entries hold the same cards
    sizes = [len(parse_seed_file(p)) for p in sorted(seeds.glob("*.txt"))]
    assert notes_files(cache_dir) == sum((size + 1) // 2 for size in sizes) > len(sizes)
    last = extend_last_review(seeds)
    done = count_work(monkeypatch)
    after = build(seeds, tmp_path / "b")
    last_file = parse_seed_file(sorted(seeds.glob("*.txt"))[-1])
    last_row = last_file[(len(last_file) - 1) // 2 * 2:]  # the row of the changed (last) entry
    assert [d for d in done if d != "note"] == [e.title for e in last_row] and last_row[-1].title == last.title
    assert after == build(seeds, tmp_path / "c", cache=False)
    done.clear()
    assert build(seeds, tmp_path / "d") == after and done == []


def test_an_edited_taxonomy_is_matched_again_for_every_entry(seeds: Path, cache_dir: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    build(seeds, tmp_path / "a")
    taxonomy = seeds / "topics.toml"
    # A new topic for every PR that names code: those notes' tags change.
    taxonomy.write_text(taxonomy.read_text("utf-8") + '\n[[topic]]\nid = "all-prs"\nzh = "全部"\nen = "All"\n'
                        'identifiers = ["*"]\n', encoding="utf-8")
    done = count_work(monkeypatch)
    after = build(seeds, tmp_path / "b")
    entries = sum(len(parse_seed_file(p)) for p in seeds.glob("*.txt"))
    assert len([d for d in done if d != "note"]) == entries
    assert after == build(seeds, tmp_path / "c", cache=False)
    assert b"topic::all-prs" in after[1]


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "wrong-object", "other-cards"])
def test_damaged_stored_notes_are_a_miss_never_a_crash(damage: str, seeds: Path, cache_dir: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    expected = build(seeds, tmp_path / "a")
    rows = stored(cache_dir, "notes")
    keys = sorted(rows)
    if damage == "other-cards":  # intact, but another entry's notes: their card keys do not fit
        changed = {key: rows[keys[(index + 1) % len(keys)]] for index, key in enumerate(keys)}
    else:
        changed = {key: DAMAGE[damage](data) for key, data in rows.items()}
    restore(cache_dir, changed, "notes")
    no_extraction(monkeypatch)  # the results cache still has every entry: only the notes are made again
    assert build(seeds, tmp_path / "b") == expected
    # Made and stored again (not byte for byte: what a pickle shares depends on what the process rendered before).
    again = stored(cache_dir, "notes")
    assert again.keys() == rows.keys() and all(again[k] != changed[k] for k in again)
    done = count_work(monkeypatch)
    assert build(seeds, tmp_path / "c") == expected and done == []


def test_the_notes_cache_is_private(seeds: Path, cache_dir: Path, tmp_path: Path) -> None:
    build(seeds, tmp_path / "a")
    files = list((cache_dir / "notes").iterdir())
    assert files
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in [cache_dir / "notes", *files])


@pytest.mark.parametrize("module", ["deck/notes", "text/markup", "curriculum/curriculum", "curriculum/topics",
                                    "curriculum/glossary", "text/matching", "deck/lock"])
def test_render_version_follows_the_matching_and_rendering_code(module: str, tmp_path: Path) -> None:
    package_dir = resultcache.PACKAGE
    copy = Path(shutil.copytree(package_dir, tmp_path / "deckgen", ignore=shutil.ignore_patterns("__pycache__")))
    before = resultcache.source_version(copy, notecache.RENDER_MODULES)
    with (copy / f"{module}.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# changed\n")
    assert resultcache.source_version(copy, notecache.RENDER_MODULES) != before


def test_render_version_follows_the_extractor_version(monkeypatch: pytest.MonkeyPatch) -> None:
    notecache.render_version.cache_clear()
    before = notecache.render_version()
    monkeypatch.setattr(notecache, "extractor_version", lambda: "another extractor")
    notecache.render_version.cache_clear()
    try:
        assert notecache.render_version() != before
    finally:
        notecache.render_version.cache_clear()


def test_a_big_build_starts_the_worker_for_new_entries_before_reading_stored_ones(
        seeds: Path, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """jieba is set up and the new entry made while this process reads the stored entries (a +1 file rebuild)."""
    build(seeds, tmp_path / "a")
    extend_last_review(seeds)
    monkeypatch.setattr(results, "OWN_PROCESS_ENTRIES", 1)  # every build is big enough
    events: list[str] = []
    start, stored_notes = results._Workers.__init__, notecache.NoteMaker.stored
    monkeypatch.setattr(results._Workers, "__init__",
                        lambda self, jobs, companion: events.append("worker") or start(self, jobs, companion))
    monkeypatch.setattr(notecache.NoteMaker, "stored",
                        lambda self, entries: events.append(f"read {len(entries)}") or stored_notes(self, entries))
    after = build(seeds, tmp_path / "b")
    unchanged = [len(parse_seed_file(p)) for p in sorted(seeds.glob("*.txt"))][:-1]  # the last file changed
    assert events == ["worker", f"read {sum(unchanged)}"]
    assert after == build(seeds, tmp_path / "c", cache=False)


class StageDetails(NoProgress):
    """A Progress that keeps each stage's detail line."""

    def __init__(self) -> None:
        self.details: dict[str, str] = {}

    def stage(self, name: str, seconds: float, detail: str) -> None:
        self.details[name] = detail


def test_a_deck_build_lets_the_facts_go_but_the_cache_and_other_corpora_keep_them(
        seeds: Path, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from deckgen.pipeline import build_corpus, prepare_build

    full_progress, build_progress = StageDetails(), StageDetails()
    full = build_corpus([seeds], progress=full_progress, options=BuildOptions(cache=False))
    prepared = prepare_build([seeds], tmp_path / "deck.apkg", progress=build_progress)  # fills the caches
    assert any(r.facts for r in full.reviews) and not any(r.facts for r in prepared.corpus.reviews)
    assert [r.entry for r in prepared.corpus.reviews] == [r.entry for r in full.reviews]
    assert prepared.corpus.cards == full.cards and prepared.corpus.warnings == full.warnings
    facts = f"{sum(len(r.facts) for r in full.reviews)} facts"
    assert full_progress.details["cards"].startswith(facts) and build_progress.details["cards"].startswith(facts)
    from_cache = build_corpus([seeds])
    assert [r.facts for r in from_cache.reviews] == [r.facts for r in full.reviews]
    # A warm deck build does not even read the facts back: the rows hold the warnings and fact counts.
    import pickle
    from types import SimpleNamespace

    facts_read: list[bytes] = []  # what notecache, and only it, unpickles itself: the facts
    monkeypatch.setattr(notecache, "pickle", SimpleNamespace(
        loads=lambda data: facts_read.append(data) or pickle.loads(data), dumps=pickle.dumps,
        HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL))
    warm_progress = StageDetails()
    warm = prepare_build([seeds], tmp_path / "deck.apkg", progress=warm_progress)
    assert facts_read == [] and warm.corpus.warnings == full.warnings and warm_progress.details["cards"].startswith(facts)
    assert [r.facts for r in build_corpus([seeds]).reviews] == [r.facts for r in full.reviews] and facts_read
