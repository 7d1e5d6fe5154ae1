"""The whole pipeline as one call: seed files in, an .apkg out."""

from __future__ import annotations

import gc
import os
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from . import shutdown
from .cache.lockmemo import LockMemo
from .cache.notecache import NoteMaker
from .cache.results import result_stream
from .curriculum.curriculum import apply_curriculum, load_data_files
from .curriculum.glossary import Glossary
from .curriculum.topics import Taxonomy
from .deck.lock import Update, lock_path_for, read_lock, reconcile
from .deck.notes import Corpus, EntryNotes
from .deck.notetypes import NOTE_TYPE_IDS, fingerprints
from .deck.package import DeckPlan, package_rows, write_apkg, write_decks
from .deck.topicdecks import (
    SplitReport,
    TopicReport,
    full_plan,
    topic_plan,
    topic_report,
    write_split,
)
from .options import DEFAULT_OUTPUT, DEFAULT_SOURCES, BuildOptions, PushOptions
from .progress import NO_PROGRESS, Progress, StageClock
from .source.parse import read_corpus
from .text.markup import anki_cards
from .types import BuildReport, CardKind, DeckChanges, Entry, Level

if TYPE_CHECKING:
    from .push.send import PushReport


@contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """Python's cycle collector off for the duration (restored after, nested calls included).

    A build makes millions of objects and no reference cycles worth collecting;
    the collector's passes over them were a fifth of a 10k-entry rebuild
    (8.5 → 6.7 s).  Worker processes run without it too (see :mod:`deckgen.cache.results`).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@_cycle_collector_paused()
def build_corpus(sources: Iterable[Path] = DEFAULT_SOURCES, options: BuildOptions = BuildOptions(), *,
                 progress: Progress = NO_PROGRESS, facts: bool = True) -> Corpus:
    """Parse, extract and make cards for every entry named by *sources*; nothing is written.

    Bad input (any error ``deckgen lint`` reports) raises :class:`~deckgen.errors.SeedError`
    before any card is made.  Of the *options*, the taxonomy and glossary (default: ``topics.toml``
    and ``glossary.toml`` beside the seeds, see :mod:`deckgen.curriculum.curriculum`), the cache and the jobs
    count.  *progress* hears of each entry done and of each stage's time.  ``facts=False`` leaves
    each review's facts out once its warnings are found: a deck is made of the cards, and on
    100,000 entries the facts held about 200 MB until the build ended.
    """
    sources = list(sources)
    clock = StageClock()
    with clock.measure("read"):
        scan = read_corpus(sources)
        topics, terms = load_data_files(sources, options.taxonomy, options.glossary)
    warnings = [f"{f.where}: {f.text}" for f in scan.findings if f.level == Level.WARNING]
    entries = scan.entries
    with clock.measure("cards"):
        made = _entry_notes(entries, topics, terms, cache=options.cache, jobs=options.jobs, progress=progress,
                            facts=facts)
    per_entry = made.per_entry
    reviews = [e.review for e in per_entry]
    warnings.extend(w for found in made.warnings for w in found)
    cards = [c for e in per_entry for c in e.cards]
    with clock.measure("topics"):
        tagged, curriculum = apply_curriculum(reviews, cards, topics, terms, [e.curriculum for e in per_entry])
    clock.report(progress, {"read": f"{len(scan.files)} seed file(s), {len(reviews)} entries",
                            "cards": f"{made.fact_count} facts, {len(cards)} notes; "
                                     f"{made.from_cache} of {len(entries)} entries from the cache",
                            "topics": f"{len(tagged) - len(cards)} glossary notes"})
    return Corpus(scan.files, tuple(reviews), tagged, (*warnings, *curriculum.warnings()), curriculum,
                  tuple(n for e in per_entry for n in e.notes))


@dataclass(frozen=True)
class _MadeNotes:
    per_entry: list[EntryNotes]
    """Every entry's notes, in entry order."""
    warnings: list[tuple[str, ...]]
    """Every entry's warnings, in entry order."""
    from_cache: int
    """How many entries came from a cache."""
    fact_count: int
    """How many facts the reviews have (counted before a build without facts lets them go)."""


