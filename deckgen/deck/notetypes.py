"""deckgen's two note types.  Their shape is a contract with every collection that imported a deck.

Anki matches note types by id and fields/templates by their ``id``: a renamed
field keeps its notes updating, but adding, removing or reordering a field or
template makes Anki fork the note type and skip every existing note as
"conflicting".  So the ids below are generated once and never change, and the
field lists only change with a deliberate :data:`SCHEMA_VERSION` bump
(see README, "Note types").  HTML and CSS live in ``templates/``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..types import short_hash
from ..files.datadir import data_dir
from .thirdparty import genanki

SCHEMA_VERSION = 1

QA_MODEL_ID = 1_559_912_837  # random.randrange(1 << 30, 1 << 31), generated once
CLOZE_MODEL_ID = 2_142_164_388
QA_MODEL_NAME = "deckgen Q/A"
CLOZE_MODEL_NAME = "deckgen Cloze"
NOTE_TYPE_IDS = (QA_MODEL_ID, CLOZE_MODEL_ID)

# (name, id): order is the field order in every note; never reorder.
QA_FIELDS: tuple[tuple[str, int], ...] = (
    ("Question", 1_591_625_101),
    ("Answer", 1_591_625_102),
    ("Cue", 1_591_625_103),
    ("Summary", 1_591_625_104),
    ("Sentence", 1_591_625_105),
    ("Source", 1_591_625_106),
    ("Verdict", 1_591_625_107),
    ("Status", 1_591_625_108),
)
CLOZE_FIELDS: tuple[tuple[str, int], ...] = (
    ("Text", 1_315_998_701),
    ("Cue", 1_315_998_702),
    ("Summary", 1_315_998_703),
    ("Sentence", 1_315_998_704),
    ("Source", 1_315_998_705),
    ("Verdict", 1_315_998_706),
    ("Status", 1_315_998_707),
)
QA_TEMPLATE = ("Recall", 1_591_625_201, "qa-front.html", "qa-back.html")
CLOZE_TEMPLATE = ("Cloze", 1_315_998_801, "cloze-front.html", "cloze-back.html")


def templates_dir() -> Path:
    """The note types' HTML and CSS: inside the package when installed, ``templates/`` in a checkout."""
    return data_dir("templates")


@lru_cache(maxsize=None)
def _read(name: str) -> str:
    return (templates_dir() / name).read_text(encoding="utf-8")


def _model(model_id: int, name: str, fields: tuple[tuple[str, int], ...],
           template: tuple[str, int, str, str], model_type: int) -> genanki.Model:
    # Fresh dicts every time: genanki's Model.to_json mutates the dicts it is given.
    template_name, template_id, front, back = template
    return genanki.Model(
        model_id,
        name,
        fields=[{"name": field, "id": field_id} for field, field_id in fields],
        templates=[{"name": template_name, "id": template_id, "qfmt": _read(front), "afmt": _read(back)}],
        css=_read("style.css"),
        model_type=model_type,
        sort_field_index=0,
    )


def qa_model() -> genanki.Model:
    return _model(QA_MODEL_ID, QA_MODEL_NAME, QA_FIELDS, QA_TEMPLATE, genanki.Model.FRONT_BACK)


def cloze_model() -> genanki.Model:
    return _model(CLOZE_MODEL_ID, CLOZE_MODEL_NAME, CLOZE_FIELDS, CLOZE_TEMPLATE, genanki.Model.CLOZE)


def schema() -> dict[str, object]:
    """The shape Anki compares on import: note type ids, field and template names and ids, in order."""
    return {
        "version": SCHEMA_VERSION,
        "models": [
            {"id": QA_MODEL_ID, "fields": [list(f) for f in QA_FIELDS], "templates": [list(QA_TEMPLATE[:2])]},
            {"id": CLOZE_MODEL_ID, "fields": [list(f) for f in CLOZE_FIELDS], "templates": [list(CLOZE_TEMPLATE[:2])]},
        ],
    }


def fingerprints() -> dict[int, tuple[str, str]]:
    """Note type id → (hash of everything Anki stores for it, hash of its shape).

    A new hash means the templates or CSS changed: the note type's mtime moves
    so "Update note types: If newer" brings them.  A new shape means Anki will
    fork the note type unless the user enables *Merge note types*.
    """
    models: list[dict[str, Any]] = schema()["models"]  # type: ignore[assignment]
    shapes = {model["id"]: model for model in models}
    result: dict[int, tuple[str, str]] = {}
    for model in (qa_model(), cloze_model()):
        stored = model.to_json(0, 0)
        stored.pop("mod", None)
        result[model.model_id] = (short_hash(json.dumps(stored, sort_keys=True, ensure_ascii=False), 16),
                                  short_hash(json.dumps(shapes[model.model_id], sort_keys=True), 16))
    return result
