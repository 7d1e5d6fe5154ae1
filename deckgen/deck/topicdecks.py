"""Topic decks: which cards go in a package, in what order, with what description; the split index.

Topic decks are the full deck filtered by ``topic::<id>`` tags: the same
cards, so the same GUIDs and note types, and importing any mix of them into
one collection never creates a note twice.  Descriptions carry no wall-clock
time: their date is the newest modification time of the deck's notes (the
time their content last changed), and everything else is derived from the
cards.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..curriculum.curriculum import Curriculum
from ..curriculum.order import NEW, positions_in_order
from ..curriculum.topics import Taxonomy, Topic, TopicEvidence, card_topics, explain_topics
from ..errors import DeckgenError, UnknownTopic
from ..text.markup import anki_cards, escape
from ..types import Card, CardKind, Entry
from .lock import BuiltNote, Lock, LockedNote
from .notes import Corpus
from .package import DeckPlan, write_decks

INDEX_FILE = "index.md"
_MAX_FILES_NAMED = 5


@dataclass(frozen=True)
class TopicDeck:
    """One topic's share of the corpus, and where its deck was written (if it was)."""

    topic: Topic
    cards: int
    """Anki cards (a cloze note with three deletions is three cards), glossary cards included."""
    glossary: int
    prs: tuple[Entry, ...]
    path: Path | None = None


@dataclass(frozen=True)
class TopicReport:
    """``deckgen topics``: every topic with its PR and card counts, and the PRs without a topic."""

    taxonomy: str
    """Which taxonomy: ``the built-in taxonomy``, a file, or a file over the built-in one."""
    topics: tuple[TopicDeck, ...]
    unmatched: tuple[Entry, ...]
    entries: int
    warnings: tuple[str, ...] = ()
    catch_all: str | None = None
    """The id of the topic the unmatched PRs have, if any."""
    evidence: tuple[tuple[Entry, tuple[TopicEvidence, ...]], ...] = ()
    """Every PR with why it has each of its topics (only when asked for: ``topics --explain``)."""

    def table(self) -> str:
        rows = [(t.topic.id, t.topic.title, str(len(t.prs)), str(t.cards), str(t.glossary)) for t in self.topics]
        lines = render_table(("topic", "名称 · name", "PRs", "cards", "glossary"), rows, right=(2, 3, 4))
        with_cards = sum(1 for t in self.topics if t.cards)
        lines.append(f"{len(self.topics)} topics ({with_cards} with cards) in {self.taxonomy}; "
                     f"{self.entries - len(self.unmatched)} of {self.entries} PRs match a topic")
        if self.unmatched:
            tagged = f", tagged topic::{self.catch_all}" if self.catch_all else ""
            lines.append(f"PRs without a topic ({len(self.unmatched)}{tagged}):")
            lines.extend(f"  {e.path}:{e.title_line}  {e.title}" for e in self.unmatched)
        return "\n".join(lines)

    def explanation(self) -> str:
        """Per PR, each of its topics and the words that gave it: ``summary`` words, ``review`` words ×hits, `identifiers`."""
        width = max((len(m.topic) for _, found in self.evidence for m in found), default=0)
        lines = []
        for entry, found in self.evidence:
            lines.append(f"{entry.path}:{entry.title_line}  {entry.title}")
            lines.extend(f"  {m.topic:<{width}}  {_evidence_text(m)}" for m in found)
        return "\n".join(lines)


def _evidence_text(found: TopicEvidence) -> str:
    parts = []
    if found.summary:
        parts.append("summary: " + ", ".join(found.summary))
    if found.review:
        parts.append("review: " + ", ".join(f"{word} ×{n}" for word, n in found.review))
    if found.identifiers:
        parts.append("identifiers: " + ", ".join(f"`{name}`" for name in found.identifiers))
    return "; ".join(parts) or "no topic's words (the catch-all)"


@dataclass(frozen=True)
class SplitReport:
    """``deckgen build --split-topics``: one deck per topic with cards, and the index."""

    folder: Path
    index: Path
    decks: tuple[TopicDeck, ...]
    entries: int
    files: int
    warnings: tuple[str, ...] = ()


def require_taxonomy(curriculum: Curriculum) -> Taxonomy:
    if curriculum.taxonomy is None:
        raise DeckgenError("no topic taxonomy: put a topics.toml beside the seeds, or pass --taxonomy FILE")
    return curriculum.taxonomy


def resolve_topics(curriculum: Curriculum, topic_ids: Sequence[str]) -> tuple[Topic, ...]:
    """The topics asked for, in taxonomy order; :class:`UnknownTopic` naming the known ids otherwise."""
    taxonomy = require_taxonomy(curriculum)
    unknown = [t for t in topic_ids if taxonomy.get(t) is None]
    if unknown:
        raise UnknownTopic(f"unknown topic {unknown[0]!r} (topics in {taxonomy.label}: {', '.join(taxonomy.ids)})")
    return tuple(t for t in taxonomy.topics if t.id in topic_ids)


