"""Cut a review paragraph into units: enumeration items and prose sentences.

Reviews enumerate their decisions inline (``…关键设计决策： 1. **名称**: 说明 2. …``,
``一是…；二是…``, ``①…；②…``), so items are found by their markers, not by
line breaks.  A run of markers counts only if it starts at 1 and climbs by 1,
each marker follows a boundary (start, space or punctuation) and none sits in
a code span; a count announced before the list ("有三点") must match.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, replace

_BOUNDARY = r"(?<![^\s：:；;，,。！？!?—])"
_CN_NUM = "一二三四五六七八九十"
_SEQ_WORDS = {"首先": 1, "其次": 2, "再次": 3, "然后": 3, "最后": 9}

# family name → pattern with the ordinal in group 1
_MARKER_PATTERNS: dict[str, re.Pattern[str]] = {
    "dot": re.compile(_BOUNDARY + r"(\d{1,2})\.(?![\d.])\s*"),
    "paren": re.compile(_BOUNDARY + r"(\d{1,2})[)）]\s*"),
    "wrapped": re.compile(r"[(（](\d{1,2})[)）]\s*"),
    "dun": re.compile(_BOUNDARY + r"(\d{1,2})、\s*"),
    "circled": re.compile(r"([\u2460-\u2473\u2474-\u2487])\s*"),
    "cn_wrapped": re.compile(r"[(（]([" + _CN_NUM + r"])[)）]\s*"),
    # 一是 may follow its subject directly ("本次重构一是…；二是…"); the run must still climb 一, 二, 三.
    "shi": re.compile(r"(?:" + _BOUNDARY + r"|(?<=[\u3400-\u9fff])(?<![唯统之第同单万划均逐])(?=一是(?!否)))(["
                      + _CN_NUM + r"])是"),
    "di": re.compile(_BOUNDARY + r"第([" + _CN_NUM + r"])(?:点|步|处|项|条|个方面|方面)?(?:是|[，,、：:])\s*"),
    "seq": re.compile(_BOUNDARY + r"(首先|其次|再次|然后|最后)(?:是)?[，,：:]?\s*"),
    # Markdown-style bullets at the start of a line; numbered by position.
    "bullet": re.compile(r"(?:^|(?<=\n))[ \t]*([-*•·])[ \t]+"),
}
# Text each family's pattern cannot match without: a family whose text is absent is not scanned.
_NEEDS: dict[str, tuple[str, ...]] = {
    "dot": (".",), "paren": (")", "）"), "wrapped": ("(", "（"), "dun": ("、",), "cn_wrapped": ("(", "（"),
    "shi": ("是",), "di": ("第",), "seq": tuple(_SEQ_WORDS), "bullet": ("-", "*", "•", "·"),
}
_COUNT_RE = re.compile(r"(?:有|分为|包括|包含)?([两二三四五六七八九十\d])(?:个|点|处|层|项|条|步|方面|部分|类)|有([二两三四五六七八九十])[：:]")
_SENTENCE_END = "。！？!?\n"
_OPENERS = {"（": "）", "(": ")", "“": "”", "「": "」", "『": "』", "《": "》", "【": "】", "[": "]"}
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*")
_CODE_RE = re.compile(r"`[^`\n]+`")
# The only characters _sentence_end reacts to: it jumps from one to the next.
_SENTENCE_EVENT_RE = re.compile(
    "[" + re.escape("`" + "".join(_OPENERS) + "".join(_OPENERS.values()) + _SENTENCE_END) + "]")
_ITEM_STOP_RE = re.compile(r"[；;]")
MAX_SENTENCE_CHARS = 500
"""The longest sentence or item deckgen reads whole.  A longer one is read in pieces of at most this many characters,
each cut after its last ；，、：or space (at the limit when the second half of the piece has none), and the build
warns about it with its line (see :func:`cut_overlong`).  Reading a sentence takes time that grows with the square of
its length (each connective looks through the rest of its clause): 20,000 characters of 通过 took 65 s to build.
The longest sentence of every review deckgen has been measured on (seeds/, the development, held-out and written
reviews, corpus/) is under 250 characters: none is cut."""
MAX_UNITS = 100
"""The most sentences and items (pieces of cut sentences included) deckgen reads of one review; the build warns about
the rest with the line where reading stopped.  Each card candidate of a review is checked against the whole review,
so a review's time grew with the square of its number of items: 3,000 took 18 s.  No review deckgen has been
measured on has more than 12."""
_CUT_AFTER = "；;，,、：: "
_END = sys.maxsize


@dataclass(frozen=True)
class Unit:
    """A sentence of prose or one enumeration item, in bold-free review text."""

    text: str
    offset: int
    """Start of :attr:`text` in the bold-free review text."""
    ordinal: int = 0
    """Position in its enumeration; 0 for prose."""
    lead: str = ""
    """For items: the words that introduce the enumeration ("其设计决策值得学习")."""
    heading: str = ""
    """A bold heading the unit starts with (``**名称**: 说明`` → 名称)."""
    family: str = ""
    """The enumeration's marker style; ``seq`` (首先…其次…最后) items are steps of a procedure."""


