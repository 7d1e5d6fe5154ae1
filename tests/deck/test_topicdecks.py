"""Topic decks: one per topic plus an index, sharing the full deck's notes, with dated descriptions."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from deckgen import BuildOptions
from deckgen.cli import cli
from deckgen.deck.notetypes import CLOZE_MODEL_ID, QA_MODEL_ID
from deckgen.errors import UnknownTopic
from deckgen.pipeline import (
    build_deck,
    build_topic_deck,
    build_topic_decks,
    list_topics,
)
from tests.conftest import SEEDS, AnkiCollection, query_apkg, read_apkg, write_seed

STAMP = 1_700_000_000  # 2023-11-14 UTC


@pytest.fixture(scope="module", name="built")
def _built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The full deck (with its lock) and the --split-topics folder, built from a copy of seeds/."""
    root = tmp_path_factory.mktemp("topicdecks")
    seeds = Path(shutil.copytree(SEEDS, root / "seeds"))
    full = root / "decks" / "deckgen.apkg"
    build_deck([seeds], full, options=BuildOptions(timestamp=STAMP))
    build_topic_decks([seeds], root / "decks" / "topics", full_deck=full, options=BuildOptions(timestamp=STAMP + 999))
    return full, root / "decks" / "topics"


def summary(fields: list[str], mid: int) -> str:
    """The Summary field (the PR's one-line summary) of a note of either note type."""
    return fields[2] if mid == CLOZE_MODEL_ID else fields[3]


def card_count(apkg: Path) -> int:
    return int(query_apkg(apkg, "select count(*) from cards")[0][0])


def test_one_deck_per_topic_with_cards(built: tuple[Path, Path]) -> None:
    full, folder = built
    ids = list_topics([SEEDS]).topics  # seeds/topics.toml over the built-in taxonomy
    with_cards = [t.topic.id for t in ids if t.cards]
    ids = [t.topic.id for t in ids]
    assert sorted(p.name for p in folder.iterdir()) == sorted([f"{i}.apkg" for i in with_cards] + ["index.md"])
    assert set(with_cards) <= set(ids) and len(with_cards) >= 10
    for topic in with_cards:
        assert {t for _, _, tags, _ in read_apkg(folder / f"{topic}.apkg") for t in tags.split()} >= {f"topic::{topic}"}
        assert all(f"topic::{topic}" in tags.split() for _, _, tags, _ in read_apkg(folder / f"{topic}.apkg"))


def test_topic_decks_share_the_full_decks_notes(built: tuple[Path, Path]) -> None:
    """Same GUID → same note type, fields and tags in every deck; every topic note is in the full deck."""
    full, folder = built
    notes = {guid: (fields, tags, mid) for guid, fields, tags, mid in read_apkg(full)}
    for deck in sorted(folder.glob("*.apkg")):
        for guid, fields, tags, mid in read_apkg(deck):
            assert notes[guid] == (fields, tags, mid), (deck.name, guid)
    tagged = {g for g, (_, tags, _) in notes.items() if "topic::" in tags}
    assert tagged == {g for deck in folder.glob("*.apkg") for g, *_ in read_apkg(deck)}


@pytest.mark.parametrize("full_first", [True, False], ids=["full-deck-first", "topic-decks-first"])
def test_all_decks_in_one_collection_create_each_note_once(built: tuple[Path, Path], anki: AnkiCollection,
                                                           full_first: bool) -> None:
    """Acceptance: every topic deck plus the full deck, imported into one collection, in either order."""
    full, folder = built
    packages = [full, *sorted(folder.glob("*.apkg"))] if full_first else [*sorted(folder.glob("*.apkg")), full]
    logs = [anki.import_apkg(p) for p in packages]
    guids = Counter(anki.col.db.list("select guid from notes"))
    assert len(guids) == len(read_apkg(full)) and max(guids.values()) == 1
    assert sum(len(log.new) for log in logs) == len(read_apkg(full))
    assert not any(log.conflicting for log in logs)
    anki.reopen()
    assert set(anki.col.db.list("select distinct mid from notes")) == {QA_MODEL_ID, CLOZE_MODEL_ID}
    assert not [m.name for m in anki.col.models.all_names_and_ids() if m.name.startswith("deckgen") and m.name.endswith("+")]


