"""Study order: new-card positions follow the documented order, in the package and in Anki's queue."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deckgen import BuildOptions
from deckgen.curriculum.order import study_order
from deckgen.curriculum.curriculum import load_data_files
from deckgen.pipeline import build_deck
from deckgen.types import Card, CardKind, Entry, Relation, Verdict
from tests.conftest import SEEDS, AnkiCollection, query_apkg, read_apkg, write_seed

KIND_RANK = {"glossary": 0, "headline": 0, "decision": 0, "name": 1, "how": 2, "why": 2, "contrast": 2, "what": 2,
             "cloze": 3}


def card(pr: str, kind: CardKind, topics: tuple[str, ...], key: str = "") -> Card:
    entry = Entry("o/r", pr, "值得精读。", Path("s.txt"), 1, 3)
    return Card(entry=entry, kind=kind, key=key or f"{kind.value}:{pr}", prompt="什么？", answer="答", cue="r · 题",
                sentence="句", line=3, verdict=Verdict.DEEP, relation=Relation.PURPOSE,
                tags=tuple(f"topic::{t}" for t in topics))


A_CLOZE = card("A", CardKind.CLOZE, ("x",))
A_WHY = card("A", CardKind.WHY, ("x",))
A_DECISION = card("A", CardKind.DECISION, ("x",))
B_CONTRAST = card("B", CardKind.CONTRAST, ("y",))
B_NAME = card("B", CardKind.NAME, ("y",))
B_DECISION = card("B", CardKind.DECISION, ("y",))
C_HOW = card("C", CardKind.HOW, ())
G = card("glossary", CardKind.GLOSSARY, ("x", "y"), key="glossary:term:g")
H = card("glossary", CardKind.GLOSSARY, ("y",), key="glossary:term:h")
CARDS = [A_CLOZE, A_WHY, A_DECISION, B_CONTRAST, B_NAME, B_DECISION, C_HOW, G, H]


def test_topic_blocks_glossary_first_decisions_before_derived_cards() -> None:
    assert study_order(CARDS, ("x", "y")) == [G, A_DECISION, A_WHY, A_CLOZE, H, B_DECISION, B_NAME, B_CONTRAST, C_HOW]


def test_topic_order_of_the_package_decides() -> None:
    """A deck of topic y alone: y's glossary (including the one shared with x) first, then y's PRs."""
    y_only = [c for c in CARDS if "topic::y" in c.tags]
    assert study_order(y_only, ("y",)) == [G, H, B_DECISION, B_NAME, B_CONTRAST]
    assert study_order(CARDS, ("y", "x"))[:5] == [G, H, B_DECISION, B_NAME, B_CONTRAST]


def test_a_new_pr_goes_after_the_existing_ones_even_in_an_earlier_topic() -> None:
    """B and H were first seen at 100; A and G are new: they follow, though topic x comes first."""
    seen = {(c.entry.pr_key, c.key): 100 for c in (B_CONTRAST, B_NAME, B_DECISION, H, C_HOW)}
    assert study_order(CARDS, ("x", "y"), seen) == [H, B_DECISION, B_NAME, B_CONTRAST, C_HOW,
                                                      G, A_DECISION, A_WHY, A_CLOZE]


def test_a_new_card_of_an_existing_pr_stays_with_its_pr() -> None:
    seen = {(c.entry.pr_key, c.key): 100 for c in CARDS if c is not A_WHY}
    assert study_order(CARDS, ("x", "y"), seen) == study_order(CARDS, ("x", "y"))


def test_order_is_deterministic_for_the_same_input() -> None:
    assert study_order(CARDS, ("x", "y")) == study_order(list(CARDS), ("x", "y"))


def documented_key(tags: list[str], order: dict[str, int]) -> tuple[int, int]:
    """(topic block, glossary 0 / PR 1) of a note, from its tags and the taxonomy's order."""
    topics = [order[t.split("::", 1)[1]] for t in tags if t.startswith("topic::")]
    return (min(topics, default=len(order)), 0 if "kind::glossary" in tags else 1)


def new_cards_by_due(anki: AnkiCollection) -> list[tuple[int, int, list[str], str, str]]:
    """(due, ord, tags, summary, kind) of every new card, in due order."""
    rows = anki.col.db.all("select c.due, c.ord, n.tags, n.id from cards c join notes n on n.id = c.nid "
                           "where c.queue = 0 order by c.due, c.ord, n.id")
    out = []
    for due, ordinal, tags, nid in rows:
        note = anki.col.get_note(nid)
        kind = next(t.split("::")[1] for t in tags.split() if t.startswith("kind::"))
        out.append((due, ordinal, tags.split(), note["Summary"], kind))
    return out


def test_imported_new_cards_come_in_the_documented_order(anki: AnkiCollection, seeds_deck: Path) -> None:
    """Acceptance: in Anki, by new-card position, topic blocks follow the taxonomy; in each block the
    glossary cards come first, each PR's cards are together with decision cards before derived ones."""
    order = {t: i for i, t in enumerate(load_data_files([SEEDS])[0].ids)}  # seeds/topics.toml over the built-in
    anki.import_apkg(seeds_deck)
    cards = [c for c in new_cards_by_due(anki) if c[1] == 0]  # a note's first card; cloze c2, c3 share its due
    assert len(cards) == len({c[0] for c in cards}) > 25  # one position per note
    keys = [documented_key(tags, order) for _, _, tags, _, _ in cards]
    assert keys == sorted(keys)
    assert len({k[0] for k in keys}) >= 5  # several topic blocks really occur (a PR sits in its first topic)
    seen_prs: list[str] = []
    for (_, _, tags, summary, kind), previous in zip(cards[1:], cards):
        if kind == "glossary":
            continue
        if summary != previous[3]:
            assert summary not in seen_prs, f"{summary} is split"
            seen_prs.append(summary)
        elif previous[4] != "glossary":
            assert KIND_RANK[previous[4]] <= KIND_RANK[kind], (previous[4], kind, summary)