@dataclass(frozen=True)
class Marker:
    family: str
    ordinal: int
    start: int
    end: int


def strip_bold(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Remove ``**`` pairs; return the plain text and the bold ranges in it."""
    plain: list[str] = []
    ranges: list[tuple[int, int]] = []
    pos = 0
    length = 0
    for match in _BOLD_RE.finditer(text):
        before = text[pos : match.start()]
        plain.append(before)
        length += len(before)
        inner = match.group(1)
        ranges.append((length, length + len(inner)))
        plain.append(inner)
        length += len(inner)
        pos = match.end()
    plain.append(text[pos:])
    return "".join(plain), ranges


def _ordinal(family: str, token: str) -> int:
    if family == "circled":
        code = ord(token)
        return code - 0x2460 + 1 if code <= 0x2473 else code - 0x2474 + 1
    if family in ("shi", "di", "cn_wrapped"):
        return _CN_NUM.index(token) + 1
    if family == "seq":
        return _SEQ_WORDS[token]
    if family == "bullet":
        return 0  # numbered by position in find_markers
    return int(token)


def _code_ranges(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _CODE_RE.finditer(text)] if "`" in text else []


def _inside(ranges: list[tuple[int, int]], position: int) -> bool:
    """Whether *position* is in one of *ranges* (sorted, not overlapping): a look-up, not a walk through all of them,
    so a review of thousands of items and code spans is read in linear time."""
    i = bisect_right(ranges, (position, _END)) - 1
    return i >= 0 and position < ranges[i][1]


def find_markers(text: str) -> list[Marker]:
    code = _code_ranges(text)
    found: list[Marker] = []
    bullets = 0  # counted as they are found: counting them again for each made a list of bullets quadratic
    for family, pattern in _MARKER_PATTERNS.items():
        needs = _NEEDS.get(family)
        if needs and not any(part in text for part in needs):
            continue
        for match in pattern.finditer(text):
            if code and _inside(code, match.start()):
                continue
            ordinal = _ordinal(family, match.group(1))
            if family == "bullet":
                bullets += 1
                ordinal = bullets
            found.append(Marker(family, ordinal, match.start(), match.end()))
    return sorted(found, key=lambda m: (m.start, m.family))


def _runs(markers: list[Marker]) -> list[list[Marker]]:
    """Marker runs 1, 2, 3… of one family; the longest runs win overlaps."""
    runs: list[list[Marker]] = []
    families = sorted({m.family for m in markers})
    for family in families:
        mine = [m for m in markers if m.family == family]
        for i, first in enumerate(mine):
            if first.ordinal != 1:
                continue
            run = [first]
            for nxt in mine[i + 1 :]:
                if family == "seq":
                    if nxt.ordinal == 9 or nxt.ordinal > run[-1].ordinal:
                        run.append(nxt)
                        if nxt.ordinal == 9:
                            break
                elif nxt.ordinal == run[-1].ordinal + 1:
                    run.append(nxt)
            if len(run) >= 2:
                runs.append(run)
    runs.sort(key=lambda r: (-len(r), r[0].start))
    chosen: list[list[Marker]] = []
    for run in runs:
        lo, hi = run[0].start, run[-1].end
        if all(hi <= c[0].start or lo >= c[-1].end for c in chosen):
            chosen.append(run)
    return sorted(chosen, key=lambda r: r[0].start)


def _sentence_end(text: str, start: int) -> int:
    """Index just past the sentence that contains *start* (brackets and quotes respected)."""
    depth: list[str] = []
    in_code = False
    for match in _SENTENCE_EVENT_RE.finditer(text, start):
        ch = match.group()
        if ch == "`":
            in_code = not in_code
        elif not in_code:
            if ch in _OPENERS:
                depth.append(_OPENERS[ch])
            elif depth and ch == depth[-1]:
                depth.pop()
            elif ch in _SENTENCE_END and not depth and not _in_an_operator(text, match.start()):
                return match.end()
    return len(text)


def _in_an_operator(text: str, i: int) -> bool:
    """Whether the ASCII ! or ? at *i* is part of code (``!=``, ``?:``, ``a?.b``), not the end of a sentence."""
    return text[i] in "!?" and i + 1 < len(text) and text[i + 1] in "=:.!?"


def _sentence_start(text: str, end: int) -> int:
    i = end
    while i > 0 and (text[i - 1] not in _SENTENCE_END or _in_an_operator(text, i - 1)):
        i -= 1
    return i


def _announced_count(lead: str) -> int | None:
    match = None
    for match in _COUNT_RE.finditer(lead):
        pass
    if match is None:
        return None
    token = match.group(1) or match.group(2)
    if token.isdigit():
        return int(token)
    return {"两": 2}.get(token) or _CN_NUM.index(token) + 1


def split_units(text: str, bold: list[tuple[int, int]] | None = None) -> list[Unit]:
    """Units of a bold-free review *text*, in reading order."""
    bold = bold or []
    units: list[Unit] = []
    pos = 0
    for run in _runs(find_markers(text)):
        lead_start = _sentence_start(text, run[0].start)
        lead = text[lead_start : run[0].start].strip()
        before = text[:lead_start].rstrip()
        if not lead and before.endswith(("：", ":")):  # "主要设计决策如下：\n1. …": the lead is the line before
            lead_start = _sentence_start(text, len(before) - 1)
            lead = text[lead_start : run[0].start].strip()
        count = _announced_count(lead)
        if count is not None and count != len(run):
            continue
        if run[0].start < pos:
            continue
        units.extend(_prose_units(text, pos, lead_start))
        # The lead is prose too: "关键在于采用 X 而不是 Y：首先…" carries a decision itself.
        units.extend(_prose_units(text, lead_start, run[0].start))
        for i, marker in enumerate(run):
            end = run[i + 1].start if i + 1 < len(run) else _sentence_end(text, marker.end)
            item = text[marker.end : end]
            stripped = item.strip().rstrip("；;，,。")
            offset = marker.end + (len(item) - len(item.lstrip()))
            units.append(Unit(stripped, offset, marker.ordinal if marker.family != "seq" else i + 1,
                              lead=lead.rstrip("：:，, "), heading=_heading(stripped, offset, bold),
                              family=marker.family))
            pos = end
    units.extend(_prose_units(text, pos, len(text)))
    return [item for u in units if u.text for part in _split_headings(u, bold) for item in _split_announced(part)]


_ANNOUNCED_RE = re.compile(r"^([^：:；;]{2,40}?(?:[两二三四五六七八九十\d])(?:点|项|条|个方面|方面|部分))[：:]\s*")


def _split_announced(unit: Unit) -> list[Unit]:
    """Cut a sentence announcing its parts ("方案可以概括为三点：A；B；C") into those parts, when their count matches.

    A list without markers reads like one sentence: its parts are items only when a count says so.
    """
    if unit.ordinal or unit.heading:
        return [unit]
    match = _ANNOUNCED_RE.match(unit.text)
    if not match:
        return [unit]
    body = unit.text[match.end():]
    if _code_ranges(body) and any(";" in code or "；" in code for code in _CODE_RE.findall(body)):
        return [unit]
    parts = [p for p in _ITEM_STOP_RE.split(body)]
    if _announced_count(match.group(1)) != len(parts) or any(not p.strip() for p in parts):
        return [unit]
    lead, out, at = match.group(1).strip(), [], unit.offset + match.end()
    for i, part in enumerate(parts, 1):
        stripped = part.strip().rstrip("。；;，, ")
        out.append(Unit(stripped, at + len(part) - len(part.lstrip()), i, lead=lead, family="announced"))
        at += len(part) + 1
    return out


def _split_headings(unit: Unit, bold: list[tuple[int, int]]) -> list[Unit]:
    """Cut a prose unit at bold headings inside it (``…有三处：**组提交**：说明；…``)."""
    if unit.ordinal or unit.heading:
        return [unit]
    within = bold[bisect_left(bold, (unit.offset,)):bisect_left(bold, (unit.offset + len(unit.text),))]
    starts = [a - unit.offset for a, b in within
              if unit.text[b - unit.offset : b - unit.offset + 2].lstrip()[:1] in (":", "：")]
    if not starts:
        return [unit]
    out = [Unit(unit.text[: starts[0]].strip().rstrip("：:；;，,"), unit.offset)] if starts[0] else []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(unit.text)
        piece = unit.text[start:end]
        stop = _ITEM_STOP_RE.search(piece)
        body, rest = (piece[: stop.start()], piece[stop.end() :]) if stop else (piece, "")
        offset = unit.offset + start
        out.append(Unit(body.strip(), offset, heading=_heading(body, offset, bold)))
        if rest.strip():
            out.append(Unit(rest.strip().rstrip("；;"), offset + len(piece) - len(rest) + (len(rest) - len(rest.lstrip()))))
    return [u for u in out if u.text]


def _prose_units(text: str, start: int, stop: int) -> Iterator[Unit]:
    pos = start
    while pos < stop:
        end = min(_sentence_end(text, pos), stop)
        chunk = text[pos:end]
        stripped = chunk.strip()
        if stripped:
            offset = pos + (len(chunk) - len(chunk.lstrip()))
            yield Unit(stripped.rstrip("。：:；;，, "), offset)
        pos = end


def cut_overlong(unit: Unit, limit: int = MAX_SENTENCE_CHARS) -> list[Unit]:
    """*unit*, or its pieces of at most *limit* characters when it is longer (see :data:`MAX_SENTENCE_CHARS`).

    Each piece ends after the last ；，、：or space of its first *limit* characters, or at the limit when the
    second half has none; never inside a code span that starts in the piece.  The first piece keeps the
    unit's place in its enumeration and its heading; the others are prose.
    """
    text = unit.text
    if len(text) <= limit:
        return [unit]
    code = _code_ranges(text)
    pieces: list[Unit] = []
    start = 0
    while start < len(text):
        end = len(text)
        if end - start > limit:
            window = text[start:start + limit]
            end = start + max(window.rfind(c) for c in _CUT_AFTER) + 1
            if end - start <= limit // 2:
                end = start + limit
            span = bisect_right(code, (end, _END)) - 1  # the code span the cut would fall in, if any: cut before it
            if span >= 0 and start < code[span][0] < end < code[span][1]:
                end = code[span][0]
        piece = text[start:end]
        stripped = piece.strip().rstrip("。：:；;，, ")
        if stripped:
            offset = unit.offset + start + len(piece) - len(piece.lstrip())
            pieces.append(replace(unit, text=stripped, offset=offset) if not pieces else Unit(stripped, offset))
        start = end
    return pieces


def _heading(item: str, offset: int, bold: list[tuple[int, int]]) -> str:
    at = bisect_left(bold, (offset,))  # the bold range starting at *offset*, if any (they are sorted, one per start)
    for a, b in bold[at:at + 1]:
        if a == offset and item[b - a : b - a + 1] in (":", "：", " ") :
            rest = item[b - a :].lstrip()
            if rest[:1] in (":", "："):
                return item[: b - a]
    return ""
