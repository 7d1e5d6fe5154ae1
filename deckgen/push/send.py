"""A :class:`~deckgen.push.changes.PushPlan` sent to Anki, in steps that each leave the collection valid.

Takes the deck's :class:`~deckgen.deck.package.DeckPlan`, the push plan and a scratch folder Anki can read;
gives a :class:`PushReport`.  New and updated notes go in as packages of the deck (``importPackage``,
:data:`NOTES_PER_PACKAGE` notes each): a package carries the GUIDs, note ids, note types and dates an
``.apkg`` import gives, Anki imports each in one transaction, and each note in it carries the learner's
tags besides deckgen's.  Then obsolete notes are tagged and suspended, or deleted (``multi``).  A push
cut short (Anki quits) leaves what it sent in place; the next push reads the collection again and
sends the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path

from ..deck.package import OBSOLETE_TAG, DeckPlan, apkg_bytes
from ..errors import DeckgenError
from ..progress import Progress
from ..types import BuildReport
from .changes import PushPlan
from .client import AnkiConnect, AnkiRefused, AnkiUnreachable

NOTES_PER_PACKAGE = 2000
"""Notes a package holds: enough that a package's own cost (its note types, the import's set-up) vanishes,
few enough that the progress bar moves and a push cut short has sent whole packages."""


class PushInterrupted(DeckgenError):
    """Anki stopped answering, or refused a step, after part of a push was sent."""


@dataclass(frozen=True)
class PushReport:
    """A push: the build it wrote (as ``deckgen build`` reports it), where it went, and what it changed."""

    build: BuildReport
    url: str
    plan: PushPlan
    sent: bool
    """False for ``--dry-run``: nothing written, nothing sent."""

    def summary(self) -> str:
        """The line ``deckgen push`` ends with."""
        plan = self.plan
        parts = [f"{len(plan.new)} new", f"{len(plan.updated)} updated", f"{plan.unchanged} unchanged",
                 f"{len(plan.obsolete)} obsolete {'deleted' if plan.delete else 'suspended'}"]
        if plan.edited:
            parts.append(f"{len(plan.edited)} left as edited in Anki")
        if plan.notetypes:
            parts.append(f"{len(plan.notetypes)} note type(s) updated")
        return f"Pushed to Anki at {self.url}: {', '.join(parts)} notes"


def send_push(anki: AnkiConnect, deck: DeckPlan, plan: PushPlan, folder: Path, progress: Progress) -> None:
    """Change the collection as *plan* says, *deck* giving the notes; :class:`PushInterrupted` if Anki stops."""
    total = plan.work
    done = 0
    progress.begin(total, "Pushing to Anki")
    try:
        if plan.notetypes:
            anki.multi([step for t in plan.notetypes for step in (
                ("updateModelTemplates", {"model": {"name": t.name, "templates": {
                    name: {"Front": front, "Back": back} for name, (front, back) in t.templates.items()}}}),
                ("updateModelStyling", {"model": {"name": t.name, "css": t.css}}))])
            done += _advance(progress, len(plan.notetypes))
        sent = iter(plan.sent)
        while chunk := list(islice(sent, NOTES_PER_PACKAGE)):
            package = folder / "push.apkg"
            package.write_bytes(apkg_bytes(replace(deck, only={p.row.guid: p.kept_tags for p in chunk})))
            anki.call("importPackage", path=str(package))
            package.unlink()
            done += _advance(progress, len(chunk))
        _obsolete(anki, plan)
        done += _advance(progress, len(plan.obsolete))
    except (AnkiUnreachable, AnkiRefused, OSError) as exc:
        reason = f"cannot write a package for Anki in {folder} ({exc})" if isinstance(exc, OSError) else str(exc)
        raise PushInterrupted(f"{reason} (the push stopped after {done} of {total} changes; what it sent is in the "
                              "collection, and the next deckgen push sends the rest)") from None
    finally:
        progress.end()


def _obsolete(anki: AnkiConnect, plan: PushPlan) -> None:
    """Obsolete notes deleted, or tagged and their cards suspended (those not suspended already)."""
    if not plan.obsolete:
        return
    if plan.delete:
        anki.call("deleteNotes", notes=[n.nid for n in plan.obsolete])
        return
    cards = [cid for note in plan.obsolete for cid in note.cards]
    tag = [("addTags", {"notes": list(plan.to_tag), "tags": OBSOLETE_TAG})] if plan.to_tag else []
    *_, suspended = anki.multi([*tag, ("areSuspended", {"cards": cards})])
    waiting = [cid for cid, done in zip(cards, suspended) if done is False]  # None: a card deleted meanwhile
    if waiting:
        anki.call("suspend", cards=waiting)


def _advance(progress: Progress, count: int) -> int:
    progress.advance(count)
    return count
