"""Corpus text → safe card HTML.

Anki fields are HTML rendered with JavaScript enabled, so every piece of
corpus text is escaped; the only markup that reaches a card is what this
module writes: ``<code>`` for backtick spans and ``<b>`` for ``**bold**``.
Besides HTML, Anki and its reviewer read three more languages in field text,
and each is neutralised here:

* ``{{c1::…}}`` cloze syntax: braces become entities, and inside deckgen's own
  deletions ``:`` does too (``::`` would start a hint: ``torch::Tensor``);
* ``[sound:…]``, ``[anki:tts]``, ``[latex]``, ``[$]``: Anki finds them in the
  raw field text, so ``[`` becomes an entity;
* MathJax ``\(…\)`` and ``\[…\]``: MathJax reads the decoded text of the page
  (``\href{javascript:…}`` makes a live link), so an entity is no help; an
  empty ``<span>`` after the backslash splits the delimiter, because MathJax
  never matches math across an element.

Control characters (``\x1f`` separates Anki's fields) and unpaired surrogates
(a file name that is not UTF-8) become U+FFFD.
"""

from __future__ import annotations

import html
import re
from operator import methodcaller

from ..types import Card, CardKind

_CODE_RE = re.compile(r"`([^`\n]+)`")
CODE_SPAN = re.compile(r"`[^`]+`")
"""A code span as the stages find one (it may hold a line break, unlike :func:`to_html`'s)."""
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*")
# Deletions travel between stages as private-use markers, never as ``{{c1::``,
# so corpus text that happens to contain cloze syntax stays text.
DELETION_OPEN, DELETION_SEP, DELETION_CLOSE = "\ue000", "\ue001", "\ue002"
_DELETION_RE = re.compile("\ue000(\\d+)\ue001(.*?)\ue002", re.DOTALL)
_MARKER_CHARS_RE = re.compile("[\ue000-\ue002]")
# A C-level replacement: an r"\1" template is expanded in Python for every match.
_GROUP_1 = methodcaller("group", 1)
_GROUP_2 = methodcaller("group", 2)


def deletion(ordinal: int, body: str) -> str:
    """Mark *body* as cloze deletion number *ordinal*."""
    return f"{DELETION_OPEN}{ordinal}{DELETION_SEP}{body}{DELETION_CLOSE}"


def deletions(text: str) -> list[tuple[int, str]]:
    """The (ordinal, body) pairs marked in *text*."""
    if DELETION_OPEN not in text:  # most texts (every Q/A card) have none: skip the regex
        return []
    return [(int(m.group(1)), m.group(2)) for m in _DELETION_RE.finditer(text)]


def anki_cards(card: Card) -> int:
    """How many Anki cards a note gives: one per cloze number, one for a Q/A note.

    Here, beside the deletion markers, rather than with the quality gate that uses it too: the deck counts the cards
    of every cached note, and loads no card-making code to do it.
    """
    return len({i for i, _ in deletions(card.prompt)}) if card.kind == CardKind.CLOZE else 1


def revealed(text: str) -> str:
    """Marked *text* with its deletions filled in: their bodies, without markers or ordinals."""
    if DELETION_OPEN not in text:
        return text
    return _DELETION_RE.sub(_GROUP_2, text)


def without_markers(text: str) -> str:
    """*text* with any deletion marker characters removed (for corpus text)."""
    return _MARKER_CHARS_RE.sub("", text)


def cloze_plain(text: str, style: str = "anki") -> str:
    """A readable rendering of marked text: ``{{c1::body}}`` or, with style="blank", ``[…]``."""
    if DELETION_OPEN not in text:
        return text
    if style == "blank":
        return _DELETION_RE.sub("[…]", text)
    return _DELETION_RE.sub(lambda m: f"{{{{c{m.group(1)}::{m.group(2)}}}}}", text)


# Everything escape() changes, one character (or a backslash before a MathJax delimiter) at a time:
# html.escape's five, the cloze/template braces and Anki's "[", control characters and surrogates.
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;",
            "{": "&#123;", "}": "&#125;", "[": "&#91;", "\\": "\\<span></span>"}
