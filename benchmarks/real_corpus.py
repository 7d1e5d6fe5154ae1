"""Generate a benchmark corpus of real review text: ``corpus/`` repeated to any size (benchmarks only).

The synthetic corpora (``make_corpus.py``) recombine the 16 reviews of ``seeds/``,
so their clauses recur and deckgen's memo caches flatter it.  This corpus takes
every entry of ``corpus/dev``, ``corpus/dev2`` and ``corpus/firstsight`` (424
real reviews by 22 writers), in a fixed order, and writes them again and again
until *count* entries.  ``corpus/locked`` is left out: it is a measuring set kept
unread, and a benchmark that printed or tuned on its text would spend it.

The first copy of each review is its text as written.  Every later copy is
changed so that no memo keyed on a text or a clause hits across copies:

* every code span (in backticks) gets a fresh identifier of the same shape
  (``make_corpus.fresh_identifier``);
* every bare ASCII identifier outside backticks (a word with an underscore, a
  dot between letters, a CamelCase hump or a digit: ``lru_cache``,
  ``torch.compile``, ``FlashAttention``, ``fp8``) is renamed, the same way
  throughout the entry (summary and review), to a name of the same shape: each
  run of letters a word of the same case, each run of digits as many digits;
* every PR reference (``#4655``) in the review is renumbered, the same way
  throughout the entry;
* a clause of the summary or review (a run ending in ，；。！？：or a line end,
  as deckgen's decision model and key phrases read and memoize them) that none
  of the above changed, so that it would read the same as in the first copy,
  gets a fresh PR reference before its punctuation, " (#48213)", as reviews
  and summaries cite PRs ("无需草稿模型 (#4237)").  Without it 38% of the
  sentences and 64% of the clauses of a 10,000-entry corpus repeat an earlier
  one; with it 0.2% and 0.6% (``repeats``, printed by ``main``).  Two forms
  were tried first: marking only a sentence's end left the decision model's
  memo hitting 32% and the key phrases' 27% on 1,000 entries (``stages.py``);
  "（见 #48213）" in every clause left the key phrases' at 9.6%, since they
  read a clause without its （asides）.  With " (#48213)" they hit 3.4% and 0.6%
  on 1,000 entries (within the 424 distinct reviews: 6.5% and 0.2%).  The
  references leave the words as they are: a copy has as many facts as its first
  copy (21.82 against 21.87 an entry) and cards (3.37 against 3.33).

Every summary of every copy, the first included, ends in a PR number unique in
the corpus, "（#12）", as GitHub titles merged PRs (in place of its own number,
which 31 of them have): two entries of one repository with the same summary
are one PR to deckgen.  Files hold 50 entries under the repository line of their
first entry (the others keep their text, not their repository); ``topics.toml``
and ``glossary.toml`` are copied beside them from ``seeds/``.

Entry *i* of any corpus is the same text whatever *count* and *start* are
(its own random generator is seeded with *seed* and *i*): the same arguments
give the same files, and ``--start N`` writes entries that follow a corpus of N.

    python benchmarks/real_corpus.py 10000 /tmp/real-10k     # also prints how many sentences and clauses repeat
    python benchmarks/real_corpus.py 50 /tmp/extra --start 10000
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from make_corpus import _CODE_RE, _WORDS, ROOT, copy_data_files, fresh_identifier, write_seed_file

SOURCES = tuple(ROOT / "corpus" / half / "seeds" for half in ("dev", "dev2", "firstsight"))
"""The folders copied, in this order: never ``corpus/locked`` (a measuring set, kept unread)."""

# A bare ASCII word: starts with a letter, may hold _ . - inside; not part of a longer word, path or flag.
_BARE_RE = re.compile(r"(?<![\w./#-])[A-Za-z][A-Za-z0-9_.\-]*[A-Za-z0-9](?![\w/])", re.ASCII)
# What makes a bare word an identifier (plain words such as ETCD, Mooncake or rdma stay).
_IDENTIFIER_RE = re.compile(r"_|[A-Za-z]\.[A-Za-z]|[a-z][A-Z]|[A-Z]{2}[a-z]{2}|\d", re.ASCII)  # SGLang, not GPUs
# The pieces a bare identifier is renamed by: a run of capitals (an acronym), a word, a run of digits.
_PIECE_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", re.ASCII)
_PR_REF_RE = re.compile(r"#(\d+)")
# Sentences as ``repeats`` counts them (the brief's 。！？；, plus line ends: each list item is a sentence).
_SENTENCE_RE = re.compile(r"[^。！？；\n]+[。！？；]?")
# Clauses, as deckgen's decision model and key phrases read them (and memoize them): cut at ，；。！？：and line
# ends, a code span whole (renaming changes no clause's bounds).
_CLAUSE_RE = re.compile(r"(?:`[^`\n]+`|[^，,；;。！？：:\n`])+[，,；;。！？：:]?")
_CLAUSE_END = re.compile(r"[，,；;。！？：:]?\s*$")  # a reference goes before the clause's punctuation
_OWN_NUMBER_RE = re.compile(r"（#\d+）$")
_TITLE_NUMBER_RE = re.compile(r"\s*[(（]\s*#\d+\s*[)）]\s*[。.]?\s*$")  # a summary's own PR number (GitHub's "(#4237)")
_CJK_RE = re.compile(r"[\u3400-\u9fff]")


def read_real_entries(folders: Iterable[Path] = SOURCES) -> list[tuple[str, str, str]]:
    """(repository, summary, review) of every entry in the seed files of *folders*, files in name order.

    The same format rules as ``make_corpus.read_seed_entries`` (and deckgen's parser): the first block is the
    repository line, then summary and review blocks in pairs.
    """
    entries: list[tuple[str, str, str]] = []
    for folder in folders:
        for path in sorted(folder.glob("*.txt")):
            blocks = [b.strip() for b in re.split(r"\n\s*\n", path.read_text(encoding="utf-8").strip())]
            repo, blocks = blocks[0], blocks[1:]
            entries.extend((repo, blocks[i], blocks[i + 1]) for i in range(0, len(blocks) - 1, 2))
    return entries


def bare_identifier(rng: random.Random, original: str) -> str:
    """A fresh name shaped like the bare identifier *original*: its separators kept, each run of letters a word of
    the same case (``FlashAttention`` → ``GraphSlot``, ``vLLM`` → ``kvPOOL``), each run of digits as many digits."""
    def piece(match: re.Match[str]) -> str:
        text = match.group()
        if text.isdigit():
            return str(rng.randint(10 ** (len(text) - 1) if len(text) > 1 else 0, 10 ** len(text) - 1))
        word = rng.choice(_WORDS)
        return word.upper() if text.isupper() and len(text) > 1 else word.capitalize() if text[0].isupper() else word
    return _PIECE_RE.sub(piece, original)


class _Renamer:
    """Renames one entry's identifiers and PR references, each the same way wherever it occurs."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.names: dict[str, str] = {}
        self.refs: dict[str, str] = {}

    def text(self, text: str) -> str:
        # Code spans and the prose between them apart: a bare word is renamed only outside backticks.
        out, at = [], 0
        for match in _CODE_RE.finditer(text):
            out.append(self._prose(text[at:match.start()]))
            out.append(f"`{fresh_identifier(self.rng, match.group(1))}`")  # every span fresh, as make_corpus does
            at = match.end()
        out.append(self._prose(text[at:]))
        return "".join(out)

    def _prose(self, text: str) -> str:
        text = _BARE_RE.sub(self._bare, text)
        return _PR_REF_RE.sub(self._ref, text)

    def _bare(self, match: re.Match[str]) -> str:
        word = match.group()
        if not _IDENTIFIER_RE.search(word):
            return word
        if word not in self.names:
            self.names[word] = bare_identifier(self.rng, word)
        return self.names[word]

    def _ref(self, match: re.Match[str]) -> str:
        number = match.group(1)
        if number not in self.refs:
            self.refs[number] = str(self.rng.randint(10 ** (len(number) - 1), 10 ** len(number) - 1))
        return "#" + self.refs[number]

    def unchanged(self, original: str, renamed: str) -> str:
        """*renamed*, with a fresh PR reference before the end of each clause that reads as in *original*
        (a clause with no Chinese, such as a lone "）", is left)."""
        before = [m.group() for m in _CLAUSE_RE.finditer(original)]
        after = list(_CLAUSE_RE.finditer(renamed))
        if len(before) != len(after):  # cannot happen (renaming keeps every 。！？；and line end); stay safe
            return renamed
        out, at = [], 0
        for old, new in zip(before, after):
            if old == new.group() and _CJK_RE.search(old):
                end = new.start() + _CLAUSE_END.search(old).start()  # type: ignore[union-attr]  # always matches
                out += [renamed[at:end], f" (#{self.rng.randint(10_000, 99_999)})"]
                at = end
        return "".join(out) + renamed[at:]


def real_entry(sources: list[tuple[str, str, str]], index: int, seed: int, vary: bool = True) -> tuple[str, str, str]:
    """(repository, summary, review) of entry *index*: copy ``index // len(sources)`` of source entry
    ``index % len(sources)``, changed as the module says (without the PR references added to unchanged sentences
    unless *vary*), with PR number ``index + 1``."""
    repo, summary, review = sources[index % len(sources)]
    summary = _TITLE_NUMBER_RE.sub("", summary)  # 31 of the 424 end in their own number: the unique one replaces it
    copy = index // len(sources)
    if copy:
        renamer = _Renamer(random.Random(seed * 1_000_003 + index))
        renamed = renamer.text(summary), renamer.text(review)
        summary, review = (renamer.unchanged(summary, renamed[0]), renamer.unchanged(review, renamed[1])) if vary \
            else renamed
    return repo, f"{summary.rstrip('。')}（#{index + 1}）", review


def write_real_corpus(count: int, folder: Path, *, start: int = 0, per_file: int = 50, seed: int = 8,
                      data_files: bool = True, vary: bool = True, sources: Iterable[Path] = SOURCES) -> list[Path]:
    """Write entries *start* to *start* + *count* of the real corpus into seed files under *folder*; return the files."""
    real = read_real_entries(sources)
    folder.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    for first in range(start, start + count, per_file):
        entries = [real_entry(real, i, seed, vary) for i in range(first, min(first + per_file, start + count))]
        # Under the repository of the file's first entry.
        files.append(write_seed_file(folder / f"{first // per_file:05d}_real.txt", entries[0][0],
                                     [(summary, review) for _, summary, review in entries]))
    if data_files:
        copy_data_files(folder)
    return files


def repeats(folder: Path, pieces: re.Pattern[str] = _SENTENCE_RE) -> tuple[int, int, float, float]:
    """How much of *folder*'s text (summaries without their PR number, and reviews) repeats, in *pieces*
    (sentences, or ``_CLAUSE_RE``'s clauses): (distinct pieces, pieces, share of the distinct pieces that occur more
    than once, share of the pieces that are a repeat of an earlier one).

    The second share is what an unbounded memo keyed on these pieces would hit; the first is the brief's measure.
    """
    counts: Counter[str] = Counter()
    for _, summary, review in read_real_entries([folder]):
        summary = _OWN_NUMBER_RE.sub("", summary)  # deckgen reads a summary without its number (headline.core_of)
        text = f"{summary}\n{review}"
        counts.update(p for p in (m.group().strip(" ，,；;。！？：:") for m in pieces.finditer(text)) if p)
    total = sum(counts.values())
    repeated = sum(1 for n in counts.values() if n > 1)
    return len(counts), total, repeated / len(counts), (total - len(counts)) / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="number of entries")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--start", type=int, default=0, help="first entry (use a new range for extra files)")
    parser.add_argument("--per-file", type=int, default=50)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--no-vary", action="store_true",
                        help="leave the sentences no renaming changed as they are (to measure what varying them does)")
    args = parser.parse_args()
    files = write_real_corpus(args.count, args.folder, start=args.start, per_file=args.per_file, seed=args.seed,
                              vary=not args.no_vary)
    print(f"{args.count} entries in {len(files)} files → {args.folder}")
    for name, pieces in (("sentences", _SENTENCE_RE), ("clauses", _CLAUSE_RE)):
        distinct, total, of_distinct, of_all = repeats(args.folder, pieces)
        print(f"{name}: {total}, distinct {distinct}; {of_distinct:.1%} of the distinct ones occur more than once, "
              f"{of_all:.1%} of all are a repeat of an earlier one")


if __name__ == "__main__":
    main()
