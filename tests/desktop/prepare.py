"""Prepare a throw-away Anki base folder for the desktop reviewer test, before Anki starts.

    python tests/desktop/prepare.py BASE DECK.apkg SPEC
    python tests/desktop/prepare.py BASE                  # the profile alone (the push tests)

Run with a Python that has aqt and anki (the test's own): it builds ``prefs21.db`` and one
profile with Anki's own ProfileManager, so that Anki opens without a first-run dialog, a
profile picker, a sync, an update check or a backup; then it imports the deck into the
profile's collection with Anki's importer (no import UI) and prints the chosen cards as JSON.

SPEC is a comma-separated list of card ids, ``first:N`` (the first N cards, in new-card
order, of each note type), ``kind:N`` (the first N of each ``kind::`` tag, so glossary cards
too) or ``code:N`` (the first N cards of each note type with ``<code>`` in the answer or in
the card's own cloze deletion).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

PROFILE = "deckgen"


def seed_prefs(base: Path) -> None:
    """prefs21.db with a finished first run, one profile, and nothing that talks to the network."""
    from aqt.profiles import ProfileManager, Theme, VideoDriver

    pm = ProfileManager(ProfileManager.get_created_base_folder(str(base)))
    pm.setupMeta()  # creates prefs21.db and the _global row
    pm.meta.update(
        firstRun=False,  # skips aqt.main.setupProfile's first-run branch
        defaultLang="en_US",  # the first-run language dialog only shows when prefs21.db is new
        updates=False, suppressUpdate=True,
        check_for_updates=False,  # aqt.update.check_for_update (AnkiWeb) never runs
        check_for_addon_updates=False,  # maybe_check_for_addon_updates returns at once
        last_addon_update_check=int(time.time()),
        theme=Theme.LIGHT.value,  # no dbus/gsettings probe for the system theme
    )
    pm.create(PROFILE)
    pm.load(PROFILE)
    pm.profile.update(
        syncKey=None, autoSync=False, syncMedia=False,  # no sync on open or close
        numBackups=0, lastOptimize=int(time.time()),  # no optimize on close
    )
    pm.save()
    pm.db.close()
    # Qt Quick's software backend: no GL context, so no "graphics driver" message box (which would
    # block start-up before any add-on runs) on a machine without working GL.
    pm.set_video_driver(VideoDriver("software"))


def build_collection(base: Path, apkg: Path, spec: str) -> list[dict[str, Any]]:
    from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest

    folder = base / PROFILE
    folder.mkdir(parents=True, exist_ok=True)
    col = Collection(str(folder / "collection.anki2"))
    try:
        col.import_anki_package(ImportAnkiPackageRequest(
            package_path=str(apkg), options=ImportAnkiPackageOptions(with_scheduling=False)))
        cards = select_cards(col, spec)
        if not cards:
            raise SystemExit(f"prepare: no card matches {spec!r}")
        # The reviewer needs a due card in the current deck to open; which one it shows first does
        # not matter (the add-on replaces it), so select the first chosen card's deck and give its
        # options a generous new-card limit.
        did = col.get_card(cards[0]["cid"]).did
        col.decks.select(did)
        conf = col.decks.config_dict_for_deck_id(did)
        conf["new"]["perDay"] = 9999
        col.decks.update_config(conf)
    finally:
        col.close()
    return cards


_CLOZE = re.compile(r"\{\{c(\d+)::(.*?)\}\}", re.S)


def _answer_has_code(fields: dict[str, str], ord_: int) -> bool:
    if "Answer" in fields:
        return "<code" in fields["Answer"]
    return any(int(n) == ord_ + 1 and "<code" in body for n, body in _CLOZE.findall(fields.get("Text", "")))


def select_cards(col: Any, spec: str) -> list[dict[str, Any]]:
    rows = col.db.all("select c.id, c.nid, c.ord from cards c order by c.due, c.ord, c.id")
    info = []
    for cid, nid, ord_ in rows:
        note = col.get_note(nid)
        notetype = note.note_type()["name"]
        kind = next((t.split("::", 1)[1] for t in note.tags if t.startswith("kind::")), notetype)
        fields = dict(note.items())
        info.append({"cid": cid, "nid": nid, "ord": ord_, "notetype": notetype, "kind": kind,
                     "repo": next((t.split("::", 1)[1].replace("::", "/") for t in note.tags
                                   if t.startswith("repo::")), ""),
                     "answer_has_code": _answer_has_code(fields, ord_)})
    chosen: list[dict[str, Any]] = []

    def take(group_key: Any, n: int, pred: Any = lambda c: True) -> None:
        counts: dict[str, int] = {}
        for c in info:
            if not pred(c):
                continue
            k = group_key(c)
            if counts.get(k, 0) < n:
                counts[k] = counts.get(k, 0) + 1
                if c not in chosen:
                    chosen.append(c)

    for token in filter(None, (t.strip() for t in spec.split(","))):
        if token.isdigit():
            match = [c for c in info if c["cid"] == int(token)]
            if not match:
                raise SystemExit(f"prepare: no card {token} in the deck")
            chosen.extend(m for m in match if m not in chosen)
        elif m := re.fullmatch(r"(first|kind|code):(\d+)", token):
            what, n = m.group(1), int(m.group(2))
            if what == "first":
                take(lambda c: c["notetype"], n)
            elif what == "kind":
                take(lambda c: c["kind"], n)
            else:
                take(lambda c: c["notetype"], n, lambda c: c["answer_has_code"])
        else:
            raise SystemExit(f"prepare: bad card spec {token!r} (ids, first:N, kind:N or code:N)")
    return chosen


def main(argv: list[str]) -> int:
    if len(argv) == 1:  # the profile alone, with an empty collection (the push tests)
        seed_prefs(Path(argv[0]))
        return 0
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    base, apkg, spec = Path(argv[0]), Path(argv[1]), argv[2]
    seed_prefs(base)
    cards = build_collection(base, apkg, spec)
    sys.stdout.write(json.dumps(cards, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