def select_topics(cards: Sequence[Card], topic_ids: Sequence[str]) -> list[Card]:
    """The cards tagged with any of *topic_ids*, in their order."""
    wanted = set(topic_ids)
    return [c for c in cards if wanted.intersection(card_topics(c))]


def full_plan(corpus: Corpus, lock: Lock, *, deck_name: str, notes: Sequence[BuiltNote] = (),
              locked: Sequence[LockedNote] = ()) -> DeckPlan:
    """The package of the whole corpus: every card in study order, identities and dates from *lock*.

    *notes*, when given, are the rendered notes of ``corpus.cards`` in their order (so none is rendered twice);
    *locked*, when given, their notes in *lock* (:attr:`~deckgen.deck.lock.Update.of_built`), in the same order.
    """
    return _plan(corpus.cards, corpus.curriculum.topic_order, lock, deck_name=deck_name,
                 scope="全部主题 · All topics", command="deckgen build", notes=notes, locked=locked)


def topic_plan(corpus: Corpus, full: DeckPlan, topic_ids: Sequence[str]) -> DeckPlan:
    """The package of *topic_ids* only: the full deck's cards with those tags, the same GUIDs, note ids and dates.

    It ships the obsolete notes of those topics too, and is written without a
    lock file of its own: the full deck's lock stays the one record of identity.
    """
    chosen = resolve_topics(corpus.curriculum, topic_ids)
    ids = [t.id for t in chosen]
    cards = select_topics(full.cards, ids)
    if not cards:
        raise DeckgenError(f"no cards for topic {', '.join(ids)}: no PR in the seeds matches it (see deckgen topics)")
    lock = full.lock or Lock()
    tags = {f"topic::{t}" for t in ids}
    lock = replace(lock, notes=tuple(n for n in lock.notes if not n.obsolete or tags.intersection(n.tags)))
    name = f"{full.deck_name}::主题::{' + '.join(t.zh for t in chosen)}"
    command = "deckgen build " + " ".join(f"--topic {t}" for t in ids) + f" -o {'+'.join(ids)}.apkg"
    return _plan(cards, ids, lock, deck_name=name, scope="；".join(f"{t.title}（topic::{t.id}）" for t in chosen),
                 command=command)


def _plan(cards: Sequence[Card], topic_order: Sequence[str], lock: Lock, *, deck_name: str, scope: str,
          command: str, notes: Sequence[BuiltNote] = (), locked: Sequence[LockedNote | None] = ()) -> DeckPlan:
    # Each card's lock note looked up once (unless the caller has them), for its study order, the content
    # time and the package (a dict keyed by identity for each was two more passes over 50,000 notes).
    if not locked:
        note_for = lock.note_for
        locked = [note_for(c.entry.pr_key, c.key) for c in cards]
    positions = positions_in_order(cards, topic_order, [NEW if n is None else n.first_seen for n in locked])
    ordered = [cards[i] for i in positions]
    count = sum(anki_cards(c) for c in ordered)  # once: the description and the build's report both need it
    description = describe(ordered, scope=scope, command=command, content_time=_last_change(locked, lock),
                           card_count=count)
    return DeckPlan(ordered, deck_name=deck_name, timestamp=lock.latest(), lock=lock, description=description,
                    notes=[notes[i] for i in positions] if notes else (), card_count=count,
                    locked=[locked[i] for i in positions])


def content_time(cards: Sequence[Card], lock: Lock) -> int:
    """When the content of *cards* last changed, from the lock (never the wall clock)."""
    return _last_change([lock.note_for(c.entry.pr_key, c.key) for c in cards], lock)


def _last_change(locked: Sequence[LockedNote | None], lock: Lock) -> int:
    """:func:`content_time` of the cards whose lock notes are *locked* (None: not in the lock yet)."""
    times = [note.changed for note in locked if note is not None]
    return max(times) if times else lock.latest()


def describe(cards: Sequence[Card], *, scope: str, command: str, content_time: int, card_count: int) -> str:
    """The deck description Anki shows above the study button (HTML); *card_count*: the Anki cards of *cards*."""
    prs = {c.entry.pr_key for c in cards if c.kind != CardKind.GLOSSARY}
    glossary = sum(1 for c in cards if c.kind == CardKind.GLOSSARY)
    repos = ", ".join(dict.fromkeys(c.entry.repo for c in cards))
    files = sorted({c.entry.path.name for c in cards if c.kind != CardKind.GLOSSARY})
    named = "、".join(files[:_MAX_FILES_NAMED]) + (f" 等 {len(files)} 个文件" if len(files) > _MAX_FILES_NAMED else "")
    lines = [
        f"<b>主题 · Topic</b>：{escape(scope)}",
        f"<b>来源 · Source</b>：{escape(repos)} 的 PR 评审摘要（seed 文件 {escape(named)}）",
        f"<b>规模 · Size</b>：{len(prs)} 个 PR，{card_count} 张卡片（其中术语卡 {glossary} 张）",
        f"<b>内容日期 · Content date</b>：{utc_date(content_time)}（卡片内容最后一次变化）",
        f"<b>更新 · Update</b>：在 deckgen 仓库里运行 <code>{escape(command)}</code>，再在 Anki 中“文件 → 导入”新文件，"
        "默认选项即可：复习记录保留，不会出现重复笔记。",
    ]
    return "<br>\n".join(lines)


