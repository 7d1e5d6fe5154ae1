"""Corpus text reaches cards escaped; only deckgen's own markup is live."""

from __future__ import annotations

from deckgen.markup import cloze_plain, cloze_to_html, deletion, deletions, escape, strip_markdown, to_html


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