_ESCAPE_RE = re.compile("[&<>\"'{}\\[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]|\\\\(?=[()\\[\\]])")


def _escaped(match: re.Match[str]) -> str:
    return _ESCAPES.get(match.group(), "\ufffd")


def escape(text: str) -> str:
    """Plain text as inert HTML: no tags, no cloze or template braces, no Anki ``[…]`` tags, no MathJax."""
    # One pass, and none at all for the usual text with nothing to escape (every field of every note).
    if _ESCAPE_RE.search(text) is None:
        return text
    return _ESCAPE_RE.sub(_escaped, text)


def strip_markdown(text: str) -> str:
    """Plain text for comparisons and plain-text output: no backticks, no ``**``."""
    # The quality gate calls this tens of times per card, mostly on text without markup.
    if "*" in text:
        text = _BOLD_RE.sub(_GROUP_1, text)
    if "`" in text:
        text = _CODE_RE.sub(_GROUP_1, text)
    return text


def to_html(text: str) -> str:
    """Escape *text* and render its backtick code as ``<code>`` and ``**bold**`` as ``<b>``."""
    if "`" not in text:  # no code span (most text): no regex
        return _inline_html(text)
    out: list[str] = []
    pos = 0
    for match in _CODE_RE.finditer(text):
        out.append(_inline_html(text[pos : match.start()]))
        out.append(f"<code>{escape(match.group(1))}</code>")
        pos = match.end()
    out.append(_inline_html(text[pos:]))
    return "".join(out)


def _inline_html(text: str) -> str:
    if "**" not in text:
        return escape(text)
    out: list[str] = []
    pos = 0
    for match in _BOLD_RE.finditer(text):
        out.append(escape(text[pos : match.start()]))
        out.append(f"<b>{escape(match.group(1))}</b>")
        pos = match.end()
    out.append(escape(text[pos:]))
    # A lone ** or backtick is shown as written, but escaped like everything else.
    return "".join(out)


def cloze_to_html(text: str) -> str:
    """Render marked text as a cloze field: deckgen's deletions become ``{{cN::…}}``, the rest is escaped."""
    out: list[str] = []
    pos = 0
    for match in _DELETION_RE.finditer(text):
        out.append(to_html(text[pos : match.start()]))
        # ":" as an entity: a "::" inside the deletion would start Anki's hint.
        out.append(f"{{{{c{match.group(1)}::{to_html(match.group(2)).replace(':', '&#58;')}}}}}")
        pos = match.end()
    out.append(to_html(text[pos:]))
    return "".join(out)


_OWN_TAGS = r'</?code>|</?b>|<span></span>|<span class="where">|</span>'
_OWN_MARKUP_RE = re.compile(_OWN_TAGS)
_OWN_CLOZE_MARKUP_RE = re.compile(rf"{_OWN_TAGS}|\{{\{{c\d+::|\}}\}}")


def sanitize_html(value: str, *, cloze: bool = False) -> str:
    """Field HTML that deckgen once wrote, read back from elsewhere (the lock file), made safe again.

    Only deckgen's own markup survives (``<code>``, ``<b>``, the MathJax-breaking
    ``<span></span>``, the source line's ``<span class="where">`` and, in a cloze
    field, ``{{cN::…}}``); everything between
    is decoded and escaped anew.  For fields deckgen wrote this is the identity;
    an edited lock file cannot smuggle markup onto a card.
    """
    out: list[str] = []
    pos = 0
    deletion_open = False
    for match in (_OWN_CLOZE_MARKUP_RE if cloze else _OWN_MARKUP_RE).finditer(value):
        out.append(_reescape(value[pos : match.start()], deletion_open))
        token = match.group()
        if token.startswith("{{"):
            deletion_open = True
        elif token == "}}":
            if not deletion_open:  # a "}}" deckgen never wrote: text
                token = escape(token)
            deletion_open = False
        out.append(token)
        pos = match.end()
    out.append(_reescape(value[pos:], deletion_open))
    if deletion_open:
        out.append("}}")
    return "".join(out)


def _reescape(text: str, in_deletion: bool) -> str:
    escaped = escape(html.unescape(text))
    return escaped.replace(":", "&#58;") if in_deletion else escaped
