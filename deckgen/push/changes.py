"""What a push must change in a collection: the deck's notes against what the collection holds.  Pure.

Takes the notes a package of the deck holds (:func:`deckgen.deck.package.package_rows`), the
collection's :class:`~deckgen.push.state.CollectionState` and deckgen's note types; gives a
:class:`PushPlan`.  The first two rules are an import's, the last two a push's own:

* a note is matched by GUID; one the collection lacks is new (an obsolete one is not brought back);
* a note the collection holds is updated only when it is older there than the deck's change to it
  (the lock file's date), as Anki's importer decides "If newer": an edit made in Anki after the deck
  changed the note stays;
* an update keeps the learner's tags: deckgen's own (:func:`deckgen.deck.notes.own_tag`) are replaced,
  every other tag stays;
* an obsolete note is tagged ``deckgen::obsolete`` and its cards suspended, or it is deleted.

A collection whose note types differ in shape from deckgen's gets nothing: an import would merge them
and re-date every note of theirs, so :func:`plan_push` stops with what to do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..deck.collection import NoteRow
from ..deck.describe import count_lines, describe_difference, describe_note
from ..deck.lock import Lock, content_fields
from ..deck.notes import own_tag
from ..deck.notetypes import cloze_model, qa_model
from ..deck.package import OBSOLETE_TAG
from ..errors import DeckgenError
from .state import AnkiNote, CollectionState, NoteType


@dataclass(frozen=True)
class Pending:
    """A note of the deck that the push sends, and what the collection holds of it (None: nothing)."""

    row: NoteRow
    held: AnkiNote | None = None

    @property
    def kept_tags(self) -> tuple[str, ...]:
        """The learner's tags on the collection's note, which the update keeps."""
        return tuple(t for t in self.held.tags if not own_tag(t)) if self.held else ()

    def describe(self) -> str:
        model = self.row.model.model_id
        if self.held is None:
            return describe_note(model, self.row.fields)
        return describe_difference(model, self.held.fields, self.row.fields, self.held.tags, self.row.tags)


@dataclass(frozen=True)
class PushPlan:
    """What a push sends: notes to import, obsolete notes to mark or delete, note types to update."""

    new: tuple[Pending, ...]
    updated: tuple[Pending, ...]
    """Older in the collection than the deck's change: fields and deckgen's tags replaced, the learner's kept."""
    unchanged: int
    edited: tuple[Pending, ...]
    """Different from the deck, but edited in Anki after the deck last changed them: left as they are."""
    obsolete: tuple[AnkiNote, ...]
    """Obsolete notes the collection holds: tagged and suspended, or deleted (see :attr:`delete`)."""
    retired: tuple[Pending, ...]
    """Those of :attr:`obsolete` older in the collection than their retirement: they get its banner and tag."""
    delete: bool
    notetypes: tuple[NoteType, ...]
    """Note types whose templates or styling are older in the collection than the deck's: updated."""

    @property
    def sent(self) -> tuple[Pending, ...]:
        """The notes that go into the collection in packages: new, updated and retired ones."""
        return self.new + self.updated + self.retired

    @property
    def to_tag(self) -> tuple[int, ...]:
        """Note ids of obsolete notes that lack the tag and get no package to bring it."""
        retired = {p.row.guid for p in self.retired}
        return tuple(n.nid for n in self.obsolete if n.guid not in retired and not _has_tag(n, OBSOLETE_TAG))

    @property
    def work(self) -> int:
        """How many steps the push takes: a note sent, an obsolete note suspended or deleted, a note type updated."""
        return len(self.sent) + len(self.obsolete) + len(self.notetypes)

    def lines(self, url: str) -> list[str]:
        """What the push would change, as ``deckgen push --dry-run`` prints it."""
        out = [f"Push to Anki at {url}: what would change in the collection (nothing was written or sent)"]
        out += count_lines("new", self.new, Pending.describe)
        out += count_lines("update", self.updated, Pending.describe)
        out += count_lines("edited", self.edited, Pending.describe, "differ, but edited in Anki since: left as they are")
        out.append(f"  unchanged {self.unchanged:>5}")
        out += count_lines("delete" if self.delete else "suspend", self.obsolete,
                           lambda n: describe_note(n.model, n.fields), "obsolete")
        for notetype in self.notetypes:
            out.append(f"  note type {notetype.name}: templates and styling updated")
        return out


