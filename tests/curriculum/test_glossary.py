"""The glossary: reading glossary.toml, acronyms without an entry, and one shared card per term used."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from deckgen import BuildOptions
from deckgen.cli import cli
from deckgen.curriculum.builtin import builtin_path
from deckgen.curriculum.glossary import (
    Glossary,
    Term,
    entry_text,
    find_acronyms,
    load_glossary,
    terms_used,
    unknown_in,
)
from deckgen.deck.notes import card_guid, card_tags
from deckgen.errors import DataFileError
from deckgen.pipeline import build_corpus, build_deck
from deckgen.source.parse import parse_corpus
from deckgen.text.matching import fold
from deckgen.types import CardKind, Entry
from tests.conftest import SEEDS, AnkiCollection, write_seed

GLOSSARY = """\
use_builtin = false
ignore = ["PR"]

[[term]]
term = "DCP"
en = "Decode Context Parallelism"
zh = "解码上下文并行"
meaning = "解码阶段把 KV cache 按 token 切到多卡。"
aliases = ["解码上下文并行"]

[[term]]
term = "KV cache"
en = "Key-Value cache"
zh = "注意力键值缓存"
aliases = ["KV 缓存"]

[[term]]
term = "UVA"
en = "Unified Virtual Addressing"
zh = "统一虚拟寻址"
"""
TOPICS = """\
use_builtin = false

[[topic]]
id = "parallel"
zh = "并行"
en = "Parallelism"
keywords = ["DCP", "解码上下文并行"]

[[topic]]
id = "memory"
zh = "显存"
en = "Memory"
keywords = ["KV 缓存", "显存"]
"""
SEED = """\
o/r

为 DCP 集中初始化元数据

值得精读。采用集中初始化而非分散初始化，以避免元数据过时；该 PR 也修复了 FOO 路径。

扩展解码上下文并行到 KV 缓存写入

