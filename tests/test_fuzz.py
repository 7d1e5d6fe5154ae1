"""No crash on any input: arbitrary bytes, arbitrary text and mutated real seed files end in a deck or a DeckgenError.

Each property runs FUZZ_EXAMPLES examples (2,000 by default; set DECKGEN_FUZZ_EXAMPLES
for a longer hunt).  The pipeline properties stop at the deck's bytes in memory:
writing them is the atomic writer's business (tests/test_atomic.py), and a disk
write per example would cost more than the whole pipeline.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import zipfile
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, SEEDS
from deckgen.errors import DeckgenError
from deckgen.package import apkg_bytes
from deckgen.parse import read_corpus, scan_corpus
from deckgen.pipeline import prepare_build

FUZZ_EXAMPLES = int(os.environ.get("DECKGEN_FUZZ_EXAMPLES", "2000"))
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces that steer random text into the parser's and extractor's corners.
SNIPPETS = [
    "o/r", "vllm-project/vllm", "\n", "\n\n", "\r\n", "\ufeff", "\t", " ", "1) ", "2) ", "3. ", "①", "②", "一是", "二是",
    "**", "`", "**名称**: ", "：", "；", "，", "。", "、", "——", "而非", "而不是", "以避免", "以", "为了", "通过", "实现",
    "采用", "替代", "确保", "从而", "解决", "作为", "把", "用", "精读", "值得精读", "快速浏览", "不值得精读", "这是一个值得精读的 PR",
    "关键设计决策：", "`torch.empty`", "enable_prefix_caching", "torch::Tensor", "Map<T>", "#1234", "<script>", "{{c1::",
    "}}", "::", "[sound:x.mp3]", "\\(", "\\[", "&", "\ue000", "\ue001", "\ue002", "\x1f", "\u2028", "\x85", "(", ")",
    "“", "”", "「", "」", "x" * 200, "值" * 160,
]
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
PIECE = st.one_of(st.sampled_from(SNIPPETS), TEXT)
INLINE_PIECE = PIECE.map(lambda piece: piece.replace("\n", " ").replace("\r", " "))


def _real_seed_texts() -> list[str]:
    paths = sorted(SEEDS.glob("*.txt")) + sorted(FIXTURES.glob("*.txt")) + sorted((FIXTURES / "heldout").glob("*.txt"))
    return [p.read_text(encoding="utf-8") for p in paths]


REAL_SEEDS = _real_seed_texts()


@st.composite
def structured_text(draw: st.DrawFn) -> str:
    """Text shaped like a seed file (mostly well-formed: a repository, then summary/review pairs) of random pieces."""
    first = draw(st.sampled_from(["o/r", "o/r", "o/r", "own-er/na.me", "o /r", "https://github.com/o/r", ""]))
    pairs = draw(st.lists(st.tuples(st.lists(PIECE, min_size=1, max_size=6), st.lists(PIECE, min_size=1, max_size=16)),
                          max_size=4))
    separator = st.sampled_from(["\n\n"] * 6 + ["\n", "\n\n\n", " \n\n", "\n \n", "\r\n\r\n"])
    text = first
    for title, review in pairs:
        text += draw(separator) + "".join(title).replace("\n", " ") + draw(separator) + "".join(review)
    return text


@st.composite
def mutated_seed(draw: st.DrawFn) -> bytes:
    """A real seed file cut down to its repository line and a few entries, then mutated.

    Mostly small edits inside the entries (the repository line and the byte
    encoding stay intact in most examples), so that most examples get past the
    parser and exercise extraction, cards and packaging.
    """
    text = draw(st.sampled_from(REAL_SEEDS))
    head, *blocks = text.strip("\n").split("\n\n")
    entries = ["\n\n".join(blocks[i : i + 2]) for i in range(0, len(blocks), 2)]  # summary + review
    start = draw(st.integers(0, max(0, len(entries) - 1)))
    count = draw(st.integers(1, 4))
    lines = "\n\n".join([head, *entries[start : start + count]]).split("\n")
    first, body = (lines[:1], lines[1:]) if draw(st.integers(0, 9)) else ([], lines)
    for _ in range(draw(st.integers(1, 4))):
        body = draw(_line_mutation(body))
    data = "\n".join(first + body).encode("utf-8")
    if not draw(st.integers(0, 4)):
        data = draw(_byte_mutation(data))
    return data


def _line_mutation(lines: list[str]) -> st.SearchStrategy[list[str]]:
    index = st.integers(0, max(0, len(lines) - 1))
    filled = [i for i, line in enumerate(lines) if line.strip()] or [0]
    text_line = st.sampled_from(filled)

    def delete(i: int) -> list[str]:
        return lines[:i] + lines[i + 1 :]

    def duplicate(i: int) -> list[str]:
        return lines[: i + 1] + lines[i:]

    def swap(ij: tuple[int, int]) -> list[str]:
        out = list(lines)
        if out:
            i, j = ij
            out[i], out[j] = out[j], out[i]
        return out

    def insert(args: tuple[int, str]) -> list[str]:
        i, new = args
        return lines[:i] + [new] + lines[i:]

    def splice(args: tuple[int, int, str]) -> list[str]:
        i, at, piece = args
        if not lines:
            return [piece]
        line = lines[i]
        at = min(at, len(line))
        return lines[:i] + [line[:at] + piece + line[at:]] + lines[i + 1 :]

    def cut(args: tuple[int, int]) -> list[str]:
        i, at = args
        return lines[:i] + [lines[i][:at]] + lines[i + 1 :] if lines else lines

    def join(i: int) -> list[str]:
        return lines[:i] + ["".join(lines[i : i + 2])] + lines[i + 2 :]

    # Edits inside a line keep the file's structure; the rest break it now and then.
    splices = st.tuples(text_line, st.integers(0, 400), INLINE_PIECE).map(splice)
    cuts = st.tuples(text_line, st.integers(1, 400)).map(cut)
    return st.one_of(
        splices, splices, splices, splices, splices, splices, cuts, cuts, index.map(delete), index.map(duplicate),
        st.tuples(index, index).map(swap), st.tuples(index, st.one_of(st.just(""), PIECE)).map(insert),
        index.map(join),
    )


def _byte_mutation(data: bytes) -> st.SearchStrategy[bytes]:
    at = st.integers(0, len(data))

    def flip(args: tuple[int, int]) -> bytes:
        i, value = args
        return data[:i] + bytes([value]) + data[i + 1 :] if i < len(data) else data

    def truncate(i: int) -> bytes:
        return data[:i]

    def insert(args: tuple[int, bytes]) -> bytes:
        i, raw = args
        return data[:i] + raw + data[i:]

    return st.one_of(st.tuples(at, st.integers(0, 255)).map(flip), at.map(truncate),
                     st.tuples(at, st.binary(max_size=8)).map(insert))


@pytest.fixture(scope="module", name="scratch")
def _scratch() -> Iterator[Path]:
    """One folder for the whole module: hypothesis runs many examples per test function."""
    with tempfile.TemporaryDirectory(prefix="deckgen-fuzz-") as folder:
        yield Path(folder)


def seed_file(scratch: Path, data: bytes) -> Path:
    path = scratch / "seeds" / "fuzz.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return path


def assert_user_error(exc: DeckgenError, path: Path) -> None:
    """A message for a person: it names the seed file and says something beyond it."""
    message = str(exc)
    assert message.startswith(f"{path}"), message
    assert len(message) > len(f"{path}: ") + 5, message


def build_in_memory(path: Path) -> None:
    """The whole pipeline on one seed file: a deck (checked to open as one) or a DeckgenError naming the file."""
    try:
        prepared = prepare_build([path], path.parent.parent / "out" / "deck.apkg", timestamp=1_700_000_000)
    except DeckgenError as exc:
        assert_user_error(exc, path)
        return
    data = apkg_bytes(prepared.plan)
    with zipfile.ZipFile(BytesIO(data)) as archive:
        collection = archive.read("collection.anki2")
    connection = sqlite3.connect(":memory:")
    try:
        connection.deserialize(collection)
        guids = [row[0] for row in connection.execute("select guid from notes")]
        fields = [row[0] for row in connection.execute("select flds from notes")]
    finally:
        connection.close()
    assert len(guids) == len(set(guids)) == len(prepared.plan.cards)
    assert all(flds.count("\x1f") in (6, 7) for flds in fields)  # the note types' field counts, minus one


@FUZZ
@given(data=st.one_of(st.binary(max_size=3000), st.binary(max_size=3000).map(lambda b: b"o/r\n\n" + b)))
def test_parser_on_arbitrary_bytes(scratch: Path, data: bytes) -> None:
    """Any bytes: the parse stage (build's and lint's view) gives entries or a SeedError naming the file."""
    path = seed_file(scratch, data)
    assert scan_corpus([path]).files == (path,)  # lint: findings, never an exception
    try:
        read_corpus([path])
    except DeckgenError as exc:
        assert_user_error(exc, path)


@FUZZ
@given(text=st.one_of(st.text(max_size=300), structured_text()))
def test_pipeline_on_arbitrary_text(scratch: Path, text: str) -> None:
    build_in_memory(seed_file(scratch, text.encode("utf-8")))


@FUZZ
@given(data=mutated_seed())
def test_pipeline_on_mutated_seed_files(scratch: Path, data: bytes) -> None:
    build_in_memory(seed_file(scratch, data))
