"""The topic taxonomy: reading topics.toml (errors name file and line), matching, and the shipped taxonomy."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deckgen import BuildOptions
from click.testing import CliRunner

from deckgen.cli import cli
from deckgen.curriculum.topics import Taxonomy, Topic, explain_topics, load_taxonomy, match_topics
from deckgen.errors import DataFileError
from deckgen.pipeline import build_corpus, list_topics
from deckgen.text.matching import Keywords, fold, identifier_matches
from deckgen.types import CardKind, Entry, Review, Verdict
from tests.conftest import SEEDS

TAXONOMY = """\
# two topics, on their own
use_builtin = false

[[topic]]
id = "cuda-graph"
zh = "CUDA 图"
en = "CUDA Graphs"
keywords = ["CUDA Graph", "CUDA 图"]
identifiers = ["*cudagraph*"]

[[topic]]
id = "deps"
zh = "依赖管理"
en = "Dependencies"
keywords = ["依赖", "pin"]
exclude = ["依赖注入"]
min_hits = 2
"""


def review(title: str, text: str = "值得精读。", identifiers: tuple[str, ...] = ()) -> Review:
    entry = Entry("o/r", title, text, Path("s.txt"), 3, 5)
    return Review(entry, Verdict.DEEP, "精读", (), identifiers)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "topics.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_loads_topics_in_file_order(tmp_path: Path) -> None:
    taxonomy = load_taxonomy(write(tmp_path, TAXONOMY))
    assert taxonomy.ids == ("cuda-graph", "deps")
    first = taxonomy.topics[0]
    assert (first.zh, first.en, first.tag, first.line) == ("CUDA 图", "CUDA Graphs", "topic::cuda-graph", 4)
    assert taxonomy.topics[1].min_hits == 2 and taxonomy.topics[1].line == 11
    assert (taxonomy.catch_all, taxonomy.use_builtin) == (None, False)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('[[topic]]\nid = "a"\nzh = \n', 3, "invalid TOML: Invalid value (column 6)"),
        ('[[topic]]\nid = "a"\n[[topic]\n', 3, "invalid TOML"),
        ('[[topic]]\nid = "a', 2, "invalid TOML: Unterminated string"),
    ],
    ids=["missing-value", "bad-header", "unterminated-string"],
)
def test_syntax_error_names_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(DataFileError) as caught:
        load_taxonomy(path)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}: {message}")


OK = 'zh = "名"\nen = "Name"\nkeywords = ["k"]\n'


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (f'[[topic]]\nid = "a"\n{OK}\n[[topic]]\n{OK}', 7, "[[topic]] has no 'id'"),
        (f'[[topic]]\nid = "CUDA Graph"\n{OK}', 1, "topic id 'CUDA Graph' is not an ASCII slug"),
        (f'[[topic]]\nid = "a"\n{OK}\n[[topic]]\nid = "a"\n{OK}', 7, "duplicate topic id 'a' (first defined on line 1)"),
        (f'[[topic]]\nid = "a"\nkeyword = ["x"]\n{OK}', 1, "unknown key 'keyword' in [[topic]]"),
        (f'[[topic]]\nid = "a"\nmin_hits = 0\n{OK}', 1, "topic 'a': min_hits must be a whole number ≥ 1"),
        ('[[topic]]\nid = "a"\nzh = "名"\nen = "N"\n', 1, "topic 'a' has no match rules"),
        (f'[[topic]]\nid = "a"\n{OK}identifiers = [1]\n', 1, "'identifiers' must be a list of non-empty strings"),
        (f'topics = 1\n[[topic]]\nid = "a"\n{OK}', 1, "unknown key 'topics' in the file"),
        ("# nothing\n", None, "no [[topic]] tables"),
        (f'use_builtin = "no"\n[[topic]]\nid = "a"\n{OK}', 1, "'use_builtin' must be true or false"),
        (f'[[topic]]\nid = "a"\n{OK}\n[catch_all]\nid = "a"\nzh = "其他"\nen = "Other"\n', 7,
         "the catch-all topic's id 'a' is a [[topic]]'s id too (line 1)"),
        (f'[[topic]]\nid = "a"\n{OK}\n[catch_all]\nid = "rest"\nzh = "其他"\n', 7, "catch-all topic 'rest' has no 'en'"),
        (f'[[topic]]\nid = "a"\n{OK}\n[catch_all]\nid = "rest"\nzh = "其他"\nen = "O"\nkeywords = ["x"]\n', 7,
         "unknown key 'keywords' in [catch_all]"),
    ],
    ids=["no-id", "bad-slug", "duplicate", "typo-key", "min-hits", "no-rules", "bad-list", "top-level", "empty",
         "use-builtin-type", "catch-all-clash", "catch-all-no-en", "catch-all-rules"],
)
def test_bad_taxonomy_names_the_topic_line(tmp_path: Path, text: str, line: int | None, problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(DataFileError) as caught:
        load_taxonomy(path)
    assert (caught.value.line, caught.value.problem) == (line, problem)
    assert str(caught.value).startswith(f"{path}:{line}: " if line else f"{path}: ")


def topic(**rules: object) -> Topic:
    fields = {"keywords": Keywords(tuple(rules.pop("keywords", ())))}
    for name in ("summary_keywords", "exclude"):
        if name in rules:
            fields[name] = Keywords(tuple(rules.pop(name)))  # type: ignore[arg-type]
    return Topic(id="t", zh="主题", en="Topic", **fields, **rules)  # type: ignore[arg-type]


def matches(t: Topic, r: Review) -> bool:
    return match_topics(r, Taxonomy(Path("topics.toml"), (t,))) == ("t",)


@pytest.mark.parametrize(
    ("rules", "pr", "expected"),
    [
        ({"keywords": ["CUDA Graph"]}, review("为编码器启用 cuda graph"), True),
        ({"keywords": ["CUDA Graph"]}, review("为编码器启用 ＣＵＤＡ　Ｇｒａｐｈ"), True),
        ({"keywords": ["KV cache"]}, review("优化 KV-cache 布局"), True),
        ({"keywords": ["DP"]}, review("修复 DP 多引擎启动"), True),
        ({"keywords": ["DP"]}, review("为 DPO 训练添加支持"), False),
        ({"keywords": ["DP"]}, review("修复 `data_dp_size` 的计算"), False),
        ({"keywords": ["投机解码"]}, review("修复投机解码路径下的崩溃"), True),
        ({"keywords": ["依赖"], "min_hits": 2}, review("标题", "放宽依赖约束。值得精读。"), False),
        ({"keywords": ["依赖"], "min_hits": 2}, review("标题", "放宽依赖约束，可选依赖不再膨胀。"), True),
        ({"keywords": ["依赖"], "min_hits": 2}, review("放宽依赖约束"), True),
        ({"summary_keywords": ["编码器"]}, review("标题", "编码器"), False),
        ({"summary_keywords": ["编码器"]}, review("启用编码器 CUDA Graph"), True),
        ({"identifiers": ("*cudagraph*",)}, review("标题", identifiers=("CudaGraphRunner",)), True),
        ({"identifiers": ("tests/*",)}, review("标题", identifiers=("vllm/tests.py",)), False),
        ({"keywords": ["依赖"], "exclude": ["依赖注入"]}, review("引入依赖注入容器"), False),
    ],
    ids=["summary-case", "full-width", "space-as-hyphen", "ascii-word", "ascii-inside-word",
         "ascii-inside-identifier", "chinese-substring", "review-below-min", "review-min-hits",
         "summary-beats-min-hits", "summary-only-not-in-review", "summary-only", "identifier-glob",
         "identifier-glob-miss", "exclusion-vetoes"],
)
def test_match_rules(rules: dict[str, object], pr: Review, expected: bool) -> None:
    assert matches(topic(**rules), pr) is expected


def test_topics_come_in_taxonomy_order(tmp_path: Path) -> None:
    taxonomy = load_taxonomy(write(tmp_path, TAXONOMY))
    pr = review("放宽依赖 pin，避免 CUDA 图捕获失败")
    assert match_topics(pr, taxonomy) == ("cuda-graph", "deps")


def test_fold_is_nfkc_and_case_folded() -> None:
    assert fold("ＤＣＰ Kernel") == "dcp kernel"


def test_every_seed_pr_has_a_topic_and_ten_topics_have_cards() -> None:
    """Acceptance: the shipped taxonomy covers every PR in seeds/, and ≥ 10 of its topics have cards."""
    report = list_topics([SEEDS])
    assert report.unmatched == ()
    assert report.entries == 16
    with_cards = [t for t in report.topics if t.cards > 0 and t.prs]
    assert len(with_cards) >= 10, [t.topic.id for t in with_cards]


def test_every_card_carries_its_prs_topic_tags() -> None:
    """A PR's cards all carry topic::<id> for each of its topics, and only those."""
    corpus = build_corpus([SEEDS])
    for card in corpus.cards:
        if card.entry.pr_key in corpus.curriculum.pr_topics:
            expected = {f"topic::{t}" for t in corpus.curriculum.pr_topics[card.entry.pr_key]}
            assert {t for t in card.tags if t.startswith("topic::")} == expected
    assert all(corpus.curriculum.pr_topics.values())


