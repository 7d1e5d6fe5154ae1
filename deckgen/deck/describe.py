"""A note in one line for people: its cue and front, and what changed in it (``deckgen plan``, ``push --dry-run``).

Takes a note type id and fields (HTML, as a package holds them); gives plain text, cut to a line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from html import unescape
from typing import TypeVar

from .lock import content_fields, named_fields
from .notes import own_tag

_TAG_RE = re.compile(r"<[^>]+>")
_CLOZE_RE = re.compile(r"\{\{c\d+::(.*?)\}\}", re.DOTALL)
_WIDTH = 60
_VALUE_WIDTH = 30
SAMPLES = 3
"""Notes named under each count of a report; the rest are counted."""
_T = TypeVar("_T")


def count_lines(label: str, items: Sequence[_T], describe: Callable[[_T], str] = str, note: str = "") -> list[str]:
    """``  label  count  note`` and the first :data:`SAMPLES` of *items* described below it, then how many more."""
    out = [f"  {label:<9} {len(items):>5}{'  ' + note if note else ''}"]
    out.extend(f"      {describe(item)}" for item in items[:SAMPLES])
    if len(items) > SAMPLES:
        out.append(f"      … and {len(items) - SAMPLES} more")
    return out


def describe_note(model: int, fields: Sequence[str]) -> str:
    """``【cue】front``: the card's context cue and its question, or its cloze text with the gaps in brackets."""
    named = named_fields(model, fields)
    front = named.get("Question") or _CLOZE_RE.sub(r"[\1]", named.get("Text", ""))
    return _short(f"【{_text(named.get('Cue', ''))}】{_text(front)}")


def describe_difference(model: int, before: Sequence[str], after: Sequence[str], before_tags: Sequence[str] = (),
                        after_tags: Sequence[str] = ()) -> str:
    """:func:`describe_note` of *after*, then the first field that differs from *before* (where in the seeds aside),
    or else the tags: *after_tags*, or, when *before_tags* are given, deckgen's own tags added and removed."""
    old_fields, new_fields = content_fields(model, before), content_fields(model, after)
    for name, value in new_fields.items():
        if old_fields.get(name) != value:
            old, new = (_short(_text(v), _VALUE_WIDTH) for v in (old_fields.get(name, ""), value))
            return f"{describe_note(model, after)} — {name}: {old} → {new}"
    if not before_tags:
        return f"{describe_note(model, after)} — tags: {' '.join(after_tags)}"
    before_own = {t.casefold(): t for t in before_tags if own_tag(t)}
    after_own = {t.casefold(): t for t in after_tags}
    moved = [f"+{t}" for k, t in sorted(after_own.items()) if k not in before_own]
    moved += [f"-{t}" for k, t in sorted(before_own.items()) if k not in after_own]
    return f"{describe_note(model, after)} — tags: {' '.join(moved)}"


def _text(html: str) -> str:
    return " ".join(unescape(_TAG_RE.sub("", html)).split())


def _short(text: str, width: int = _WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