值得精读。通过预分配显存实现零拷贝写入，从而避免 BAR 与 FOO 路径上的额外拷贝。
"""


@pytest.fixture(name="corpus_dir")
def _corpus_dir(tmp_path: Path) -> Path:
    write_seed(tmp_path, "a.txt", SEED)
    (tmp_path / "glossary.toml").write_text(GLOSSARY, encoding="utf-8")
    (tmp_path / "topics.toml").write_text(TOPICS, encoding="utf-8")
    return tmp_path


def test_loads_terms_with_lines_and_ignore_list(corpus_dir: Path) -> None:
    glossary = load_glossary(corpus_dir / "glossary.toml")
    assert [(t.term, t.line) for t in glossary.terms] == [("DCP", 4), ("KV cache", 11), ("UVA", 17)]
    assert glossary.ignore == ("PR",)
    assert glossary.terms[0].aliases == ("解码上下文并行",)
    assert glossary.knows("dcp") and glossary.knows("PR") and not glossary.knows("FOO")


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('[[term]]\nterm = "A"\nen = "B"\n', 1, "term 'A' has no 'zh'"),
        ('[[term]]\nterm = "KV cache"\nen = "e"\nzh = "z"\n\n[[term]]\nterm = "kv-cache"\nen = "e"\nzh = "z"\n', 6,
         "duplicate term 'kv-cache' (first defined on line 1)"),
        ('[[term]]\nterm = "A"\nen = "e"\nzh = "z"\nmeaning = 3\n', 1, "term 'A': 'meaning' must be a string"),
        ('[[term]]\nterm = "A"\nen = "e"\nzh = "z"\nalias = ["x"]\n', 1, "unknown key 'alias' in [[term]]"),
        ('ignore = "PR"\nignore2 = 1\n', 2, "unknown key 'ignore2' in the file"),
        ('ignore = [1]\n', 1, "'ignore' must be a list of non-empty strings"),
        ('[[term]]\nterm = "A"\nen = "e\nzh = "z"\n', 3, "invalid TOML: Illegal character '\\n' (column 8)"),
        ('ignore = []\nuse_builtin = 0\n', 2, "'use_builtin' must be true or false"),
    ],
    ids=["missing-zh", "duplicate-normalised", "meaning-type", "typo-key", "top-level", "ignore-type", "syntax",
         "use-builtin-type"],
)
def test_bad_glossary_names_file_and_line(tmp_path: Path, text: str, line: int, problem: str) -> None:
    path = tmp_path / "glossary.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFileError) as caught:
        load_glossary(path)
    assert (caught.value.line, caught.value.problem) == (line, problem)
    assert str(caught.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DCP 与 PCP、DBO 交互", ["DCP", "PCP", "DBO"]),
        ("MRV2 支持 prompt embeds，AVX512/AMX 内核", ["MRV2", "AVX512", "AMX"]),
        ("Rust 前端新增 LoRA，MoE 框架，ROCm 上", ["LoRA", "MoE", "ROCm"]),
        ("放宽 CuPy 约束，DeepSeek-V4 与 MiniCPM-V 模型", []),
        ("两个 PRs 与 GPUs", ["PR", "GPU"]),
        ("见 `DCP_SIZE` 与 `MAX_LEN`", []),
        ("ASM-GEMM 与 TP-only 行为", ["ASM", "GEMM", "TP"]),
    ],
    ids=["plain", "digits", "one-lower-case", "names", "plurals", "code-spans", "hyphens"],
)
def test_find_acronyms(text: str, expected: list[str]) -> None:
    assert find_acronyms(text) == expected


def test_answer_adds_the_english_expansion_unless_it_repeats_the_term() -> None:
    assert Term("DCP", "Decode Context Parallelism", "解码上下文并行").answer == "解码上下文并行（Decode Context Parallelism）"
    assert Term("CUDA Graph", "CUDA Graphs", "录制后整体重放的 kernel 启动序列").answer == "录制后整体重放的 kernel 启动序列"


def test_one_card_per_used_term_tagged_with_its_prs_topics(corpus_dir: Path) -> None:
    """DCP (used by both PRs, once via its alias) and KV cache get a card; UVA (unused) does not."""
    corpus = build_corpus([corpus_dir])
    cards = {c.prompt: c for c in corpus.cards if c.kind == CardKind.GLOSSARY}
    assert sorted(cards) == ["术语「DCP」指什么？", "术语「KV cache」指什么？"]
    dcp = cards["术语「DCP」指什么？"]
    assert dcp.answer == "解码上下文并行（Decode Context Parallelism）"
    assert dcp.sentence == "解码阶段把 KV cache 按 token 切到多卡。"
    assert set(dcp.tags) == {"topic::parallel", "topic::memory"}  # the second PR is in both topics
    assert set(cards["术语「KV cache」指什么？"].tags) == {"topic::parallel", "topic::memory"}
    assert "kind::glossary" in card_tags(dcp) and not any(t.startswith("verdict::") for t in card_tags(dcp))


def test_glossary_card_identity_is_per_repository_and_term(corpus_dir: Path) -> None:
    """Rewording a meaning, or more PRs using the term, keeps the GUID; another repository gets its own card."""
    before = {c.key: card_guid(c) for c in build_corpus([corpus_dir]).cards if c.kind == CardKind.GLOSSARY}
    (corpus_dir / "glossary.toml").write_text(GLOSSARY.replace("按 token 切到多卡", "按 token 切分"), encoding="utf-8")
    write_seed(corpus_dir, "b.txt", "o/r\n\n为 DCP 增加调试日志\n\n值得快速浏览。通过结构化日志实现 DCP 排障。\n")
    after = build_corpus([corpus_dir]).cards
    glossary = [c for c in after if c.kind == CardKind.GLOSSARY]
    assert {c.key: card_guid(c) for c in glossary if c.entry.repo == "o/r"} == before
    write_seed(corpus_dir, "c.txt", "other/repo\n\n为 DCP 增加指标\n\n值得快速浏览。通过计数器实现 DCP 监控。\n")
    repos = {c.entry.repo for c in build_corpus([corpus_dir]).cards if c.key == "glossary:term:dcp"}
    assert repos == {"o/r", "other/repo"}
    dcp = next(c for c in glossary if c.key == "glossary:term:dcp")
    assert card_guid(dcp) != card_guid(replace(dcp, entry=replace(dcp.entry, repo="other/repo")))


def test_warning_lists_acronyms_without_an_entry(corpus_dir: Path, runner: CliRunner) -> None:
    """FOO (2 PRs) and BAR (1 PR) have no entry; DCP has one and PR is ignored."""
    result = runner.invoke(cli, ["build", str(corpus_dir), "-o", str(corpus_dir / "deck.apkg")])
    assert result.exit_code == 0, result.output
    assert (f"Warning: 2 acronym(s) in the seeds have no entry in {corpus_dir / 'glossary.toml'}: "
            "FOO (2 PRs), BAR (1 PR) (add a [[term]] for each, or list it in ignore = [...])\n") in result.stderr


def test_warning_on_the_seeds_lists_exactly_the_removed_entries(tmp_path: Path) -> None:
    """Drop DCP and MLA from the shipped glossary: the build names them (and nothing the glossary knows)."""
    text = (SEEDS / "glossary.toml").read_text(encoding="utf-8")
    kept = [block for block in text.split("\n[[term]]\n") if not re.match(r'term = "(DCP|MLA)"\n', block)]
    reduced = tmp_path / "glossary.toml"
    reduced.write_text("\n[[term]]\n".join(kept), encoding="utf-8")
    full = {w for w in build_corpus([SEEDS]).warnings if "acronym" in w}
    warning = next(w for w in build_corpus([SEEDS], options=BuildOptions(glossary=reduced)).warnings if "acronym" in w)
    listed = re.findall(r"([A-Za-z0-9]+) \(\d+ PRs?\)", warning)
    before = re.findall(r"([A-Za-z0-9]+) \(\d+ PRs?\)", "".join(full))
    assert sorted(set(listed) - set(before)) == ["DCP", "MLA"]
    assert "PR" not in listed and "CuPy" not in listed


def test_every_used_glossary_term_has_a_card_in_the_imported_deck(anki: AnkiCollection, seeds_deck: Path) -> None:
    """Acceptance: a glossary card for every shipped term a seed PR uses (plain case-insensitive search as oracle)."""
    glossary = load_glossary(SEEDS / "glossary.toml")
    text = "\n".join(f"{e.title}\n{e.review}" for e in parse_corpus([SEEDS])).lower()
    used = {t.term for t in glossary.terms if any(s.lower() in text for s in (t.term, *t.aliases))}
    anki.import_apkg(seeds_deck)
    questions = {anki.col.get_note(nid)["Question"] for nid in anki.col.find_notes("tag:kind::glossary")}
    carded = {re.search(r"「(.+)」", q).group(1) for q in questions}  # type: ignore[union-attr]
    assert carded == used
    assert len(used) >= 30


def test_glossary_card_renders_term_meaning_and_source(anki: AnkiCollection, tmp_path: Path, corpus_dir: Path) -> None:
    out = build_deck([corpus_dir], tmp_path / "deck.apkg", options=BuildOptions(timestamp=1_700_000_000)).output
    anki.import_apkg(out)
    nid = anki.col.find_notes('"Question:术语「DCP」指什么？"')[0]
    card = anki.col.get_card(anki.col.card_ids_of_note(nid)[0])
    answer = re.sub(r"<[^>]+>", "", re.sub(r"<style>.*?</style>", "", card.answer(), flags=re.S))
    assert "解码上下文并行（Decode Context Parallelism）" in answer
    assert "解码阶段把 KV cache 按 token 切到多卡。" in answer
    assert "术语表" in answer and "glossary.toml:4" in answer


def _unknown_by_blanking(text: str, glossary: Glossary) -> list[str]:
    """unknown_in without its shortcut: blank every spelling, then look (the reference)."""
    text = unicodedata.normalize("NFKC", text)
    for term in glossary.terms:
        text = term.spellings.blank(text)
    return [a for a in dict.fromkeys(find_acronyms(text)) if not glossary.knows(a)]


_PIECES = st.sampled_from(["DCP", "KV cache", "KV-cache", "kvcache", "UVA", "UVAX", "XDCP", "DCPs", "KV 缓存",
                           "解码上下文并行", "OPUS", "MRV2", "`DCP`", "`", "_", "-", " ", "。", "é", "缓存", "AB",
                           "PR", "PRs", "x", "1", "Ｄ", "ＣＰ", "\n", "Ab", "ABc", "aBC", "ABCs", "uva"])


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_unknown_acronyms_shortcut_agrees_with_blanking_first(text: str) -> None:
    glossary = _glossary()
    assert glossary.blanking_only_removes
    assert unknown_in(text, glossary) == _unknown_by_blanking(text, glossary)


def _acronyms_word_by_word(text: str) -> list[str]:
    """find_acronyms as first written (the reference): every word's capitals and lower-case letters counted."""
    found = []
    for match in re.finditer(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9]{1,11}(?![A-Za-z0-9_])", re.sub(r"`[^`\n]+`", " ", text)):
        word = match.group(0)
        if word.endswith("s") and len(word) >= 3 and word[:-1].isupper():
            word = word[:-1]
        if sum(c.isupper() for c in word) >= 2 and sum(c.islower() for c in word) <= 1:
            found.append(word)
    return found


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(_PIECES, max_size=12).map("".join), st.lists(_PIECES, max_size=12).map("".join))
def test_terms_and_acronyms_agree_with_the_rules(title: str, review: str) -> None:
    glossary = _glossary()
    entry = Entry("o/r", title.replace("\n", " "), review, Path("s.txt"), 3, 5)
    text = fold(entry_text(entry))
    assert terms_used(entry, glossary) == tuple(t for t in glossary.terms if t.spellings.hits(text))
    assert find_acronyms(review) == _acronyms_word_by_word(review)


def test_a_backtick_in_a_spelling_turns_the_shortcut_off(tmp_path: Path) -> None:
    path = tmp_path / "glossary.toml"
    path.write_text('[[term]]\nterm = "X`Y"\nen = "x"\nzh = "叉"\n', encoding="utf-8")
    assert not load_glossary(path).blanking_only_removes


