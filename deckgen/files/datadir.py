"""Where deckgen's data files are: ``templates/`` (the note types' HTML and CSS) and ``rules/`` (the cue lists).

Both live at the top of a checkout, beside the package, so that a person can read and change
them without touching code; an installed wheel carries them inside the package.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent.parent
"""The deckgen package's folder."""


def data_dir(name: str) -> Path:
    """The data folder *name*: inside the package when installed, at the top of the checkout otherwise."""
    for candidate in (PACKAGE / name, PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"deckgen's {name} folder is missing (looked in {PACKAGE / name} and {PACKAGE.parent / name})")


def read_model(name: str) -> dict[str, Any]:
    """The trained model ``rules/<name>`` (JSON: its weights, thresholds and provenance); empty when there is none."""
    path = data_dir("rules") / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def model_weights(model: dict[str, Any]) -> dict[str, float]:
    """A model's weights by feature name (none for an empty model)."""
    return {str(k): float(v) for k, v in model.get("weights", {}).items()}