def test_unmatched_pr_is_reported(tmp_path: Path) -> None:
    """A PR no topic matches is listed by `topics` and warned about by the build."""
    (tmp_path / "a.txt").write_text("o/r\n\n调整日志格式\n\n值得快速浏览。改了日志格式。\n\n"
                                    "启用 CUDA 图\n\n值得精读。采用静态缓冲区而非动态分配，以避免重放时地址变化。\n",
                                    encoding="utf-8")
    write(tmp_path, TAXONOMY)
    report = list_topics([tmp_path])
    assert [e.title for e in report.unmatched] == ["调整日志格式"]
    assert "PRs without a topic (1):" in report.table() and "调整日志格式" in report.table()
    warnings = build_corpus([tmp_path]).warnings
    assert f"{tmp_path / 'a.txt'}:3: this PR matches no topic in {tmp_path / 'topics.toml'}; add a keyword for it there" in warnings


NOTHING_MATCHES = "o/r\n\n重命名内部变量，统一成蛇形命名风格\n\n值得快速浏览。只改了变量名。\n"


def test_without_a_taxonomy_file_the_builtin_one_is_used(tmp_path: Path) -> None:
    """No topics.toml beside the seeds: the built-in taxonomy tags the cards; a PR it cannot place gets topic::other."""
    (tmp_path / "a.txt").write_text(NOTHING_MATCHES + "\n启用 CUDA 图\n\n值得精读。采用静态缓冲区而非动态分配。\n",
                                    encoding="utf-8")
    corpus = build_corpus([tmp_path])
    topics = {c.entry.title: {t for t in c.tags if t.startswith("topic::")} for c in corpus.cards
              if c.kind != CardKind.GLOSSARY}
    assert topics == {"启用 CUDA 图": {"topic::compilation"}, "重命名内部变量，统一成蛇形命名风格": {"topic::other"}}
    assert [w for w in corpus.warnings if "topic" in w] == [
        f"{tmp_path / 'a.txt'}:3: this PR matches no topic in the built-in taxonomy, so its cards are tagged "
        "topic::other; add a keyword for it to a topics.toml beside the seeds"]
    report = list_topics([tmp_path])
    assert report.taxonomy == "the built-in taxonomy" and report.topics[-1].topic.id == "other"
    assert "1 of 2 PRs match a topic" in report.table() and "PRs without a topic (1, tagged topic::other):" in report.table()