def _glossary() -> Glossary:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "glossary.toml"
        path.write_text(GLOSSARY, encoding="utf-8")
        return load_glossary(path)


def glossary_cards_of(folder: Path) -> dict[str, str]:
    """The glossary cards a build of *folder* makes: term → answer."""
    return {re.search(r"「(.+)」", c.prompt).group(1): c.answer  # type: ignore[union-attr]
            for c in build_corpus([folder]).cards if c.kind == CardKind.GLOSSARY}


TWO_TERMS = "o/r\n\n为 MoE 引入 FP8 GEMM\n\n值得精读。采用分组 GEMM 而非逐专家循环，以避免 kernel 启动开销。\n"


def test_without_a_glossary_file_the_builtin_one_is_used(tmp_path: Path) -> None:
    """Built-in terms the seeds use get cards (sourced in the built-in file); unknown acronyms point to a new file."""
    write_seed(tmp_path, "a.txt", TWO_TERMS + "\n引入 ZQXW 协议\n\n值得精读。采用 ZQXW 而非 HTTP，以避免握手。\n")
    corpus = build_corpus([tmp_path])
    cards = [c for c in corpus.cards if c.kind == CardKind.GLOSSARY]
    assert {c.prompt for c in cards} >= {"术语「MoE」指什么？", "术语「FP8」指什么？", "术语「GEMM」指什么？"}
    assert all(c.entry.path == builtin_path("glossary.toml") for c in cards)
    assert [w for w in corpus.warnings if "acronym" in w] == [
        "1 acronym(s) in the seeds have no entry in the built-in glossary: ZQXW (1 PR) (add a [[term]] for each to a "
        "glossary.toml beside the seeds, or list it in ignore = [...] there)"]