def deck_notetypes(lock: Lock) -> tuple[NoteType, ...]:
    """deckgen's note types as the deck whose lock is *lock* ships them."""
    out = []
    for model in (qa_model(), cloze_model()):
        shipped = lock.notetypes.get(model.model_id)
        out.append(NoteType(model.model_id, model.name, tuple(f["name"] for f in model.fields),
                            {t["name"]: (t["qfmt"], t["afmt"]) for t in model.templates}, model.css,
                            shipped.changed if shipped else 0))
    return tuple(out)


def plan_push(rows: Iterable[NoteRow], state: CollectionState, notetypes: Sequence[NoteType], *,
              delete_obsolete: bool = False) -> PushPlan:
    """What to send so that the collection holds the deck whose package holds *rows*."""
    _check_notetypes(state, notetypes)
    new: list[Pending] = []
    updated: list[Pending] = []
    edited: list[Pending] = []
    obsolete: list[AnkiNote] = []
    retired: list[Pending] = []
    other_type: list[AnkiNote] = []
    unchanged = 0
    for row in rows:
        held = state.notes.get(row.guid)
        gone = OBSOLETE_TAG in row.tags
        if held is None:
            if not gone:
                new.append(Pending(row))
        elif held.model != row.model.model_id:
            other_type.append(held)
        elif gone:
            obsolete.append(held)
            if not delete_obsolete and held.mod < row.mod and not _same(held, row):
                retired.append(Pending(row, held))
        elif _same(held, row):
            unchanged += 1
        elif held.mod < row.mod:
            updated.append(Pending(row, held))
        else:
            edited.append(Pending(row, held))
    if other_type:
        raise DeckgenError(f"{len(other_type)} note(s) of this deck are of another note type in Anki (a copy of a "
                           "deckgen note type, made when an import could not merge them): import the deck's .apkg "
                           "with 'Merge note types' ticked (README, 'Note types'), then push again")
    # Named as the collection names them: AnkiConnect finds note types by name, and a learner may rename one.
    changed_types = tuple(replace(t, name=state.notetypes[t.id].name) for t in notetypes if _older(state, t))
    return PushPlan(tuple(new), tuple(updated), unchanged, tuple(edited), tuple(obsolete), tuple(retired),
                    delete_obsolete, changed_types)


def _check_notetypes(state: CollectionState, notetypes: Sequence[NoteType]) -> None:
    """Stop before anything is sent when a note type in the collection has other fields or templates than deckgen's."""
    for ours in notetypes:
        theirs = state.notetypes.get(ours.id)
        if theirs is None:
            continue  # an import adds it, with its id
        what = None
        if theirs.fields != ours.fields:
            what = f"fields {', '.join(theirs.fields)}; this deck's are {', '.join(ours.fields)}"
        elif sorted(theirs.templates) != sorted(ours.templates):
            what = f"card types {', '.join(sorted(theirs.templates))}; this deck's are {', '.join(sorted(ours.templates))}"
        if what:
            raise DeckgenError(f"the note type {theirs.name!r} in Anki has {what}: nothing was pushed. Undo the change "
                               f"in Anki (Tools → Manage Note Types → {theirs.name} → Fields), or, if deckgen changed "
                               "it (deckgen plan says so), import the .apkg as README 'Note types' says")


def _older(state: CollectionState, ours: NoteType) -> bool:
    """Whether the collection's copy of *ours* differs and is older than the deck's (an import's "If newer")."""
    theirs = state.notetypes.get(ours.id)
    if theirs is None or (theirs.templates == ours.templates and theirs.css == ours.css):
        return False
    return theirs.mod < ours.mod


def _same(held: AnkiNote, row: NoteRow) -> bool:
    """The collection's note says what the deck's does: the same fields (where in the seeds aside) and deckgen tags."""
    model = held.model
    if content_fields(model, held.fields) != content_fields(model, row.fields):
        return False
    return {t.casefold() for t in held.tags if own_tag(t)} == {t.casefold() for t in row.tags}


def _has_tag(note: AnkiNote, tag: str) -> bool:
    return tag.casefold() in {t.casefold() for t in note.tags}