def test_anki_queue_shows_new_cards_by_position(anki: AnkiCollection, seeds_deck: Path) -> None:
    """The scheduler's new queue (default options) follows the positions; only the 2nd and later
    deletions of cloze notes wait (Anki's default sort: card type, then order gathered)."""
    anki.import_apkg(seeds_deck)
    deck = anki.col.decks.id_for_name("PR 设计决策")
    config = anki.col.decks.config_dict_for_deck_id(anki.col.decks.id_for_name("PR 设计决策::vllm-project/vllm"))
    config["new"]["perDay"] = 9999
    anki.col.decks.update_config(config)
    anki.col.decks.set_current(deck)
    queued = anki.col.sched.get_queued_cards(fetch_limit=1000).cards
    shown = [tuple(anki.col.db.first("select due, ord from cards where id = ?", q.card.id)) for q in queued]
    firsts = [s for s in shown if s[1] == 0]
    assert len(shown) == anki.col.card_count()
    assert firsts == sorted(firsts) and shown[: len(firsts)] == firsts


NEW_PR = """vllm-project/vllm

为张量并行引入分组 all-reduce，降低 TP 通信延迟。

值得精读。关键设计决策：1) 采用分组 all-reduce 而非全局 all-reduce，以避免跨节点同步放大延迟；2) 通过预分配通信缓冲区实现 CUDA 图捕获下的零分配。
"""


def test_a_new_pr_gets_positions_after_every_existing_card(tmp_path: Path, anki: AnkiCollection) -> None:
    """Rebuild with a new PR of the first topic: existing notes keep their relative order, the new PR's
    notes come after all of them, in the package and in a collection that imported the first build."""
    seeds = Path(shutil.copytree(SEEDS, tmp_path / "seeds"))
    out = tmp_path / "decks" / "deckgen.apkg"
    build_deck([seeds], out, options=BuildOptions(timestamp=1_700_000_000))
    first = {guid: due for guid, due in due_of_notes(out)}
    anki.import_apkg(out)
    write_seed(seeds, "002_new.txt", NEW_PR)
    build_deck([seeds], out, options=BuildOptions(timestamp=1_700_086_400))
    second = due_of_notes(out)
    new = [due for guid, due in second if guid not in first]
    old = [guid for guid, _ in second if guid in first]
    assert new and min(new) > max(due for guid, due in second if guid in first)
    assert old == sorted(first, key=first.__getitem__)
    tags = {guid: t for guid, _, t, _ in read_apkg(out)}
    assert all("topic::parallelism" in tags[g] for g, due in second if due in new and "kind::glossary" not in tags[g])
    anki.import_apkg(out)
    existing = anki.col.db.scalar(f"select max(due) from cards where nid in (select id from notes where guid in "
                                  f"({','.join('?' * len(first))}))", *first)
    added = anki.col.db.list("select c.due from cards c join notes n on n.id = c.nid where n.guid not in "
                             f"({','.join('?' * len(first))})", *first)
    assert added and min(added) > existing


def due_of_notes(apkg: Path) -> list[tuple[str, int]]:
    """(guid, due) of every note in an .apkg, by due."""
    return query_apkg(apkg, "select n.guid, min(c.due) from notes n join cards c on c.nid = n.id "
                            "group by n.id order by min(c.due)")


@pytest.mark.parametrize("kind", [k for k in CardKind])
def test_every_card_kind_has_a_rank(kind: CardKind) -> None:
    from deckgen.curriculum.order import KIND_RANK as RANKS

    assert kind in RANKS


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from("ABC"), st.sampled_from(list(CardKind)), st.sets(st.sampled_from("xyz")),
                          st.sampled_from(["k1", "k2"]), st.sampled_from([None, 100, 200])), max_size=14))
def test_study_order_is_the_documented_sort(specs: list[tuple[str, CardKind, set[str], str, int | None]]) -> None:
    """Against the module docstring's keys computed the plain way, one card at a time."""
    cards = [card(pr, kind, tuple(sorted(topics)), key=f"{kind.value}:{key}") for pr, kind, topics, key, _ in specs]
    seen = {(c.entry.pr_key, c.key): first for c, (*_, first) in zip(cards, specs) if first is not None}
    topic_order = ("y", "x")

    def unit(c: Card) -> tuple[str, str]:
        return (c.entry.pr_key, c.key if c.kind == CardKind.GLOSSARY else "")

    units = list(dict.fromkeys(unit(c) for c in cards))

    def key(i: int) -> tuple[float, int, int, int, int, int]:
        c = cards[i]
        generation = min(seen.get((d.entry.pr_key, d.key), float("inf")) for d in cards if unit(d) == unit(c))
        topic = min((topic_order.index(t.removeprefix("topic::")) for t in c.tags if t.removeprefix("topic::") in
                     topic_order), default=len(topic_order))
        return (generation, topic, 0 if c.kind == CardKind.GLOSSARY else 1, units.index(unit(c)), KIND_RANK[c.kind.value], i)

    assert study_order(cards, topic_order, seen) == [cards[i] for i in sorted(range(len(cards)), key=key)]
