"""Corpus text reaches cards escaped; only deckgen's own markup is live."""

from __future__ import annotations

import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from deckgen.text.markup import (
    cloze_plain,
    cloze_to_html,
    deletion,
    deletions,
    escape,
    revealed,
    strip_markdown,
    to_html,
)


def test_html_is_escaped() -> None:
    assert escape('<script>alert("x")</script> & a<b') == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; a&lt;b"


def test_braces_cannot_open_fields_or_clozes() -> None:
    assert "{" not in escape("{{c1::x}} {{Front}}")


def test_code_and_bold_render_as_tags() -> None:
    assert to_html("用 `std::vector<int>` 和 **粗体**") == "用 <code>std::vector&lt;int&gt;</code> 和 <b>粗体</b>"


def test_unpaired_markdown_is_shown_escaped() -> None:
    assert to_html("a ** b ` c") == "a ** b ` c"


def test_strip_markdown() -> None:
    assert strip_markdown("**决策**: 用 `lru_cache`") == "决策: 用 lru_cache"


def test_deckgen_deletions_become_clozes_corpus_syntax_does_not() -> None:
    text = "用 " + deletion(1, "`lru_cache`") + " 复用；原文里的 {{c2::伪造}} 不算"
    assert deletions(text) == [(1, "`lru_cache`")]
    html = cloze_to_html(text)
    assert html.startswith("用 {{c1::<code>lru_cache</code>}} 复用")
    assert "{{c2::" not in html
    assert cloze_plain(text, style="blank") == "用 […] 复用；原文里的 {{c2::伪造}} 不算"


def test_revealed_fills_the_gaps_in() -> None:
    text = "用 " + deletion(1, "`lru_cache`") + " 实现" + deletion(12, "复用") + "；原文里的 {{c2::伪造}} 不算"
    assert revealed(text) == "用 `lru_cache` 实现复用；原文里的 {{c2::伪造}} 不算"
    assert revealed("无空") == "无空"


def _escape_in_four_passes(text: str) -> str:
    """escape as first written (the reference): unsafe characters, html.escape, MathJax delimiters, entities."""
    text = re.sub("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]", "\ufffd", text)
    escaped = re.sub(r"\\(?=[()\[\]])", r"\\<span></span>", html.escape(text, quote=True))
    return escaped.translate(str.maketrans({"{": "&#123;", "}": "&#125;", "[": "&#91;"}))


def _to_html_by_regex(text: str) -> str:
    """to_html without its shortcuts (the reference): split at code spans, then at bold, escape the rest."""
    def inline(part: str) -> str:
        pieces = re.split(r"\*\*(.+?)\*\*", part)
        return "".join(escape(p) if i % 2 == 0 else f"<b>{escape(p)}</b>" for i, p in enumerate(pieces))

    pieces = re.split(r"`([^`\n]+)`", text)
    return "".join(inline(p) if i % 2 == 0 else f"<code>{escape(p)}</code>" for i, p in enumerate(pieces))


_MARKUP_PIECES = st.sampled_from(["`", "**", "*", "\\", "\\(", "\\[", "\\]", "\\)", "(", "[", "]", "{", "}", "&",
                                  "<", ">", '"', "'", "\n", "\x1f", "\x7f", "\ud800", "\t", "x", "缓存", "é",
                                  "&amp;", "::"])


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(st.one_of(st.lists(_MARKUP_PIECES, max_size=16).map("".join), st.text(max_size=40)))
def test_escape_and_to_html_agree_with_the_reference(text: str) -> None:
    assert escape(text) == _escape_in_four_passes(text)
    assert to_html(text) == _to_html_by_regex(text)