def test_index_lists_topic_file_card_count_and_prs(built: tuple[Path, Path]) -> None:
    full, folder = built
    text = (folder / "index.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and "(`" in line]
    topics = [t.topic for t in list_topics([SEEDS]).topics]
    assert len(rows) == len(topics)
    for topic, row in zip(topics, rows):
        title, file, cards, prs = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert title == f"{topic.title} (`{topic.id}`)"
        deck = folder / f"{topic.id}.apkg"
        if file == "—":  # a topic no PR of the seeds has: no deck
            assert (cards, prs, deck.exists()) == ("0", "—", False)
            continue
        assert file == f"[{deck.name}]({deck.name})"
        assert int(cards) == card_count(deck)
        summaries = {summary(f, mid) for _, f, tags, mid in read_apkg(deck) if "kind::glossary" not in tags}
        expected = {s.replace("&lt;", "<").replace("&gt;", ">") for s in summaries} or {"—"}  # a glossary-only topic
        assert set(prs.replace("\\|", "|").split("<br>")) == expected
    assert "2023-11-14" in text


def lock_date(full: Path, guids: set[str]) -> str:
    """The newest 'changed' time of *guids* in the full deck's lock file, as a UTC date (read independently)."""
    lock = json.loads(full.with_name("deckgen.lock.json").read_text(encoding="utf-8"))
    return time.strftime("%Y-%m-%d", time.gmtime(max(n["changed"] for n in lock["notes"] if n["guid"] in guids)))


def test_description_says_topic_source_counts_date_and_update(built: tuple[Path, Path], anki: AnkiCollection) -> None:
    """Shown in Anki: topic, corpus, PR and card counts, the content's date (from the lock), how to update."""
    full, folder = built
    deck = folder / "cuda-graph.apkg"
    notes = read_apkg(deck)
    anki.import_apkg(deck)
    name = "PR 设计决策::主题::CUDA 图::vllm-project/vllm"
    description = anki.col.decks.get(anki.col.decks.id_for_name(name))["desc"]
    prs = {summary(f, mid) for _, f, tags, mid in notes if "kind::glossary" not in tags}
    assert "CUDA 图 · CUDA Graphs（topic::cuda-graph）" in description
    assert "vllm-project/vllm" in description and "000_7e666e2d4fcf18f1.txt" in description
    assert f"{len(prs)} 个 PR，{card_count(deck)} 张卡片" in description
    assert f"内容日期 · Content date</b>：{lock_date(full, {g for g, *_ in notes})}" in description
    assert "2023-11-14" in description  # the content's date, not the day the decks were built
    assert "deckgen build --topic cuda-graph -o cuda-graph.apkg" in description


def test_full_deck_has_a_description_too(built: tuple[Path, Path], anki: AnkiCollection) -> None:
    full, _ = built
    anki.import_apkg(full)
    description = anki.col.decks.get(anki.col.decks.id_for_name("PR 设计决策::vllm-project/vllm"))["desc"]
    prs = {summary(f, mid) for _, f, tags, mid in read_apkg(full) if "kind::glossary" not in tags}
    assert "全部主题" in description and f"{card_count(full)} 张卡片" in description and f"{len(prs)} 个 PR" in description


def test_split_is_reproducible(built: tuple[Path, Path], tmp_path: Path) -> None:
    """A second split build from the same seeds and lock writes the same bytes (no wall clock inside)."""
    full, folder = built
    again = tmp_path / "again"
    build_topic_decks([full.parent.parent / "seeds"], again, full_deck=full, options=BuildOptions(timestamp=STAMP + 12345))
    for path in folder.iterdir():
        assert (again / path.name).read_bytes() == path.read_bytes(), path.name


def test_topic_deck_holds_only_its_topics_and_writes_no_lock(built: tuple[Path, Path], tmp_path: Path) -> None:
    full, _ = built
    out = tmp_path / "two.apkg"
    report = build_topic_deck([full.parent.parent / "seeds"], ["cuda-graph", "cpu-backend"], out, full_deck=full)
    notes = read_apkg(out)
    assert all({"topic::cuda-graph", "topic::cpu-backend"} & set(tags.split()) for _, _, tags, _ in notes)
    expected = {g for g, _, tags, _ in read_apkg(full) if {"topic::cuda-graph", "topic::cpu-backend"} & set(tags.split())}
    assert {g for g, *_ in notes} == expected
    assert report.cards == card_count(out) and sorted(p.name for p in tmp_path.iterdir()) == ["two.apkg"]


def test_topic_deck_uses_the_guids_the_lock_kept(tmp_path: Path) -> None:
    """A reworded PR summary keeps its notes' GUIDs through the full deck's lock; topic decks follow it."""
    seeds = Path(shutil.copytree(SEEDS, tmp_path / "seeds"))
    full = tmp_path / "deckgen.apkg"
    build_deck([seeds], full, options=BuildOptions(timestamp=STAMP))
    seed = seeds / "001_7023eadbfa746543.txt"
    old_title = "放宽 CuPy 依赖约束，仅排除坏版本 14.1.0"
    seed.write_text(seed.read_text("utf-8").replace(old_title, "放宽 CuPy 的依赖约束，只排除坏版本 14.1.0"), "utf-8")
    build_deck([seeds], full, options=BuildOptions(timestamp=STAMP + 100))
    kept = {g for g, f, _, mid in read_apkg(full) if "只排除坏版本" in summary(f, mid)}
    deck = tmp_path / "deps.apkg"
    build_topic_deck([seeds], ["dependencies"], deck, full_deck=full)
    in_topic = {g for g, f, _, mid in read_apkg(deck) if "只排除坏版本" in summary(f, mid)}
    assert kept and in_topic == kept


def test_unknown_topic_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    with pytest.raises(UnknownTopic, match="unknown topic 'nope' \\(topics in .*topics.toml \\(over the built-in taxonomy\\): parallelism, "):
        build_topic_deck([SEEDS], ["nope"], tmp_path / "x.apkg", full_deck=tmp_path / "full.apkg")
    result = runner.invoke(cli, ["build", str(SEEDS), "--topic", "nope", "-o", str(tmp_path / "x.apkg"),
                                 "--lock-of", str(tmp_path / "full.apkg")])
    assert result.exit_code == 2 and "Invalid value for '--topic': unknown topic 'nope'" in result.stderr
    assert not (tmp_path / "x.apkg").exists()


def test_split_with_output_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["build", str(SEEDS), "--split-topics", str(tmp_path / "t"), "-o", str(tmp_path / "x.apkg")])
    assert result.exit_code == 2 and "--split-topics writes its own files" in result.stderr
    assert not (tmp_path / "t").exists()


def test_unknown_topic_of_the_builtin_taxonomy_lists_its_ids(runner: CliRunner, tmp_path: Path, fixtures: Path) -> None:
    result = runner.invoke(cli, ["build", str(fixtures / "good.txt"), "--topic", "x", "-o", str(tmp_path / "x.apkg"),
                                 "--lock-of", str(tmp_path / "full.apkg")])
    assert result.exit_code == 2
    assert "Invalid value for '--topic': unknown topic 'x' (topics in the built-in taxonomy: attention, kv-cache, " in result.stderr


def test_cli_split_and_topics_commands(runner: CliRunner, tmp_path: Path) -> None:
    """`build --split-topics` says what it wrote; `topics` prints every topic with its counts."""
    seeds = Path(shutil.copytree(SEEDS, tmp_path / "seeds"))
    write_seed(seeds, "002_orphan.txt", "o/r\n\n重命名内部变量，统一成蛇形命名风格\n\n值得快速浏览。只改了变量名。\n")
    result = runner.invoke(cli, ["build", str(seeds), "--split-topics", str(tmp_path / "t"),
                                 "--lock-of", str(tmp_path / "full.apkg")])
    assert result.exit_code == 0, result.output
    decks = sorted((tmp_path / "t").glob("*.apkg"))
    total = sum(card_count(d) for d in decks)
    assert result.stdout == f"Built {len(decks)} topic decks ({total} cards in all) from 17 PRs → {tmp_path / 't' / 'index.md'}\n"
    assert f"{seeds / '002_orphan.txt'}:3: this PR matches no topic" in result.stderr
    index = (tmp_path / "t" / "index.md").read_text("utf-8")
    assert "## 没有主题的 PR · PRs without a topic (1, topic::other)" in index
    assert (tmp_path / "t" / "other.apkg").is_file() and "| 其他 · Other (`other`) | [other.apkg](other.apkg) |" in index
    listed = runner.invoke(cli, ["topics", str(seeds)])
    assert listed.exit_code == 0, listed.output
    report = list_topics([seeds])
    for row in report.topics:
        assert re.search(rf"^{re.escape(row.topic.id)}\s.*\s{len(row.prs)}\s+{row.cards}\s+{row.glossary}$",
                         listed.stdout, re.M), row.topic.id
    assert "16 of 17 PRs match a topic" in listed.stdout
    assert listed.stdout.rstrip().endswith(f"{seeds / '002_orphan.txt'}:3  重命名内部变量，统一成蛇形命名风格")


def test_any_repository_gets_topic_decks_that_share_the_full_decks_notes(runner: CliRunner, tmp_path: Path,
                                                                        fixtures: Path, anki: AnkiCollection) -> None:
    """Acceptance (issue #31): SGLang and llama.cpp reviews with no topics.toml or glossary.toml beside them get topic
    decks and an index from the built-in taxonomy, with built-in glossary cards; in Anki, importing every topic deck
    after the full deck adds no note and conflicts with none."""
    seeds = Path(shutil.copytree(fixtures / "anyrepo", tmp_path / "seeds"))
    assert not list(seeds.glob("*.toml"))
    full = tmp_path / "decks" / "deckgen.apkg"
    built = runner.invoke(cli, ["build", str(seeds), "-o", str(full)])
    assert built.exit_code == 0, built.output
    split = runner.invoke(cli, ["build", str(seeds), "--split-topics", str(tmp_path / "topics"), "--lock-of", str(full)])
    assert split.exit_code == 0, split.output
    decks = sorted((tmp_path / "topics").glob("*.apkg"))
    notes = read_apkg(full)
    tagged = {t.removeprefix("topic::") for _, _, tags, _ in notes for t in tags.split() if t.startswith("topic::")}
    assert {d.stem for d in decks} == tagged and len(decks) >= 10
    assert {"sgl-project/sglang", "ggml-org/llama.cpp"} <= set((tmp_path / "topics" / "index.md").read_text("utf-8")
                                                                .split("来源 · Source：", 1)[1].split("，", 1)[0].split(", "))
    assert any("kind::glossary" in tags.split() for _, _, tags, _ in notes)  # terms of the built-in glossary

    first = anki.import_apkg(full)
    assert len(first.new) == len(notes)
    for deck in decks:
        log = anki.import_apkg(deck)
        assert (len(log.new), len(log.conflicting)) == (0, 0), deck.name
        assert len(log.duplicate) == len(read_apkg(deck)), deck.name
    assert anki.col.note_count() == len(notes)