def _entry_notes(entries: Sequence[Entry], taxonomy: Taxonomy | None, glossary: Glossary | None, *, cache: bool,
                 jobs: int, progress: Progress, facts: bool = True) -> _MadeNotes:
    """Every entry's notes and warnings, how many entries came from a cache, and how many facts.

    Entries the notes cache lacks are read from the results cache, else extracted (in a worker for a
    big build, started first), then matched, tagged and rendered here as each arrives: while workers
    extract, this process reads the stored entries and does its share.  With several workers they
    render what they extract too: this process would otherwise be a third one busy on two cores.
    Without *facts*, stored reviews come without theirs (their warnings and fact counts are stored too), and a new
    review's go once its warnings are found (the cache keeps them).
    """
    arrived: list[EntryNotes | None] = [None] * len(entries)
    entry_warnings: list[tuple[str, ...]] = [()] * len(entries)
    fact_count = 0

    def keep(index: int, notes: EntryNotes) -> None:
        nonlocal fact_count
        entry_warnings[index] = notes.warnings
        fact_count += notes.fact_count
        arrived[index] = notes if facts or not notes.review.facts else replace(notes, review=replace(notes.review, facts=()))

    with NoteMaker(taxonomy, glossary, cache=cache, facts=facts) as maker:
        wanted = maker.missing(entries)
        with result_stream(entries, wanted, cache=cache, jobs=jobs, progress=progress,
                           companion=maker.encoded, together=maker.file_of) as stream:
            to_make = set(wanted)
            have = [i for i in range(len(entries)) if i not in to_make]
            damaged = []
            for index, stored in zip(have, maker.stored([entries[i] for i in have])):
                if stored is None:
                    damaged.append(index)
                else:
                    keep(index, stored)
            progress.advance(len(have) - len(damaged))
            for index, result, extra in stream:
                keep(index, maker.notes(entries[index], result, extra))
        from_cache = len(have) - len(damaged) + stream.cached
        if damaged:  # stored notes that turned out damaged (rare): their results again, then their notes
            with result_stream(entries, damaged, cache=cache) as again:
                for index, result, _ in again:
                    keep(index, maker.notes(entries[index], result))
            from_cache += again.cached
    return _MadeNotes(cast(list[EntryNotes], arrived), entry_warnings, from_cache, fact_count)  # every slot filled by now


def build_timestamp() -> int:
    """The build's clock: ``SOURCE_DATE_EPOCH`` when set (reproducible builds), else now."""
    value = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    return int(value) if value.isdigit() else int(time.time())


@dataclass(frozen=True)
class PreparedBuild:
    """A build worked out against the lock file beside *output*, not yet written."""

    corpus: Corpus
    update: Update
    plan: DeckPlan
    output: Path

    @property
    def lock_path(self) -> Path:
        return lock_path_for(self.output)

    def report(self) -> BuildReport:
        u = self.update
        changes = DeckChanges(u.lock.version, len(u.new), len(u.changed), len(u.unchanged),
                              len(u.obsolete) + len(u.still_obsolete), len(u.pruned), u.first_build)
        cards = self.plan.card_count  # the full plan counted them: every card of the corpus
        if cards is None:
            cards = sum(anki_cards(c) for c in self.corpus.cards)
        return BuildReport(output=self.output, entries=len(self.corpus.reviews), cards=cards, files=len(self.corpus.files),
                           warnings=self.corpus.warnings, lock=self.lock_path, changes=changes)


@_cycle_collector_paused()
def prepare_build(sources: Sequence[Path] = DEFAULT_SOURCES, output: Path = DEFAULT_OUTPUT,
                  options: BuildOptions = BuildOptions(), *, progress: Progress = NO_PROGRESS) -> PreparedBuild:
    """Everything :func:`build_deck` would write, worked out in memory (for build, ``--check`` and plan).

    The corpus's reviews come without their facts (:func:`build_corpus` with ``facts=False``): a deck
    needs the cards only.  Call :func:`build_corpus` for the facts.
    """
    output = Path(output)
    corpus = build_corpus(sources, options, progress=progress, facts=False)
    with LockMemo.open(options.cache) as memo:
        old = read_lock(lock_path_for(output), memo.recall)
    stamp = build_timestamp() if options.timestamp is None else options.timestamp
    notes = corpus.built_notes()
    update = reconcile(old, notes, fingerprints(), now=stamp, grace=options.grace, prune=options.prune)
    plan = full_plan(corpus, update.lock, deck_name=options.deck_name, notes=notes, locked=update.of_built)
    return PreparedBuild(corpus, update, plan, output)


@_cycle_collector_paused()
def build_deck(sources: Sequence[Path] = DEFAULT_SOURCES, output: Path = DEFAULT_OUTPUT,
               options: BuildOptions = BuildOptions(), *, progress: Progress = NO_PROGRESS) -> BuildReport:
    """Build the deck for the seed files or folders in *sources*; write it and its lock file beside it.

    The options' *timestamp* (default ``SOURCE_DATE_EPOCH``, else now) dates only what
    changed since the lock file; unchanged notes keep their dates, so a
    rebuild with no change is byte-identical.  Obsolete cards stay in the
    deck for *grace* more deck versions, or leave it now with *prune*.
    The *cache* (default on) reuses each unchanged entry's cards from the
    per-user cache; *jobs* > 1 makes new entries' cards in that many
    processes.  Neither changes a byte of the output.

    Raises :class:`~deckgen.errors.DeckgenError` with a message naming the file
    and line for bad input; nothing is written then.
    """
    prepared = prepare_build(sources, output, options, progress=progress)
    clock = StageClock()
    _write(prepared, options, clock)
    clock.report(progress, {"write": str(prepared.output)})
    report = prepared.report()
    shutdown.keep(prepared)  # the command line ends now: not freed note by note (see deckgen.shutdown)
    return report


