"""The whole pipeline as one call: seed files in, an .apkg out."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .cards import make_cards
from .extract import extract_review
from .gate import anki_cards
from .lint import review_findings
from .lock import DEFAULT_GRACE, Update, lock_path_for, read_lock, reconcile
from .notetypes import fingerprints
from .package import DEFAULT_DECK_NAME, DeckPlan, built_note, write_apkg
from .parse import read_corpus
from .progress import NO_PROGRESS, Progress, StageClock
from .segment import get_segmenter
from .types import BuildReport, Card, DeckChanges, Level, Review

DEFAULT_SOURCES = (Path("seeds"),)
DEFAULT_OUTPUT = Path("decks") / "deckgen.apkg"
MIN_CARDS_PER_PR = 3


@dataclass(frozen=True)
class Corpus:
    """What the extract and card stages made of a set of seed files."""

    files: tuple[Path, ...]
    reviews: tuple[Review, ...]
    cards: tuple[Card, ...]
    warnings: tuple[str, ...]


def build_corpus(sources: Iterable[Path] = DEFAULT_SOURCES, *, progress: Progress = NO_PROGRESS) -> Corpus:
    """Parse, extract and make cards for every entry named by *sources*; nothing is written.

    Bad input (any error ``deckgen lint`` reports) raises :class:`~deckgen.errors.SeedError`
    before any card is made.  *progress* hears of each entry done and of each stage's time.
    """
    clock = StageClock()
    with clock.measure("read"):
        scan = read_corpus(sources)
    with clock.measure("segmenter"):
        seg = get_segmenter()
    reviews: list[Review] = []
    cards: list[Card] = []
    warnings = [f"{f.where}: {f.text}" for f in scan.findings if f.level == Level.WARNING]
    progress.begin(len(scan.entries))
    for entry in scan.entries:
        with clock.measure("extract"):
            review = extract_review(entry, seg)
        with clock.measure("cards"):
            made = make_cards(review, seg)
        progress.advance()
        reviews.append(review)
        cards.extend(made)
        where = f"{entry.path}:{entry.title_line}"
        count = sum(anki_cards(c) for c in made)
        if count < MIN_CARDS_PER_PR:
            warnings.append(f"{where}: only {count} card(s) for this PR; the review names few decisions deckgen can read")
        warnings.extend(f"{finding.where}: {finding.text}" for finding in review_findings(review))
    progress.end()
    clock.report(progress, {"read": f"{len(scan.files)} seed file(s), {len(reviews)} entries",
                            "extract": f"{sum(len(r.facts) for r in reviews)} facts",
                            "cards": f"{len(cards)} notes"})
    return Corpus(scan.files, tuple(reviews), tuple(cards), tuple(warnings))


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
        return BuildReport(output=self.output, entries=len(self.corpus.reviews),
                           cards=sum(anki_cards(c) for c in self.corpus.cards), files=len(self.corpus.files),
                           warnings=self.corpus.warnings, lock=self.lock_path, changes=changes)


def prepare_build(
    sources: Sequence[Path] = DEFAULT_SOURCES,
    output: Path = DEFAULT_OUTPUT,
    *,
    deck_name: str = DEFAULT_DECK_NAME,
    timestamp: int | None = None,
    grace: int = DEFAULT_GRACE,
    prune: bool = False,
    progress: Progress = NO_PROGRESS,
) -> PreparedBuild:
    """Everything :func:`build_deck` would write, worked out in memory (for build, ``--check`` and plan)."""
    output = Path(output)
    corpus = build_corpus(sources, progress=progress)
    old = read_lock(lock_path_for(output))
    stamp = build_timestamp() if timestamp is None else timestamp
    update = reconcile(old, [built_note(c) for c in corpus.cards], fingerprints(), now=stamp, grace=grace, prune=prune)
    plan = DeckPlan(corpus.cards, deck_name=deck_name, timestamp=update.lock.latest(), lock=update.lock)
    return PreparedBuild(corpus, update, plan, output)


def build_deck(
    sources: Sequence[Path] = DEFAULT_SOURCES,
    output: Path = DEFAULT_OUTPUT,
    *,
    deck_name: str = DEFAULT_DECK_NAME,
    timestamp: int | None = None,
    grace: int = DEFAULT_GRACE,
    prune: bool = False,
    progress: Progress = NO_PROGRESS,
) -> BuildReport:
    """Build the deck for the seed files or folders in *sources*; write it and its lock file beside it.

    *timestamp* (default ``SOURCE_DATE_EPOCH``, else now) dates only what
    changed since the lock file; unchanged notes keep their dates, so a
    rebuild with no change is byte-identical.  Obsolete cards stay in the
    deck for *grace* more deck versions, or leave it now with *prune*.

    Raises :class:`~deckgen.errors.DeckgenError` with a message naming the file
    and line for bad input; nothing is written then.
    """
    prepared = prepare_build(sources, output, deck_name=deck_name, timestamp=timestamp, grace=grace, prune=prune,
                             progress=progress)
    clock = StageClock()
    with clock.measure("write"):
        write_apkg(prepared.plan, prepared.output)
    clock.report(progress, {"write": str(prepared.output)})
    return prepared.report()
