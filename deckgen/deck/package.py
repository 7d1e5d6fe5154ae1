"""Cards → .apkg (and its lock file).  The only stage that writes.

The package is written deterministically (fixed zip dates and entry order,
deflated entries; GUIDs, note ids and per-note mtimes from the lock file, see
:mod:`deckgen.deck.lock`) and atomically (see
:mod:`deckgen.files.atomic`), so an interrupted build never leaves a half-written
deck and never a deck that disagrees with its lock file.
"""

from __future__ import annotations

import io
import itertools
import json
import sqlite3
import sys
import threading
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from ..errors import OutputError
from ..files.atomic import Staging, atomic_files, scratch_file
from ..options import DEFAULT_DECK_NAME
from ..text.markup import escape, sanitize_html
from ..types import Card
from .collection import NoteRow, PackageDeck, write_collection
from .lock import FIELD_NAMES, BuiltNote, Lock, LockedNote, lock_hasher, lock_path_for
from .notes import built_note, model_id, tag
from .notetypes import CLOZE_MODEL_ID, cloze_model, qa_model
from .thirdparty import genanki

_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
# Deflate's fastest level: a deck of 10,000 PRs (a 59 MB collection) zips in 0.23 s instead of 0.62 s at the
# default level 6, into 9.65 MB instead of 8.40 MB (+15%).  A rebuild writes the whole deck every time.
_DEFLATE_LEVEL = 1
_ZIP_CHUNK = 1 << 20
"""Deflated at a time: how long an interrupted build waits for the zip (about 4 ms)."""
OBSOLETE_TAG = "deckgen::obsolete"
OBSOLETE_BANNER = "已过时：这张卡的来源已从种子文件中删除。可在浏览器中搜索 tag:deckgen::obsolete 删除或暂停。"


def obsolete_note(note: LockedNote) -> tuple[list[str], list[str]]:
    """Fields and tags of a note whose source disappeared: what users have, plus a banner and a tag."""
    names = FIELD_NAMES[note.model]
    stored = [*note.fields, *[""] * (len(names) - len(note.fields))]  # a field added since it was stored
    # The lock file is input too (edited by hand, merged by git): its HTML is made safe again.
    cloze = note.model == CLOZE_MODEL_ID
    fields = [escape(OBSOLETE_BANNER) if name == "Status" else sanitize_html(value, cloze=cloze)
              for name, value in zip(names, stored)]
    tags = {tag(t) for t in note.tags} - {""}
    return fields, sorted({*tags, OBSOLETE_TAG})


def deck_id_for(name: str) -> int:
    """A stable deck id (Anki matches decks by name; the id only has to be a stable int that is not 1)."""
    from ..types import short_hash

    return (1 << 30) + int(short_hash(name, 8), 16) % (1 << 30)


class LockKeeper(Protocol):
    """Keeps a lock file a build just wrote, so that the next build need not parse it (the cache's lock memo)."""

    def remember(self, path: Path, lock: Lock, digest: str) -> None:
        """Keep *lock*, just written to *path* as bytes of *digest* (:func:`~deckgen.deck.lock.lock_digest`)."""


@dataclass(frozen=True)
class DeckPlan:
    """Everything :func:`write_apkg` needs: which notes go to which deck, with what mtime."""

    cards: Sequence[Card]
    deck_name: str = DEFAULT_DECK_NAME
    timestamp: int = 0
    mods: dict[str, int] | None = None
    description: str = ""
    card_count: int | None = None
    """The Anki cards of :attr:`cards` (a cloze note gives one per deletion), when counted already."""
    lock: Lock | None = None
    """When set: every card's GUID, note id and mtime, the obsolete notes to ship, note type mtimes."""
    notes: Sequence[BuiltNote] = ()
    """The notes of :attr:`cards`, in their order, already rendered by :func:`built_note` (the build renders every
    card for the lock first); empty: each is rendered as it is written.  By position, not a mapping keyed by
    card: hashing a card hashes its entry too (a third of a second for 50,000 cards)."""
    locked: Sequence[LockedNote | None] = ()
    """The note in :attr:`lock` of each of :attr:`cards`, in their order (None: not in it); empty: each is looked
    up as it is written."""
    only: Mapping[str, Sequence[str]] | None = None
    """When set, the package holds only the notes of these GUIDs, each with the tags given for it besides its own
    (a push sends the notes a collection lacks or holds an older version of, with the learner's tags); every
    note keeps the study position it has in the whole package.  None: every note."""