def utc_date(stamp: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(stamp))


def topic_decks(corpus: Corpus) -> tuple[TopicDeck, ...]:
    """Every topic of the taxonomy with its PRs and card counts (nothing written)."""
    taxonomy = require_taxonomy(corpus.curriculum)
    out: list[TopicDeck] = []
    for topic in taxonomy.topics:
        cards = select_topics(corpus.cards, [topic.id])
        prs = tuple({c.entry.pr_key: c.entry for c in cards if c.kind != CardKind.GLOSSARY}.values())
        out.append(TopicDeck(topic, sum(anki_cards(c) for c in cards),
                             sum(1 for c in cards if c.kind == CardKind.GLOSSARY), prs))
    return tuple(out)


def topic_report(corpus: Corpus, *, explain: bool = False) -> TopicReport:
    """``deckgen topics``; with *explain*, every PR's evidence for each of its topics too."""
    taxonomy = require_taxonomy(corpus.curriculum)
    evidence = tuple((r.entry, explain_topics(r, taxonomy)) for r in corpus.reviews) if explain else ()
    return TopicReport(taxonomy.label, topic_decks(corpus), corpus.curriculum.unmatched, len(corpus.reviews),
                       corpus.warnings, taxonomy.catch_all, evidence)


def write_split(corpus: Corpus, full: DeckPlan, folder: Path) -> SplitReport:
    """One ``<topic id>.apkg`` per topic with cards in *folder*, and ``index.md`` listing them.

    All files are replaced together (or, if the build is interrupted, none is).
    """
    folder = Path(folder)
    decks: list[TopicDeck] = []
    plans: dict[Path, DeckPlan] = {}
    for deck in topic_decks(corpus):
        if deck.cards:
            path = folder / f"{deck.topic.id}.apkg"
            plans[path] = topic_plan(corpus, full, [deck.topic.id])
            deck = replace(deck, path=path)
        decks.append(deck)
    index = folder / INDEX_FILE
    text = index_markdown(decks, corpus, content_time(full.cards, full.lock or Lock()))
    write_decks(plans, also={index: text.encode("utf-8")})
    return SplitReport(folder, index, tuple(decks), len(corpus.reviews), len(corpus.files), corpus.warnings)


def index_markdown(decks: Sequence[TopicDeck], corpus: Corpus, content_time: int) -> str:
    """``index.md`` for a folder of topic decks: topic, deck file, card count and PR list per topic."""
    repos = ", ".join(dict.fromkeys(r.entry.repo for r in corpus.reviews))
    lines = [
        "# 主题牌组 · Topic decks",
        "",
        f"来源 · Source：{repos}，{len(corpus.files)} 个 seed 文件，{len(corpus.reviews)} 个 PR。"
        f"内容日期 · Content date：{utc_date(content_time)}。",
        "",
        "在 Anki 中用“文件 → 导入”导入任意几个牌组（也可以再导入完整牌组）：它们共用同一批笔记，"
        "同一张卡片只会出现一次。Import any of these decks (and the full deck) into one collection: "
        "they share their notes, so nothing is duplicated.",
        "",
        "| 主题 · Topic | 牌组文件 · Deck file | 卡片 · Cards | PR |",
        "|---|---|---:|---|",
    ]
    for deck in decks:
        file = f"[{deck.path.name}]({deck.path.name})" if deck.path else "—"
        prs = "<br>".join(_cell(e.title) for e in deck.prs) or "—"
        lines.append(f"| {_cell(deck.topic.title)} (`{deck.topic.id}`) | {file} | {deck.cards} | {prs} |")
    unmatched = corpus.curriculum.unmatched
    if unmatched:
        catch_all = corpus.curriculum.taxonomy.catch_all if corpus.curriculum.taxonomy else None
        tagged = f", topic::{catch_all}" if catch_all else ""
        lines += ["", f"## 没有主题的 PR · PRs without a topic ({len(unmatched)}{tagged})", ""]
        lines += [f"- {_cell(e.title)} ({e.path.name}:{e.title_line})" for e in unmatched]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """A plain-text table aligned by display width (a Chinese character takes two columns)."""
    widths = [max(display_width(r[i]) for r in (headers, *rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            pad = " " * (widths[i] - display_width(cell))
            out.append(pad + cell if i in right else cell + pad)
        return "  ".join(out).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