EXTENDS = """\
[[topic]]
id = "deps"
zh = "依赖管理"
en = "Dependencies"
keywords = ["依赖表"]

[[topic]]
id = "compilation"
zh = "图捕获"
en = "Graph capture"
keywords = ["图捕获"]
"""


def test_a_taxonomy_file_extends_the_builtin_one(tmp_path: Path) -> None:
    """Its topics come first; one with a built-in id replaces that topic, rules and all; the catch-all stays last."""
    (tmp_path / "a.txt").write_text("o/r\n\n更新依赖表\n\n值得快速浏览。只改了版本。\n\n"
                                    "启用 torch.compile\n\n值得精读。采用整图编译而非分段编译。\n", encoding="utf-8")
    write(tmp_path, EXTENDS)
    corpus = build_corpus([tmp_path])
    taxonomy = corpus.curriculum.taxonomy
    assert taxonomy is not None and taxonomy.ids[:2] == ("deps", "compilation") and taxonomy.ids[-1] == "other"
    assert taxonomy.get("compilation").zh == "图捕获" and taxonomy.ids.count("compilation") == 1  # type: ignore[union-attr]
    assert "attention" in taxonomy.ids and taxonomy.label == f"{tmp_path / 'topics.toml'} (over the built-in taxonomy)"
    assert dict(corpus.curriculum.pr_topics.items()) == {r.entry.pr_key: t for r, t in zip(
        corpus.reviews, [("deps",), ("other",)])}  # torch.compile was the built-in compilation topic's word