def test_a_glossary_file_extends_and_overrides_the_builtin_one(tmp_path: Path) -> None:
    """Its own term replaces the built-in one of the same key, its ignore list drops a built-in term, the rest stay."""
    write_seed(tmp_path, "a.txt", TWO_TERMS)
    builtin = glossary_cards_of(tmp_path)
    (tmp_path / "glossary.toml").write_text('ignore = ["GEMM"]\n\n[[term]]\nterm = "moe"\nen = "Mixture of Experts"\n'
                                            'zh = "本仓库的专家混合层"\n', encoding="utf-8")
    layered = glossary_cards_of(tmp_path)
    assert layered["moe"] == "本仓库的专家混合层（Mixture of Experts）" and "MoE" not in layered
    assert "GEMM" not in layered and layered["FP8"] == builtin["FP8"]
    assert set(layered) == set(builtin) - {"MoE", "GEMM"} | {"moe"}


def test_use_builtin_false_leaves_the_builtin_glossary_out(tmp_path: Path) -> None:
    write_seed(tmp_path, "a.txt", TWO_TERMS)
    (tmp_path / "glossary.toml").write_text('use_builtin = false\n\n[[term]]\nterm = "FP8"\nen = "8-bit floating point"\n'
                                            'zh = "8 位浮点"\n', encoding="utf-8")
    assert glossary_cards_of(tmp_path) == {"FP8": "8 位浮点（8-bit floating point）"}
