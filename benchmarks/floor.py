"""The floor: the least work any implementation of a build must do (benchmarks only).

Read every seed file named on the command line (folders: every ``*.txt`` in
them), segment all their text once with jieba, and write NOTES notes with
genanki to OUTPUT.  No extraction, no cards, no lock file: whatever deckgen
does beyond this is its own cost, which the harness reports as a ratio to it.

    python benchmarks/floor.py OUTPUT.apkg NOTES SEEDS...
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> None:
    output, notes, sources = Path(sys.argv[1]), int(sys.argv[2]), [Path(a) for a in sys.argv[3:]]
    files = sorted(p for s in sources for p in (s.rglob("*.txt") if s.is_dir() else [s]))
    texts = [f.read_text(encoding="utf-8") for f in files]

    import jieba

    jieba.setLogLevel(60)
    words = [w for text in texts for w in jieba.cut(text)]

    import genanki

    model = genanki.Model(1_234_567_890, "floor", fields=[{"name": "Front"}, {"name": "Back"}],
                          templates=[{"name": "Card", "qfmt": "{{Front}}", "afmt": "{{Back}}"}])
    deck = genanki.Deck(1_234_567_891, "floor")
    # Notes about as long as deckgen's (a question and an answer of some tens of words each).
    step = max(1, len(words) // max(notes, 1))
    for i in range(notes):
        start = (i * step) % len(words) if words else 0
        chunk = words[start:start + 40] or ["x"]
        deck.add_note(genanki.Note(model, fields=["".join(chunk[:25]), "".join(chunk[25:]) or "x"],
                                   guid=genanki.guid_for("floor", i)))
    genanki.Package(deck).write_to_file(str(output))
    print(f"floor: {len(files)} files, {sum(map(len, texts))} characters, {len(words)} words, {notes} notes")


if __name__ == "__main__":
    main()
