"""Generate a large synthetic corpus in the seed format from the real seeds (benchmarks only).

Every synthetic entry is a real review recombined: its first sentence (which
usually carries the reading verdict) comes from one real review, each further
sentence either from the same real review at the same position or from any
review, and every code span gets a fresh identifier, so no two entries repeat
and jieba, the extractor and the quality gate see text shaped like the seeds.
Their sentences do recur, though, far more than real reviews repeat each other:
``reuse.py`` measures how much that flatters deckgen's memo caches.
Summaries are real summaries with fresh identifiers and a PR number, unique per
corpus.  Files hold ``--per-file`` entries (default 50) under a handful of
repositories; ``topics.toml`` and ``glossary.toml`` are copied beside them so a
build does the whole curriculum work too.

    python benchmarks/make_corpus.py 10000 /tmp/corpus-10k
    python benchmarks/make_corpus.py 50 /tmp/extra --start 10000   # one more file, new PRs

Deterministic: the same arguments give the same files.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
_CODE_RE = re.compile(r"`([^`\n]+)`")
# Sentence ends; the ending punctuation stays with its sentence.
_SENTENCE_RE = re.compile(r"[^。！？!?]+(?:[。！？!?]+|$)")
_WORDS = ("cache", "block", "kv", "sched", "token", "batch", "graph", "layer", "rank", "slot", "prefill",
          "decode", "spec", "draft", "expert", "router", "buffer", "stream", "worker", "engine", "lora",
          "quant", "dtype", "shape", "mask", "seq", "page", "pool", "state", "meta", "fused", "attn")
_REPOS = ("vllm-project/vllm", "synth-org/inference-core", "synth-org/kernels", "acme/serving", "acme/runtime")


def read_seed_entries(folder: Path = SEEDS) -> list[tuple[str, str]]:
    """(summary, review) of every entry in the real seed files (same format rules as deckgen's parser)."""
    entries: list[tuple[str, str]] = []
    for path in sorted(folder.glob("*.txt")):
        blocks = [b.strip() for b in re.split(r"\n\s*\n", path.read_text(encoding="utf-8").strip())]
        blocks = blocks[1:]  # the repository line
        entries.extend((blocks[i], blocks[i + 1]) for i in range(0, len(blocks) - 1, 2))
    return entries


def fresh_identifier(rng: random.Random, original: str) -> str:
    """A fresh code identifier shaped like *original* (a call keeps its parentheses, a path its slashes)."""
    words = [rng.choice(_WORDS) for _ in range(rng.randint(2, 3))]
    name = "_".join(words) + f"_{rng.randint(0, 99_999)}"
    if "/" in original:
        name = "/".join(words[:-1]) + f"/{words[-1]}_{rng.randint(0, 999)}.py"
    elif original.endswith(")"):
        name += "()"
    elif "." in original:
        name = f"{words[0]}.{name}"
    return name


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.real = read_seed_entries()
        self.sentences = [_SENTENCE_RE.findall(review) for _, review in self.real]
        self.pool = [s for sentences in self.sentences for s in sentences[1:]]

    def identifier(self, original: str) -> str:
        return fresh_identifier(self.rng, original)

    def fresh(self, text: str) -> str:
        return _CODE_RE.sub(lambda m: f"`{self.identifier(m.group(1))}`", text)

    def entry(self, number: int) -> tuple[str, str]:
        base = self.rng.randrange(len(self.real))
        title = self.fresh(self.real[base][0]).rstrip("。")
        sentences = self.sentences[base]
        out = [sentences[0]]
        for sentence in sentences[1:]:
            out.append(sentence if self.rng.random() < 0.6 else self.rng.choice(self.pool))
        return f"{title}（#{number}）", self.fresh("".join(out))


def write_corpus(count: int, folder: Path, *, start: int = 0, per_file: int = 50, seed: int = 8,
                 data_files: bool = True) -> list[Path]:
    """Write *count* entries (PR numbers from *start*) into seed files under *folder*; return the files."""
    folder.mkdir(parents=True, exist_ok=True)
    gen = Generator(seed * 1_000_003 + start)
    files: list[Path] = []
    for first in range(start, start + count, per_file):
        numbers = range(first, min(first + per_file, start + count))
        repo = _REPOS[(first // per_file) % len(_REPOS)]
        entries = [gen.entry(number) for number in numbers]
        files.append(write_seed_file(folder / f"{first // per_file:05d}_synthetic.txt", repo, entries))
    if data_files:
        copy_data_files(folder)
    return files


def write_seed_file(path: Path, repo: str, entries: Iterable[tuple[str, str]]) -> Path:
    """A seed file at *path*: the repository line, then each (summary, review); return the path."""
    blocks = [repo]
    for summary, review in entries:
        blocks.extend((summary, review))
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path


def copy_data_files(folder: Path) -> None:
    """``topics.toml`` and ``glossary.toml`` of the seeds beside *folder*'s seed files, so a build does the whole
    curriculum work too."""
    for name in ("topics.toml", "glossary.toml"):
        shutil.copyfile(SEEDS / name, folder / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="number of entries")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--start", type=int, default=0, help="first PR number (use a new range for extra files)")
    parser.add_argument("--per-file", type=int, default=50)
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args()
    files = write_corpus(args.count, args.folder, start=args.start, per_file=args.per_file, seed=args.seed)
    print(f"{args.count} entries in {len(files)} files → {args.folder}")


if __name__ == "__main__":
    main()
