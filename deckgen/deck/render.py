"""Render a card the way Anki does: the note type's templates over the note's fields.

Used by the HTML preview, so that what a maintainer looks at is what a learner
will see.  Only the template features deckgen's templates use are supported —
``{{Field}}``, ``{{#Field}}…{{/Field}}``, ``{{^Field}}…{{/Field}}``,
``{{FrontSide}}`` and ``{{cloze:Field}}`` — with Anki's output byte for byte
(a test compares every card of seeds/ with the real ``anki`` package's rendering).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..text.markup import anki_cards, deletions
from ..types import Card, CardKind
from .notes import note_fields
from .notetypes import CLOZE_FIELDS, QA_FIELDS, cloze_model, qa_model
from .thirdparty import genanki

_SECTION_RE = re.compile(r"\{\{([#^])\s*([^}]+?)\s*\}\}(.*?)\{\{/\s*\2\s*\}\}", re.S)
_FIELD_RE = re.compile(r"\{\{\s*([^#^/}][^}]*?)\s*\}\}")
# A deletion as it stands in a cloze field: {{c1::text}} or {{c1::text::hint}}.
_CLOZE_RE = re.compile(r"\{\{c(\d+)::(.*?)(?:::(.*?))?\}\}", re.S)
_EMPTY_RE = re.compile(r"^(?:\s|&nbsp;|<br\s*/?>|<div>\s*</div>)*$", re.I)


@dataclass(frozen=True)
class RenderedCard:
    """One Anki card of a note: the HTML of its question and answer sides (without the CSS)."""

    ordinal: int
    """1 for a Q/A note; the deletion number for a cloze card (Anki's ``card.ord + 1``)."""
    question: str
    answer: str


@lru_cache(maxsize=None)
def _templates(kind_is_cloze: bool) -> tuple[str, str, str, tuple[str, ...]]:
    model: genanki.Model = cloze_model() if kind_is_cloze else qa_model()
    template = model.templates[0]
    names = tuple(name for name, _ in (CLOZE_FIELDS if kind_is_cloze else QA_FIELDS))
    return template["qfmt"], template["afmt"], model.css, names


def card_css() -> str:
    """The note types' CSS (both share ``templates/style.css``)."""
    return _templates(False)[2]


def render_card(card: Card) -> tuple[RenderedCard, ...]:
    """Every Anki card *card*'s note gives, rendered: one for Q/A, one per deletion number for cloze."""
    cloze = card.kind == CardKind.CLOZE
    qfmt, afmt, _, names = _templates(cloze)
    fields = dict(zip(names, note_fields(card), strict=True))
    ordinals = sorted({n for n, _ in deletions(card.prompt)}) if cloze else [1]
    assert len(ordinals) == anki_cards(card)
    rendered = []
    for ordinal in ordinals:
        question = render_template(qfmt, fields, ordinal=ordinal, side="question")
        answer = render_template(afmt, {**fields, "FrontSide": question}, ordinal=ordinal, side="answer")
        rendered.append(RenderedCard(ordinal, question, answer))
    return tuple(rendered)


def render_template(template: str, fields: dict[str, str], *, ordinal: int = 1, side: str = "question") -> str:
    """*template* with *fields* substituted as Anki does for card number *ordinal*."""
    def section(match: re.Match[str]) -> str:
        present = not _EMPTY_RE.match(fields.get(match.group(2), ""))
        return match.group(3) if present == (match.group(1) == "#") else ""

    def field(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("cloze:"):
            return render_cloze(fields.get(name[len("cloze:"):], ""), ordinal, side)
        return fields.get(name, "")

    previous = None
    while previous != template:  # sections may nest
        previous, template = template, _SECTION_RE.sub(section, template)
    return _FIELD_RE.sub(field, template)


def render_cloze(text: str, ordinal: int, side: str) -> str:
    """Anki's ``{{cloze:…}}`` filter: the active deletion hidden (question) or marked (answer)."""
    def deletion(match: re.Match[str]) -> str:
        number, body, hint = int(match.group(1)), match.group(2), match.group(3)
        if number != ordinal:
            return f'<span class="cloze-inactive" data-ordinal="{number}">{body}</span>'
        if side == "answer":
            return f'<span class="cloze" data-ordinal="{number}">{body}</span>'
        return (f'<span class="cloze" data-cloze="{_attribute(body)}" data-ordinal="{number}">'
                f'[{hint or "..."}]</span>')

    return _CLOZE_RE.sub(deletion, text)


def _attribute(text: str) -> str:
    """Escape as Anki does for ``data-cloze`` (the ``htmlescape`` crate): every ASCII symbol as an entity."""
    named = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
    return "".join(
        c if c.isalnum() or ord(c) > 127 else named.get(c, f"&#x{ord(c):X};")
        for c in text
    )
