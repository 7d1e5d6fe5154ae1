"""No crash on any input: arbitrary bytes, arbitrary text, mutated real seed files, data files
and lock files end in a deck or a DeckgenError that names the file.

Each property runs FUZZ_EXAMPLES examples (2,000 by default; DECKGEN_FUZZ_EXAMPLES=20000
DECKGEN_FUZZ_RANDOM=1 for a hunt).  The pipeline properties stop at the deck's bytes in memory:
writing them is the atomic writer's business (tests/test_atomic.py), and a disk
write per example would cost more than the whole pipeline.  The seed properties
run without the results cache (every example would add a cache file and skip
nothing); the data-file and lock-file properties build one fixed seed file, so
the cache makes their extraction free.
"""

from __future__ import annotations

import json
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

from deckgen import BuildOptions
from deckgen.deck.package import apkg_bytes
from deckgen.errors import DeckgenError
from deckgen.pipeline import prepare_build
from deckgen.source.parse import read_corpus, scan_corpus
from tests.conftest import FIXTURES, SEEDS

FUZZ_EXAMPLES = int(os.environ.get("DECKGEN_FUZZ_EXAMPLES", "2000"))
# The suite explores the same examples on every run (seeded from each test), so that a change
# that breaks nothing never fails CI on an old bug hypothesis happens to find that day; a hunt
# for new crashes sets DECKGEN_FUZZ_RANDOM=1 (and DECKGEN_FUZZ_EXAMPLES) and gets fresh ones.
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=not os.environ.get("DECKGEN_FUZZ_RANDOM"))

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


def build_in_memory(path: Path, *, source: Path | None = None, output: Path | None = None) -> None:
    """The whole pipeline: a deck (checked to open as one) or a DeckgenError naming *path*, the file at fault.

    *source* (default *path*) is what is built; *output* (default beside it) where
    the lock file is looked for.
    """
    source = source or path
    output = output or path.parent.parent / "out" / "deck.apkg"
    try:
        prepared = prepare_build([source], output, options=BuildOptions(timestamp=1_700_000_000, cache=source != path))
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
    assert len(guids) == len(set(guids)) >= len(prepared.plan.cards)  # plus the obsolete notes the lock ships
    assert all(flds.count("\x1f") in (6, 7) for flds in fields)  # the note types' field counts, minus one


DATA_FILES = {name: (SEEDS / name).read_text(encoding="utf-8") for name in ("topics.toml", "glossary.toml")}
TOML_SNIPPETS = st.sampled_from(["[[topic]]", "[[term]]", 'id = "x"', 'term = "KV"', "keywords = [", "]", '"', "'''",
                                 "= ", "\\u0000", "\\x", "min_hits = -1", 'min_hits = "2"', "aliases = 3", "#", ".", ","])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def mutated_data_file(draw: st.DrawFn) -> tuple[str, bytes]:
    """topics.toml or glossary.toml from seeds/, mutated line-wise (TOML pieces too) and now and then byte-wise."""
    name = draw(st.sampled_from(sorted(DATA_FILES)))
    lines = DATA_FILES[name].split("\n")
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            i = draw(st.integers(0, len(lines)))
            lines = lines[:i] + [draw(TOML_SNIPPETS)] + lines[i:]
        else:
            lines = draw(_line_mutation(lines))
    data = "\n".join(lines).encode("utf-8")
    if not draw(st.integers(0, 4)):
        data = draw(_byte_mutation(data))
    return name, data


def _json_paths(value: object, path: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _json_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _json_paths(item, (*path, index))


@st.composite
def mutated_lock(draw: st.DrawFn, text: str) -> bytes:
    """A real lock file with values replaced, keys deleted or list items repeated; sometimes broken as text."""
    data = json.loads(text)
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _json_paths(data) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "replace", "delete", "repeat"]))
        if action == "replace":
            parent[path[-1]] = draw(JSON_VALUES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, list):
            parent.insert(path[-1], parent[path[-1]])
    raw = json.dumps(data, ensure_ascii=False, indent=0).encode("utf-8")
    if not draw(st.integers(0, 4)):
        raw = draw(_byte_mutation(raw))
    return raw


@pytest.fixture(scope="module", name="good_lock")
def _good_lock(scratch: Path) -> str:
    """The lock file a first build of tests/fixtures/good.txt writes."""
    from deckgen import build_deck

    out = scratch / "first" / "deck.apkg"
    build_deck([FIXTURES / "good.txt"], out, options=BuildOptions(timestamp=1_600_000_000))
    return out.with_suffix(".lock.json").read_text(encoding="utf-8")


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


@FUZZ
@given(case=mutated_data_file())
def test_pipeline_on_mutated_data_files(scratch: Path, case: tuple[str, bytes]) -> None:
    """A broken topics.toml or glossary.toml beside the seeds: a deck, or a DataFileError naming it."""
    name, data = case
    folder = scratch / "with-data"
    folder.mkdir(exist_ok=True)
    (folder / "good.txt").write_bytes((FIXTURES / "good.txt").read_bytes())
    for other in DATA_FILES:
        (folder / other).unlink(missing_ok=True)
    (folder / name).write_bytes(data)
    build_in_memory(folder / name, source=folder, output=scratch / "data-out" / "deck.apkg")


@FUZZ
@given(data=st.data())
def test_pipeline_on_mutated_lock_files(scratch: Path, good_lock: str, data: st.DataObject) -> None:
    """A damaged lock file beside the deck: a deck, or a DeckgenError naming the lock file."""
    lock = scratch / "lock-out" / "deck.lock.json"
    lock.parent.mkdir(exist_ok=True)
    lock.write_bytes(data.draw(mutated_lock(good_lock)))
    build_in_memory(lock, source=FIXTURES / "good.txt", output=lock.parent / "deck.apkg")