def _write(prepared: PreparedBuild, options: BuildOptions, clock: StageClock) -> None:
    """The deck and its lock file, as every command that writes them writes them."""
    with clock.measure("write"):
        with LockMemo.open(options.cache) as memo:
            write_apkg(prepared.plan, prepared.output, memo=memo)


@_cycle_collector_paused()
def push_deck(sources: Sequence[Path] = DEFAULT_SOURCES, output: Path = DEFAULT_OUTPUT,
              options: BuildOptions = BuildOptions(), target: PushOptions = PushOptions(), *,
              progress: Progress = NO_PROGRESS) -> PushReport:
    """Build the deck as :func:`build_deck` does, then make the running Anki at *target* hold it (AnkiConnect).

    What to send is worked out from what the collection holds (see :mod:`deckgen.push`) before anything is
    written or sent: an unreachable Anki, a wrong API key, too old an AnkiConnect or a changed note type
    raise :class:`~deckgen.errors.DeckgenError` with nothing changed.  Then the deck and lock file are
    written, and the changes sent; :class:`~deckgen.push.send.PushInterrupted` if Anki stops meanwhile.
    With ``target.dry_run`` nothing is written or sent.
    """
    # Loaded here, not with the pipeline: urllib.request alone takes 80 ms to import, and builds never need it.
    from .push.changes import deck_notetypes, plan_push
    from .push.client import AnkiConnect
    from .push.send import PushReport, send_push
    from .push.state import read_collection

    prepared = prepare_build(sources, output, options, progress=progress)
    clock = StageClock()
    anki = AnkiConnect(target.url, target.api_key)
    with tempfile.TemporaryDirectory(prefix="deckgen-push-") as scratch:  # Anki writes and reads packages here
        with clock.measure("anki"):
            anki.version()
            state = read_collection(anki, options.deck_name, NOTE_TYPE_IDS, Path(scratch))
            changes = plan_push(package_rows(prepared.plan), state, deck_notetypes(prepared.update.lock),
                                delete_obsolete=target.delete_obsolete)
        if not target.dry_run:
            _write(prepared, options, clock)
            with clock.measure("push"):
                send_push(anki, prepared.plan, changes, Path(scratch), progress)
    clock.report(progress, {"anki": f"{len(state.notes)} notes in Anki", "write": str(prepared.output),
                            "push": f"{changes.work} notes and note types changed"})
    shutdown.keep(prepared)
    return PushReport(prepared.report(), target.url, changes, sent=not target.dry_run)


def build_topic_deck(sources: Sequence[Path] = DEFAULT_SOURCES, topics: Sequence[str] = (),
                     output: Path = DEFAULT_OUTPUT.parent / "topic.apkg", full_deck: Path = DEFAULT_OUTPUT,
                     options: BuildOptions = BuildOptions()) -> BuildReport:
    """Write a deck of *topics* only to *output*: the same notes (GUIDs, ids, dates) as the full deck.

    Identities and dates come from the lock file of *full_deck*, which is read
    but not written: run ``deckgen build`` to update the full deck and its lock.
    """
    prepared = prepare_build(sources, full_deck, options)
    plan = topic_plan(prepared.corpus, prepared.plan, topics)
    write_decks({Path(output): plan})
    return BuildReport(output=Path(output), entries=len({c.entry.pr_key for c in plan.cards if c.kind != CardKind.GLOSSARY}),
                       cards=sum(anki_cards(c) for c in plan.cards), files=len(prepared.corpus.files),
                       warnings=prepared.corpus.warnings)


def build_topic_decks(sources: Sequence[Path] = DEFAULT_SOURCES, folder: Path = DEFAULT_OUTPUT.parent / "topics",
                      full_deck: Path = DEFAULT_OUTPUT, options: BuildOptions = BuildOptions()) -> SplitReport:
    """Write one deck per topic, ``<folder>/<topic id>.apkg``, and ``<folder>/index.md`` listing them.

    Like :func:`build_topic_deck`, the decks take identities and dates from *full_deck*'s lock file.
    """
    prepared = prepare_build(sources, full_deck, options)
    return write_split(prepared.corpus, prepared.plan, folder)


def list_topics(sources: Sequence[Path] = DEFAULT_SOURCES, options: BuildOptions = BuildOptions(), *,
                explain: bool = False) -> TopicReport:
    """Every topic with its PR and card counts, and the PRs that match no topic; nothing is written.

    With *explain*, also every PR's topics with the words that matched (see :func:`~deckgen.curriculum.topics.explain_topics`).
    """
    return topic_report(build_corpus(sources, options), explain=explain)