def test_use_builtin_false_leaves_the_builtin_taxonomy_out(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(NOTHING_MATCHES, encoding="utf-8")
    write(tmp_path, TAXONOMY)
    report = list_topics([tmp_path])
    assert [t.topic.id for t in report.topics] == ["cuda-graph", "deps"] and report.taxonomy == str(tmp_path / "topics.toml")


def test_a_catch_all_of_ones_own_replaces_the_builtin_one(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(NOTHING_MATCHES, encoding="utf-8")
    write(tmp_path, EXTENDS + '\n[catch_all]\nid = "misc"\nzh = "杂项"\nen = "Miscellany"\n')
    corpus = build_corpus([tmp_path])
    assert corpus.curriculum.taxonomy.ids[-1] == "misc" and "other" not in corpus.curriculum.taxonomy.ids  # type: ignore[union-attr]
    assert {t for c in corpus.cards for t in c.tags if t.startswith("topic::")} == {"topic::misc"}


def test_a_topic_with_the_builtin_catch_alls_id_is_an_error(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "a.txt").write_text(NOTHING_MATCHES, encoding="utf-8")
    path = write(tmp_path, EXTENDS + '\n[[topic]]\nid = "other"\nzh = "别的"\nen = "Else"\nkeywords = ["x"]\n')
    result = runner.invoke(cli, ["topics", str(tmp_path)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr == (f"Error: {path}:13: topic id 'other' is the built-in catch-all topic's (PRs that match no topic "
                             "get it) (give the topic another id, or name the catch-all yourself with a [catch_all] table)\n")


def test_explain_shows_the_words_that_matched(tmp_path: Path, runner: CliRunner) -> None:
    """`deckgen topics --explain`: per PR, each topic with its summary words, review words ×hits and identifiers."""
    (tmp_path / "a.txt").write_text(NOTHING_MATCHES + "\n放宽依赖 pin\n\n值得精读。依赖约束只排除坏版本，见 `CudaGraphRunner`。\n",
                                    encoding="utf-8")
    write(tmp_path, TAXONOMY.replace("use_builtin = false", "") + '[catch_all]\nid = "rest"\nzh = "其他"\nen = "Rest"\n')
    result = runner.invoke(cli, ["topics", str(tmp_path), "--explain"])
    assert result.exit_code == 0, result.output
    explained = result.stdout.split("\n\n", 1)[1]
    assert explained == (f"{tmp_path / 'a.txt'}:3  重命名内部变量，统一成蛇形命名风格\n"
                         "  rest         no topic's words (the catch-all)\n"
                         f"{tmp_path / 'a.txt'}:7  放宽依赖 pin\n"
                         "  cuda-graph   identifiers: `CudaGraphRunner`\n"
                         "  deps         summary: 依赖, pin; review: 依赖 ×1\n"
                         "  compilation  identifiers: `CudaGraphRunner`\n")  # the built-in topic, after the file's


def test_explicit_taxonomy_that_is_missing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="no such file"):
        build_corpus([SEEDS], options=BuildOptions(taxonomy=tmp_path / "nope.toml"))


def _matches_by_rule(t: Topic, r: Review) -> bool:
    """The match rule topic by topic, each keyword set searched on its own (the reference)."""
    summary, text = fold(r.entry.title), fold(r.entry.review)
    if t.exclude.hits(f"{summary}\n{text}"):
        return False
    if t.keywords.hits(summary) or t.summary_keywords.hits(summary):
        return True
    if identifier_matches(t.identifiers, r.identifiers):
        return True
    return t.keywords.hits(text) >= t.min_hits


_KEYWORDS = st.lists(st.sampled_from(["依赖", "依赖注入", "pin", "CUDA Graph", "cuda", "graph", "图", "DP", "dp", "ı"]),
                     max_size=3, unique=True).map(lambda words: Keywords(tuple(words)))
_TOPICS = st.builds(lambda k, s, x, i, n: Topic("t", "主题", "Topic", k, s, i, x, n), _KEYWORDS, _KEYWORDS, _KEYWORDS,
                    st.lists(st.sampled_from(["*cudagraph*", "dp_*", "tests/*"]), max_size=2).map(tuple),
                    st.integers(1, 3))
_TEXT = st.lists(st.sampled_from(["依赖", "注入", "pin", "PIN", "cuda", " ", "-", "graph", "图", "dp", "DPO", "。", "ı",
                                  "\n"]), max_size=12).map("".join)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(_TOPICS, min_size=1, max_size=4), _TEXT.map(lambda t: t.replace("\n", " ")), _TEXT,
       st.lists(st.sampled_from(["CudaGraphRunner", "dp_size", "tests/x.py", "foo"]), max_size=2).map(tuple))
def test_match_topics_agrees_with_the_rule_topic_by_topic(topics: list[Topic], title: str, text: str,
                                                          identifiers: tuple[str, ...]) -> None:
    topics = [replace(t, id=f"t{i}") for i, t in enumerate(topics)]
    pr = review(title, text, identifiers)
    expected = tuple(t.id for t in topics if _matches_by_rule(t, pr))
    taxonomy = Taxonomy(Path("topics.toml"), tuple(topics))
    assert match_topics(pr, taxonomy) == expected
    # The evidence explains exactly those topics, and each piece of it is enough by the rule.
    found = explain_topics(pr, taxonomy)
    assert tuple(m.topic for m in found) == expected
    for m in found:
        topic = taxonomy.get(m.topic)
        assert m.summary or m.identifiers or sum(n for _, n in m.review) >= topic.min_hits  # type: ignore[union-attr]
        assert all(w in (*topic.keywords.words, *topic.summary_keywords.words) for w in m.summary)  # type: ignore[union-attr]


def test_a_pr_that_matches_nothing_gets_the_catch_all() -> None:
    catch_all = Topic("rest", "其他", "Rest", Keywords(()))
    taxonomy = Taxonomy(Path("topics.toml"), (topic(keywords=["CUDA Graph"]), catch_all), "rest")
    assert match_topics(review("调整日志格式"), taxonomy) == ("rest",)
    assert match_topics(review("启用 CUDA Graph"), taxonomy) == ("t",)
    assert taxonomy.is_unmatched(("rest",)) and not taxonomy.is_unmatched(("t",))