def package_decks(plan: DeckPlan) -> list[PackageDeck]:
    """The decks of *plan* (one per repository, by name), each making its notes' rows as it is written.

    Rows are made a deck at a time, never all at once: a deck of 100,000 PRs has half a million notes.
    """
    models = {m.model_id: m for m in (qa_model(), cloze_model())}
    only = plan.only
    obsolete = sorted((n for n in (plan.lock.notes if plan.lock else ())
                       if n.obsolete and (only is None or n.guid in only)), key=lambda n: n.nid)
    # Looked up once, not once per note (a row per note: 51,816 in a deck of 10,000 PRs).
    notes, cards, mods = plan.notes, plan.cards, plan.mods or {}
    # A plan made by topicdecks carries each card's lock note; one made by hand is looked up here, once per card.
    lock = plan.lock
    locked_notes = plan.locked or [lock.note_for(c.entry.pr_key, c.key) if lock else None for c in cards]

    def guid_at(position: int) -> str:
        locked = locked_notes[position]
        return locked.guid if locked else (notes[position] if notes else built_note(cards[position])).guid

    members: dict[str, tuple[list[int], list[int]]] = {}  # deck name → positions of its cards, of its obsolete notes
    for position, card in enumerate(plan.cards):
        if only is None or guid_at(position) in only:
            members.setdefault(f"{plan.deck_name}::{card.entry.repo}", ([], []))[0].append(position)
    for index, note in enumerate(obsolete):
        members.setdefault(f"{plan.deck_name}::{note.repo}", ([], []))[1].append(index)

    def also(guid: str, tags: tuple[str, ...]) -> tuple[str, ...]:
        kept = only.get(guid) if only else None
        return tuple(sorted({*tags, *kept})) if kept else tags

    def card_row(position: int) -> NoteRow:
        built = notes[position] if notes else built_note(cards[position])
        locked = locked_notes[position]
        if locked:
            return NoteRow(models[built.model], built.fields, also(locked.guid, built.tags), locked.guid, position,
                           locked.mod, locked.nid)
        return NoteRow(models[built.model], built.fields, also(built.guid, built.tags), built.guid, position,
                       mods.get(built.guid, plan.timestamp))

    def obsolete_row(index: int) -> NoteRow:
        note = obsolete[index]
        fields, tags = obsolete_note(note)
        return NoteRow(models[note.model], tuple(fields), also(note.guid, tuple(tags)), note.guid,
                       len(plan.cards) + index, note.mod, note.nid)

    def deck(name: str) -> PackageDeck:
        cards, gone = members[name]
        # Note types in order of first use, as genanki adds them to a deck.
        used = [model_id(plan.cards[p]) for p in cards] + [obsolete[i].model for i in gone]
        return PackageDeck(genanki.Deck(deck_id_for(name), name, description=plan.description),
                           [models[m] for m in dict.fromkeys(used)],
                           lambda: itertools.chain(map(card_row, cards), map(obsolete_row, gone)))

    return [deck(name) for name in sorted(members)]


def package_rows(plan: DeckPlan) -> Iterator[NoteRow]:
    """Every note a package of *plan* holds, as its row, deck by deck."""
    for deck in package_decks(plan):
        yield from deck.rows()


def write_apkg(plan: DeckPlan, output: Path, *, also: Mapping[Path, bytes] | None = None,
               memo: LockKeeper | None = None) -> Path:
    """Write *plan* to *output* atomically and reproducibly; return the path written.

    *also* maps further files to their new bytes: they are replaced together
    with the deck, or, if the build is interrupted, none is.  The plan's lock
    (if any) is one of them, at :func:`~deckgen.deck.lock.lock_path_for` *output*;
    *memo* then remembers it, so the next build need not parse it.
    """
    output = Path(output)
    if output.is_dir():
        raise OutputError(f"{output}: is a folder; give a file name such as {output / 'deck.apkg'}")
    # Streamed, not built in memory: the collection goes to a scratch file beside the deck and the
    # lock file is written a note at a time (a deck of 100,000 PRs is ~0.6 GB of SQLite, ~0.5 GB of lock).
    with atomic_files() as staging:
        with staging.open(output) as handle, scratch_file(output.parent, ".anki2") as collection:
            _write_collection_file(plan, collection)
            # zlib deflates without the GIL (0.23 s for the collection of 10,000 PRs): the lock file is written
            # and remembered meanwhile, not after.
            stop = threading.Event()
            zipping = _Background("deckgen-zip", _zip_collection, collection, handle, stop)
            try:
                if plan.lock is not None:
                    _write_lock(plan.lock, staging, lock_path_for(output), memo)
                zipping.result()
            finally:
                stop.set()  # after an error or an interrupt: the zip gives up at its next chunk, not at its end
                zipping.join()
        for path, content in sorted((also or {}).items()):
            staging.write_bytes(path, content)
    return output


class _Background(threading.Thread):
    """``work(*args)`` in a thread of its own, started at once; :meth:`result` waits for it and raises what it raised.

    A thread rather than a ThreadPoolExecutor: concurrent.futures, and the logging it imports, took 6 ms of every
    build, 3% of a rebuild with nothing new.
    """

    def __init__(self, name: str, work: Callable[..., None], *args: object) -> None:
        super().__init__(name=name)
        self._work, self._args = work, args
        self._error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self._work(*self._args)
        except BaseException as error:  # handed to the thread that waits for it
            self._error = error

    def result(self) -> None:
        self.join()
        if self._error is not None:
            raise self._error


