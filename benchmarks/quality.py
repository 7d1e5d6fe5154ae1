"""Card quality against gold labels: decisions tested, off-target cards, cards per PR, cards by kind.

    python benchmarks/quality.py seeds --gold tests/golden/seeds-gold.json
    python benchmarks/quality.py ../shared/dev/seeds --gold ../shared/dev/gold
    python benchmarks/quality.py ../shared/dev/seeds --gold ../shared/dev/gold --show off-target
    python benchmarks/quality.py corpus/locked/seeds --gold corpus/locked/gold --label "locked half"

GOLD is a JSON file or a folder of them, each a list of PRs (``file``, ``title``,
``decisions`` with ``key`` and ``alt_keys``, ``not_decisions``), as
``../shared/gold/README.md`` describes.  The measures are :mod:`deckgen.report.quality`'s
(the rules of ``tests/test_gold.py``); cards per PR and cards by kind count Anki cards
(a cloze note gives one card per deletion number), glossary cards left out; PRs with no card; and the checks on
the rendered cards (raw Markdown, unbalanced brackets or quotes, a field starting or ending mid-phrase, an answer
shown on its front: deckgen.report.quality.rendering_problems).

deckgen must be importable: run it from the environment the README's Quick start installs
(``pip install -e .``), or from a checkout whose ``.venv`` or ``.ci-venv`` holds it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

try:
    from deckgen.errors import DeckgenError
    from deckgen.report.quality import (RENDERED_CHECKS, AnkiCard, PrScore, context_free, read_gold,
                                        rendering_problems, repeated, score)
    from deckgen.types import CardKind
except ModuleNotFoundError as missing:  # run by a Python that has not installed deckgen
    if not os.environ.get("DECKGEN_QUALITY_REEXEC"):  # once: a venv without deckgen must not loop
        for venv in (".venv", ".ci-venv"):
            python = ROOT / venv / "bin" / "python"
            if python.exists():
                os.environ["DECKGEN_QUALITY_REEXEC"] = "1"
                os.execv(python, [str(python), *sys.argv])
    sys.exit(f"benchmarks/quality.py: {missing.name} is not installed in {sys.executable}; run `pip install -e .` "
             "in this checkout first (the README's Quick start), or make a .venv there")


def describe(card: AnkiCard) -> str:
    c = card.card
    front = c.prompt if c.kind != CardKind.CLOZE else c.prompt.replace("\ue000", "{{c").replace("\ue001", "::").replace("\ue002", "}}")
    return f"  [{c.kind.value}] {c.cue}{front}\n      → {' / '.join(card.tested)}"


def report(scores: Sequence[PrScore], show: str | None, label: str = "") -> str:
    lines = [f"== {label}"] if label else []
    if show:
        for s in scores:
            picked = {"off-target": s.off, "cards": s.cards,
                      "rendered": [c for c in s.cards if rendering_problems(c)]}.get(show, [])
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
    notes = list({id(c.card): c.card for s in scores for c in s.cards}.values())
    reachable = sum(s.reachable for s in scores)
    keep = [c.score for c in notes]
    rendered = Counter(p for s in scores for c in s.cards for p in rendering_problems(c))
    lines += [
        f"PRs: {len(scores)}",
        f"decisions tested: {tested}/{decisions} ({tested / decisions:.2f})" if decisions else "decisions tested: -",
        f"oracle (some candidate that passes the gate tests it): {reachable}/{decisions} ({reachable / decisions:.2f})"
        if decisions else "oracle: -",
        f"off-target cards: {off} of {cards} ({off / cards:.1%}); {checkable} checkable" if cards else "off-target cards: -",
        f"cards per PR: {cards / len(scores):.1f} (min {min(per_pr)}, max {max(per_pr)})",
        f"PRs with no card: {sum(1 for n in per_pr if n == 0)}",
        "rendered cards: " + ", ".join(f"{check} {rendered[check]}" for check in RENDERED_CHECKS) + f" (of {cards})",
        f"questions: context-free {len(context_free(notes))}, repeated {len(repeated(notes))} (of {len(notes)} notes)",
        f"mean predicted KEEP: {sum(keep) / len(keep):.2f}" if keep else "mean predicted KEEP: -",
        "cards by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", type=Path, nargs="+", help="seed files or folders")
    parser.add_argument("--gold", type=Path, required=True, help="a gold JSON file or a folder of them")
    parser.add_argument("--show", choices=["off-target", "cards", "untested", "rendered"], help="also list these")
    parser.add_argument("--label", default="", help="a name for the corpus, printed first (for CI's log)")
    args = parser.parse_args()
    try:
        print(report(score(args.seeds, read_gold(args.gold)), args.show, args.label))
    except DeckgenError as error:
        sys.exit(f"benchmarks/quality.py: {error}")
    except BrokenPipeError:  # piped into head: the reader has what it wanted
        sys.stderr.close()


if __name__ == "__main__":
    main()
