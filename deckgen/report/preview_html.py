"""``deckgen preview --html``: one self-contained page showing every card as Anki renders it.

Each card side is the note type's template rendered over the note's fields
(:mod:`deckgen.deck.render`, identical to Anki's output) inside ``<div class="card
cardN">`` as in Anki's reviewer, styled by the note types' own CSS; the
night-mode switch sets ``nightMode night_mode`` on ``<body>`` as Anki does, so
the templates' ``.nightMode`` rules apply.  The page loads nothing: no
network, no external file; a Content-Security-Policy forbids it and allows
only the page's own script (by hash), so text from seed files can never run.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from ..deck.render import card_css, render_card
from ..files.atomic import atomic_files
from .preview import DeckCard, Preview

NO_TOPIC = "未分类 · no topic"

_PAGE_CSS = """
body.dg-page { margin: 0; font-family: system-ui, sans-serif; background: #f6f8fa; color: #1f2328; }
body.dg-page.nightMode { background: #111418; color: #d1d7e0; }
[hidden] { display: none !important; }
.dg-bar { position: sticky; top: 0; z-index: 1; display: flex; flex-wrap: wrap; gap: 0.6em 1em; align-items: center;
  padding: 0.6em 1em; background: inherit; border-bottom: 1px solid #d0d7de; }
.dg-bar h1 { font-size: 1.1em; margin: 0 1em 0 0; }
.dg-bar input[type=search] { flex: 1 1 16em; font-size: 1em; padding: 0.3em 0.5em; }
.dg-bar button, .dg-bar label { font-size: 0.95em; cursor: pointer; }
.dg-main { max-width: 60em; margin: 0 auto; padding: 0 1em 3em; }
.dg-topic > h2 { margin: 1.4em 0 0.4em; font-size: 1.3em; }
.dg-pr > h3 { margin: 1em 0 0.2em; font-size: 1.05em; }
.dg-pr-meta, .dg-card-meta, .dg-stat { font-size: 0.8em; opacity: 0.75; }
.dg-card { margin: 0.6em 0; border: 1px solid #d0d7de; border-radius: 6px; overflow: hidden; cursor: pointer; }
.dg-card-meta { padding: 0.3em 0.8em; border-bottom: 1px solid #d0d7de; }
.dg-tag { display: inline-block; margin-left: 0.5em; }
.dg-side > .card { padding-top: 0.6em; padding-bottom: 0.8em; }
.dg-js .dg-back, .dg-js .dg-card.dg-on-back .dg-front { display: none; }
.dg-js .dg-card.dg-on-back .dg-back { display: block; }
"""

_SCRIPT = """(function () {
  "use strict";
  document.documentElement.classList.add("dg-js");
  var cards = Array.prototype.slice.call(document.querySelectorAll(".dg-card"));
  var groups = Array.prototype.slice.call(document.querySelectorAll(".dg-pr, .dg-topic"));
  var texts = cards.map(function (c) { return (c.textContent + " " + c.getAttribute("data-tags")).toLowerCase(); });
  var search = document.getElementById("dg-search");
  var side = document.getElementById("dg-side");
  var night = document.getElementById("dg-night");
  var count = document.getElementById("dg-count");
  function filter() {
    var query = search.value.trim().toLowerCase(), shown = 0;
    cards.forEach(function (card, i) {
      card.hidden = query !== "" && texts[i].indexOf(query) < 0;
      if (!card.hidden) { shown += 1; }
    });
    groups.forEach(function (group) { group.hidden = !group.querySelector(".dg-card:not([hidden])"); });
    count.textContent = shown + " / " + cards.length;
  }
  function showBack(back) {
    side.setAttribute("aria-pressed", back ? "true" : "false");
    side.textContent = back ? "显示问题 · Front" : "显示答案 · Back";
    cards.forEach(function (card) { card.classList.toggle("dg-on-back", back); });
  }
  search.addEventListener("input", filter);
  side.addEventListener("click", function () { showBack(side.getAttribute("aria-pressed") !== "true"); });
  night.addEventListener("change", function () {
    document.body.classList.toggle("nightMode", night.checked);
    document.body.classList.toggle("night_mode", night.checked);
  });
  cards.forEach(function (card) {
    card.addEventListener("click", function () {
      if (!window.getSelection().toString()) { card.classList.toggle("dg-on-back"); }
    });
  });
  filter();
  document.body.setAttribute("data-ready", "true");
}());
"""


def write_preview_html(preview: Preview, output: Path, topic_names: Mapping[str, str] | None = None) -> Path:
    """Write the page for *preview* to *output* atomically; return the path written.

    *topic_names* gives display names for topic ids (the taxonomy's); an id without one shows as itself.
    """
    data = preview_page(preview, topic_names).encode("utf-8")
    with atomic_files() as staging:  # as the deck is written: never a half-written page
        staging.write_bytes(Path(output), data)
    return Path(output)


def preview_page(preview: Preview, topic_names: Mapping[str, str] | None = None) -> str:
    """The whole page as one HTML string: cards grouped by topic, then PR, in deck order."""
    names = topic_names or {}
    by_topic: dict[str, dict[str, list[DeckCard]]] = {}
    for pr_cards in _by_pr(preview.cards).values():
        by_topic.setdefault(_main_topic(pr_cards), {})[pr_cards[0].card.entry.pr_key] = pr_cards
    body: list[str] = []
    for topic in sorted(by_topic, key=lambda t: (t == "", t)):
        prs = by_topic[topic]
        title = names.get(topic, topic) if topic else NO_TOPIC
        total = sum(len(cards) for cards in prs.values())
        body.append(f'<section class="dg-topic" data-topic="{_e(topic)}"><h2>{_e(title)} '
                    f'<span class="dg-stat">{len(prs)} PR · {total} cards</span></h2>')
        body.extend(_pr_section(cards) for cards in prs.values())
        body.append("</section>")
    script_hash = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
    csp = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'"
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="zh-CN">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>deckgen preview</title>",
        f"<style>\n{card_css()}\n</style>",
        f"<style>{_PAGE_CSS}</style>",
        "</head>",
        '<body class="dg-page">',
        '<header class="dg-bar"><h1>deckgen preview</h1>',
        '<input type="search" id="dg-search" placeholder="搜索 · search" aria-label="Search cards">',
        '<button type="button" id="dg-side" aria-pressed="false">显示答案 · Back</button>',
        '<label><input type="checkbox" id="dg-night"> 夜间模式 · Night mode</label>',
        f'<span id="dg-count" class="dg-stat">{len(preview.cards)} / {len(preview.cards)}</span>',
        f'<span class="dg-stat">{_e(preview.summary)}</span>',
        "</header>",
        '<main class="dg-main">',
        *body,
        "</main>",
        f"<script>{_SCRIPT}</script>",
        "</body>",
        "</html>",
        "",
    ])


def _by_pr(cards: tuple[DeckCard, ...]) -> dict[str, list[DeckCard]]:
    groups: dict[str, list[DeckCard]] = {}
    for deck_card in cards:
        groups.setdefault(deck_card.card.entry.pr_key, []).append(deck_card)
    return groups


def _main_topic(pr_cards: list[DeckCard]) -> str:
    """The topic a PR is listed under: the one most of its cards carry (ties by id); "" for none.

    Each card appears once on the page, so a PR with several topics is shown under its main one.
    """
    counts = Counter(topic for c in pr_cards for topic in c.topics)
    return min(counts, key=lambda t: (-counts[t], t)) if counts else ""


def _pr_section(pr_cards: list[DeckCard]) -> str:
    entry = pr_cards[0].card.entry
    head = (f'<section class="dg-pr"><h3>{_e(entry.title)}</h3><div class="dg-pr-meta">{_e(entry.repo)} · '
            f"{_e(str(entry.path))}:{entry.title_line} · {_e(pr_cards[0].card.verdict.label)} · "
            f"{len(pr_cards)} cards</div>")
    return "\n".join([head, *(_card_article(c) for c in pr_cards), "</section>"])


def _card_article(deck_card: DeckCard) -> str:
    rendered = next(r for r in render_card(deck_card.card) if r.ordinal == deck_card.ordinal)
    card_class = f"card card{deck_card.ordinal}"
    tags = "".join(f'<span class="dg-tag">{_e(t)}</span>' for t in deck_card.tags if t != "deckgen")
    return (f'<article class="dg-card" data-kind="{_e(deck_card.card.kind.value)}" '
            f'data-tags="{_e(" ".join(deck_card.tags))}">'
            f'<div class="dg-card-meta"><b>{_e(deck_card.label)}</b>{tags}</div>'
            f'<div class="dg-side dg-front"><div class="{card_class}">{rendered.question}</div></div>'
            f'<div class="dg-side dg-back"><div class="{card_class}">{rendered.answer}</div></div>'
            "</article>")


def _e(text: str) -> str:
    return html.escape(text, quote=True)
