"""How much of a corpus's vocabulary the glossary explains: the acronyms used by two or more PRs, and which lack an entry.

An acronym is what the build's warning counts (``deckgen.curriculum.glossary.find_acronyms``):
a run of 2–12 ASCII letters and digits starting with a letter, with at least two capitals and at
most one lower-case letter (DCP, MRV2, LoRA, MoE; not CuPy or DeepSeek), outside `code` spans, a
plural ``s`` dropped (PRs → PR).  Each PR counts once per acronym (its summary and review).

An acronym of the glossary is a term or an alias (an *entry*: a card teaches it), listed in
``ignore`` (needs no card: CPU, JSON, units, vendors), or neither (*missing*).  One that only
occurs inside a longer spelling of a term (KV in "KV cache") is counted as that term's.

    python benchmarks/glossary.py                                  # corpus/, the built-in glossary
    python benchmarks/glossary.py seeds --glossary seeds/glossary.toml --min-prs 1
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = [ROOT / "corpus" / half / "seeds" for half in ("dev", "locked", "firstsight")]


def main() -> None:
    from deckgen.curriculum.builtin import builtin_glossary
    from deckgen.curriculum.glossary import entry_text, find_acronyms, load_glossary, unknown_in
    from deckgen.source.parse import read_corpus
    from deckgen.types import norm

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=CORPORA, help="seed folders (default: corpus/*/seeds)")
    parser.add_argument("--glossary", type=Path, help="a glossary file on its own (default: the built-in glossary)")
    parser.add_argument("--min-prs", type=int, default=2, help="count acronyms used by at least this many PRs")
    args = parser.parse_args()

    glossary = load_glossary(args.glossary) if args.glossary else builtin_glossary()
    entries = [e for folder in args.folders for e in read_corpus([folder]).entries]
    prs: Counter[str] = Counter()
    unexplained: Counter[str] = Counter()  # PRs where the acronym stands outside every spelling of a term
    for entry in entries:
        text = entry_text(entry)
        prs.update(set(find_acronyms(text)))
        unexplained.update(set(unknown_in(text, glossary)))
    spellings = {norm(s) for t in glossary.terms for s in (t.term, *t.aliases)}
    ignored = {norm(s) for s in glossary.ignore}
    counted = sorted((a for a, n in prs.items() if n >= args.min_prs), key=lambda a: (-prs[a], a))
    entry = [a for a in counted if norm(a) in spellings or (norm(a) not in ignored and not unexplained[a])]
    ignore = [a for a in counted if norm(a) in ignored and a not in entry]
    missing = [a for a in counted if a not in entry and a not in ignore]

    def share(part: int, whole: int) -> str:
        return f"{part}/{whole} ({part / whole:.1%})" if whole else "0/0"

    print(f"{len(entries)} PRs in {len(args.folders)} folder(s); glossary: {glossary.label}, {len(glossary.terms)} terms")
    print(f"acronyms used by ≥ {args.min_prs} PRs: {len(counted)}")
    print(f"  with an entry (a term or an alias):    {share(len(entry), len(counted))}")
    print(f"  with an entry or listed in ignore:     {share(len(entry) + len(ignore), len(counted))}")
    print(f"  with an entry, of those not ignored:   {share(len(entry), len(counted) - len(ignore))}")
    print("ignored: " + (", ".join(f"{a} ({prs[a]})" for a in ignore) or "none"))
    print("missing: " + (", ".join(f"{a} ({prs[a]})" for a in missing) or "none"))


if __name__ == "__main__":
    main()