def _write_lock(lock: Lock, staging: Staging, path: Path, memo: LockKeeper | None) -> None:
    digest = lock_hasher()
    with staging.open(path) as handle:
        for chunk in lock.byte_chunks():
            digest.update(chunk)
            handle.write(chunk)
    if memo is not None:
        # Before the files are in place, so during the zip: a memo is only ever used for a file of its digest.
        memo.remember(path, lock, digest.hexdigest())


def write_decks(plans: Mapping[Path, DeckPlan], *, also: Mapping[Path, bytes] | None = None) -> list[Path]:
    """Write several decks (and companion files such as an index) together: all of them, or none."""
    data = {Path(path): apkg_bytes(plan) for path, plan in plans.items()}
    with atomic_files() as staging:
        for path, content in sorted({**data, **(also or {})}.items()):
            staging.write_bytes(path, content)
    return sorted(data)


def apkg_bytes(plan: DeckPlan) -> bytes:
    """The .apkg as bytes, made in memory (the same bytes :func:`write_apkg` writes)."""
    connection = sqlite3.connect(":memory:")
    try:
        _fill_collection(plan, connection)
        collection = connection.serialize()
    finally:
        connection.close()
    buffer = io.BytesIO()
    with _apkg_zip(buffer) as archive:
        archive.writestr(_zip_info("collection.anki2"), collection)
    return buffer.getvalue()


def _write_collection_file(plan: DeckPlan, path: Path) -> None:
    connection = sqlite3.connect(path)
    try:
        # A scratch file: nothing to roll back to, nothing to make durable.
        connection.execute("pragma journal_mode = off")
        connection.execute("pragma synchronous = off")
        # SQLite's default page cache (2 MiB), not more: 64 MiB saved 0.07 s of system time on 10,000 PRs but
        # raised the build's memory peak by as much, and the peak of 100,000 PRs is near its 2 GB budget.
        _fill_collection(plan, connection)
    finally:
        connection.close()


class _Stopped(Exception):
    """The zip was told to stop: the build failed or was interrupted meanwhile."""


def _zip_collection(collection: Path, handle: BinaryIO, stop: threading.Event) -> None:
    """The .apkg of the collection file *collection* into *handle*, the same bytes as :func:`apkg_bytes`;
    given up at the next chunk once *stop* is set."""
    info = _zip_info("collection.anki2")
    info.file_size = collection.stat().st_size  # as writestr sets it: the same local header
    with _apkg_zip(handle) as archive:
        with collection.open("rb") as src, archive.open(info, "w") as dest:
            dest.write(_as_in_memory(src.read(100)))
            while chunk := src.read(_ZIP_CHUNK):
                if stop.is_set():
                    raise _Stopped
                dest.write(chunk)


@contextmanager
def _apkg_zip(handle: BinaryIO) -> Iterator[zipfile.ZipFile]:
    """A zip of fixed dates and order: the collection written inside the block, then the (empty) media list.

    Never genanki's ``write_to_file``, which leaves a temporary SQLite file in
    ``$TMPDIR`` on every call and writes non-reproducible zips.
    """
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        yield archive
        archive.writestr(_zip_info("media"), json.dumps({}).encode())


def _fill_collection(plan: DeckPlan, connection: sqlite3.Connection) -> None:
    id_gen = iter(range(plan.timestamp * 1000, plan.timestamp * 1000 + 10_000_000))
    cursor = connection.cursor()
    write_collection(cursor, package_decks(plan), plan.timestamp, id_gen)
    if plan.lock is not None:
        _date_notetypes(cursor, {mid: state.changed for mid, state in plan.lock.notetypes.items()})
    connection.commit()


def _as_in_memory(header: bytes) -> bytes:
    """A database file's 100-byte header as an in-memory database's image has it.

    A file records its change counter (bytes 24-27), the counter its size field
    is valid for and the SQLite version that wrote it (92-99); an in-memory
    database leaves all three zero.  Zeroing them makes the deck the same bytes
    whichever way it was made (and across SQLite versions); SQLite reads zero =
    zero as "the size field is valid", as in every deck made in memory.
    """
    return header[:24] + bytes(4) + header[28:92] + bytes(8) + header[100:]


def _zip_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    if sys.version_info >= (3, 13):
        info.compress_level = _DEFLATE_LEVEL
    else:  # its name before 3.13; ZipFile.open(info, "w") has no other way to take a level
        info._compresslevel = _DEFLATE_LEVEL  # type: ignore[attr-defined]
    info.external_attr = 0o644 << 16
    return info


def _date_notetypes(cursor: sqlite3.Cursor, mods: dict[int, int]) -> None:
    """Each note type's mtime is when its templates last changed, so "If newer" brings only real changes."""
    (models_json,) = cursor.execute("select models from col").fetchone()
    models = json.loads(models_json)
    for mid, model in models.items():
        if int(mid) in mods:
            model["mod"] = mods[int(mid)]
    cursor.execute("update col set models = ?", (json.dumps(models),))
