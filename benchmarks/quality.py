"""Card quality against gold labels: decisions tested, off-target cards, cards per PR, cards by kind.

    python benchmarks/quality.py seeds --gold tests/golden/seeds-gold.json
    python benchmarks/quality.py ../shared/dev/seeds --gold ../shared/dev/gold
    python benchmarks/quality.py ../shared/dev/seeds --gold ../shared/dev/gold --show off-target

GOLD is a JSON file or a folder of them, each a list of PRs (``file``, ``title``,
``decisions`` with ``key`` and ``alt_keys``, ``not_decisions``), as
``../shared/gold/README.md`` describes.  The measures:

* **decisions tested**: a decision is tested when some card of its PR has its
  key, or one of its alternative keys, in its answer (Q/A) or in a cloze gap,
  the rule of ``tests/test_gold.py``;
* **off-target**: an Anki card whose answer (or gap) occurs in the review, but
  only inside the gold ``not_decisions`` parts; *checkable* cards are those
  whose answer occurs in the review at all;
* **cards per PR** and **cards by kind**, in Anki cards (a cloze note gives one
  card per deletion number); glossary cards belong to no PR and are left out.

Backticks and bold markers are markup only: every comparison is made without them.
The extractor never reads the gold files: they are a measure, not rule data.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from deckgen import BuildOptions, build_corpus
from deckgen.text.markup import deletions, strip_markdown
from deckgen.types import Card, CardKind


def plain(text: str) -> str:
    """*text* without Markdown: what the gold files compare."""
    return strip_markdown(text).replace("`", "")


@dataclass(frozen=True)
class AnkiCard:
    """One Anki card of a deckgen note: its kind and the texts it tests (its answer, or its gaps)."""

    card: Card
    ordinal: int
    tested: tuple[str, ...]

    @property
    def kind(self) -> str:
        return self.card.kind.value


def anki_cards(card: Card) -> Iterator[AnkiCard]:
    if card.kind != CardKind.CLOZE:
        yield AnkiCard(card, 1, (plain(card.answer),))
        return
    gaps: dict[int, list[str]] = {}
    for ordinal, body in deletions(card.prompt):
        gaps.setdefault(ordinal, []).append(plain(body))
    for ordinal, bodies in sorted(gaps.items()):
        yield AnkiCard(card, ordinal, tuple(bodies))


def read_gold(path: Path) -> list[dict]:
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    return [pr for f in files for pr in json.loads(f.read_text(encoding="utf-8"))]


def _spans(text: str, part: str) -> list[tuple[int, int]]:
    found, start = [], text.find(part)
    while part and start >= 0:
        found.append((start, start + len(part)))
        start = text.find(part, start + 1)
    return found


def off_target(tested: str, review: str, excluded: Sequence[tuple[int, int]]) -> bool | None:
    """Whether *tested* occurs in *review* only inside *excluded* spans; None when it does not occur at all."""
    occurrences = _spans(review, tested)
    if not occurrences:
        return None
    return all(any(a <= s and e <= b for a, b in excluded) for s, e in occurrences)


@dataclass
class PrScore:
    title: str
    decisions: int
    tested: list[str]
    untested: list[str]
    cards: list[AnkiCard]
    off: list[AnkiCard]
    checkable: int


def score_pr(pr: dict, cards: Sequence[Card], review_text: str) -> PrScore:
    shown = [a for c in cards for a in anki_cards(c)]
    texts = [t for a in shown for t in a.tested]
    tested, untested = [], []
    for decision in pr["decisions"]:
        keys = [plain(k) for k in [decision["key"], *decision.get("alt_keys", [])]]
        (tested if any(k in t for k in keys for t in texts) else untested).append(decision["key"])
    review = plain(review_text)
    excluded = [span for part in pr.get("not_decisions", []) for span in _spans(review, plain(part))]
    off, checkable = [], 0
    for anki_card in shown:
        verdicts = [off_target(t, review, excluded) for t in anki_card.tested]
        if any(v is not None for v in verdicts):
            checkable += 1
            if any(verdicts):
                off.append(anki_card)
    return PrScore(pr["title"], len(pr["decisions"]), tested, untested, shown, off, checkable)


def score(sources: Sequence[Path], gold: Sequence[dict]) -> list[PrScore]:
    corpus = build_corpus(sources, BuildOptions())
    by_pr: dict[tuple[str, str], list[Card]] = {}
    reviews: dict[tuple[str, str], str] = {}
    for review in corpus.reviews:
        reviews[(review.entry.path.name, review.entry.title)] = review.entry.review
    for card in corpus.cards:
        if card.kind != CardKind.GLOSSARY:
            by_pr.setdefault((card.entry.path.name, card.entry.title), []).append(card)
    files = {f.name for f in corpus.files}
    gold = [pr for pr in gold if pr["file"] in files]  # a gold folder may describe more seed files than given
    missing = [pr["title"] for pr in gold if (pr["file"], pr["title"]) not in reviews]
    if missing or not gold:
        sys.exit(f"gold PRs not found in the seeds: {missing}" if missing else "no gold PR is in these seeds")
    return [score_pr(pr, by_pr.get((pr["file"], pr["title"]), []), reviews[(pr["file"], pr["title"])]) for pr in gold]


def describe(card: AnkiCard) -> str:
    c = card.card
    front = c.prompt if c.kind != CardKind.CLOZE else c.prompt.replace("\ue000", "{{c").replace("\ue001", "::").replace("\ue002", "}}")
    return f"  [{c.kind.value}] {c.cue}{front}\n      → {' / '.join(card.tested)}"


def report(scores: Sequence[PrScore], show: str | None) -> str:
    lines = []
    if show:
        for s in scores:
            picked = {"off-target": s.off, "cards": s.cards}.get(show, [])
            if show == "untested" and s.untested:
                lines.append(f"{s.title[:40]}: untested {s.untested}")
            if picked:
                lines.append(f"## {s.title}")
                lines.extend(describe(c) for c in picked)
        lines.append("")
    decisions = sum(s.decisions for s in scores)
    tested = sum(len(s.tested) for s in scores)
    cards = sum(len(s.cards) for s in scores)
    off = sum(len(s.off) for s in scores)
    checkable = sum(s.checkable for s in scores)
    kinds = Counter(c.kind for s in scores for c in s.cards)
    per_pr = [len(s.cards) for s in scores]
    lines += [
        f"PRs: {len(scores)}",
        f"decisions tested: {tested}/{decisions} ({tested / decisions:.2f})" if decisions else "decisions tested: -",
        f"off-target cards: {off} of {cards} ({off / cards:.1%}); {checkable} checkable" if cards else "off-target cards: -",
        f"cards per PR: {cards / len(scores):.1f} (min {min(per_pr)}, max {max(per_pr)})",
        "cards by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", type=Path, nargs="+", help="seed files or folders")
    parser.add_argument("--gold", type=Path, required=True, help="a gold JSON file or a folder of them")
    parser.add_argument("--show", choices=["off-target", "cards", "untested"], help="also list these")
    args = parser.parse_args()
    try:
        print(report(score(args.seeds, read_gold(args.gold)), args.show))
    except BrokenPipeError:  # piped into head: the reader has what it wanted
        sys.stderr.close()


if __name__ == "__main__":
    main()
