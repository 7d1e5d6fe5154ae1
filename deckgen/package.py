"""Cards → .apkg.  The only stage that writes.

The package is written deterministically (fixed zip dates and entry order,
deflated entries, ids derived from the build timestamp) and atomically (see
:mod:`deckgen.atomic`), so an interrupted build never leaves a half-written
deck and never a deck that disagrees with its lock file.
"""

from __future__ import annotations

import io
import json
import re
import sqlite3
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import genanki

from .atomic import atomic_files
from .errors import OutputError
from .markup import cloze_to_html, escape, to_html
from .notetypes import cloze_model, qa_model
from .types import Card, CardKind

GUID_NAMESPACE = "deckgen/v1"
DEFAULT_DECK_NAME = "PR 设计决策"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_TAG_UNSAFE = re.compile(r"[\s\"]+")


def card_guid(card: Card) -> str:
    """The note's identity in every collection: namespace, repository, PR and the card's stable key."""
    return genanki.guid_for(GUID_NAMESPACE, *card.guid_parts)


def tag(*parts: str) -> str:
    return "::".join(_TAG_UNSAFE.sub("_", part.strip()) for part in parts if part.strip())


def card_tags(card: Card) -> list[str]:
    owner, _, name = card.entry.repo.partition("/")
    tags = ["deckgen", tag("repo", owner, name), tag("verdict", card.verdict.value),
            tag("kind", card.kind.value), tag("rel", card.relation.value)]
    tags.extend(card.tags)
    return sorted(set(tags))


def note_fields(card: Card) -> list[str]:
    """Field values in note-type order (see :mod:`deckgen.notetypes`), all HTML-escaped."""
    verdict = card.verdict.label
    shared = [escape(card.cue), escape(card.entry.title), to_html(card.sentence),
              escape(f"{card.entry.repo} · {card.entry.path.name}:{card.line}"), escape(verdict), ""]
    if card.kind == CardKind.CLOZE:
        return [cloze_to_html(card.prompt), *shared]
    return [to_html(card.prompt), to_html(card.answer), *shared]


class DeckNote(genanki.Note):
    """A note with its own modification time (genanki gives every note the package's)."""

    def __init__(self, *args: object, mod: int, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.mod = mod

    def write_to_db(self, cursor, timestamp, deck_id, id_gen):  # type: ignore[no-untyped-def]
        super().write_to_db(cursor, self.mod, deck_id, id_gen)


def deck_id_for(name: str) -> int:
    """A stable deck id (Anki matches decks by name; the id only has to be a stable int that is not 1)."""
    from .types import short_hash

    return (1 << 30) + int(short_hash(name, 8), 16) % (1 << 30)


@dataclass(frozen=True)
class DeckPlan:
    """Everything :func:`write_apkg` needs: which notes go to which deck, with what mtime."""

    cards: Sequence[Card]
    deck_name: str = DEFAULT_DECK_NAME
    timestamp: int = 0
    mods: dict[str, int] | None = None
    description: str = ""


def build_package(plan: DeckPlan) -> genanki.Package:
    qa, cloze = qa_model(), cloze_model()
    decks: dict[str, genanki.Deck] = {}
    for position, card in enumerate(plan.cards):
        name = f"{plan.deck_name}::{card.entry.repo}"
        deck = decks.get(name)
        if deck is None:
            deck = decks[name] = genanki.Deck(deck_id_for(name), name, description=plan.description)
        guid = card_guid(card)
        mod = (plan.mods or {}).get(guid, plan.timestamp)
        deck.add_note(DeckNote(model=cloze if card.kind == CardKind.CLOZE else qa, fields=note_fields(card),
                               tags=card_tags(card), guid=guid, due=position, mod=mod))
    return genanki.Package([decks[name] for name in sorted(decks)])


def write_apkg(plan: DeckPlan, output: Path, *, also: Mapping[Path, bytes] | None = None) -> Path:
    """Write *plan* to *output* atomically and reproducibly; return the path written.

    *also* maps further files (the lock file) to their new bytes: they are
    replaced together with the deck, or, if the build is interrupted, none is.
    """
    output = Path(output)
    if output.is_dir():
        raise OutputError(f"{output}: is a folder; give a file name such as {output / 'deck.apkg'}")
    data = apkg_bytes(plan)
    with atomic_files() as staging:
        staging.write_bytes(output, data)
        for path, content in sorted((also or {}).items()):
            staging.write_bytes(path, content)
    return output


def apkg_bytes(plan: DeckPlan) -> bytes:
    """The .apkg as bytes: an in-memory collection, zipped with fixed dates and order.

    Never genanki's ``write_to_file``, which leaves a temporary SQLite file in
    ``$TMPDIR`` on every call and writes non-reproducible zips.
    """
    package = build_package(plan)
    connection = sqlite3.connect(":memory:")
    try:
        id_gen = iter(range(plan.timestamp * 1000, plan.timestamp * 1000 + 10_000_000))
        package.write_to_db(connection.cursor(), plan.timestamp, id_gen)
        connection.commit()
        collection = connection.serialize()
    finally:
        connection.close()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in (("collection.anki2", collection), ("media", json.dumps({}).encode())):
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()
