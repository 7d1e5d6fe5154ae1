"""deckgen preview in the terminal: cards grouped by PR, front/back, kind and tags; filters; colour only on a terminal."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from deckgen.cli import cli
from deckgen.curriculum.glossary import GLOSSARY_TITLE
from deckgen.report.preview import CardFilter, Preview, deck_cards, format_preview
from deckgen.text.markup import deletion
from deckgen.types import Card, CardKind, Entry, Relation, Verdict
from tests.conftest import SEEDS

ENTRY = Entry("acme/db", "为写前日志引入批量刷盘。", "评论", Path("seeds/a.txt"), 3, 5)
QA = Card(ENTRY, CardKind.WHY, "why:x", "多个事务共享一次 `fsync`，目的是什么？", "降低提交延迟", "db · 为写前日志引入批量刷盘",
          "多个事务共享一次 `fsync` 以降低提交延迟", 5, Verdict.DEEP, Relation.PURPOSE, tags=("topic::storage",))
CLOZE = Card(ENTRY, CardKind.CLOZE, "cloze:x", f"通过 {deletion(1, '`flush_batch_size`')} 控制{deletion(2, '每批大小')}",
             "`flush_batch_size`；每批大小", "db · 为写前日志引入批量刷盘", "通过 `flush_batch_size` 控制每批大小", 5,
             Verdict.DEEP, Relation.TERM)


def test_exact_text_for_a_qa_and_a_two_deletion_cloze() -> None:
    """A cloze note with c1 and c2 is two cards; each shows its own gap; code loses its backticks."""
    cards = tuple(deck_cards([QA, CLOZE]))
    assert format_preview(Preview(cards, total=3, prs=1)) == """\
━━ 为写前日志引入批量刷盘。
   acme/db · seeds/a.txt:3 · 精读 · 3 card(s)
  [why] kind::why rel::purpose repo::acme::db topic::storage verdict::deep
    Q 【db · 为写前日志引入批量刷盘】多个事务共享一次 fsync，目的是什么？
    A 降低提交延迟
  [cloze c1] kind::cloze rel::term repo::acme::db verdict::deep
    Q 【db · 为写前日志引入批量刷盘】通过 […] 控制每批大小
    A flush_batch_size
  [cloze c2] kind::cloze rel::term repo::acme::db verdict::deep
    Q 【db · 为写前日志引入批量刷盘】通过 flush_batch_size 控制[…]
    A 每批大小
"""


def test_filters_by_topic_kind_text_and_limit() -> None:
    cards = list(deck_cards([QA, CLOZE]))
    assert [c.label for c in cards if CardFilter(topics=("storage",)).accepts(c)] == ["why"]
    assert [c.label for c in cards if CardFilter(topics=("other",)).accepts(c)] == []
    assert [c.label for c in cards if CardFilter(kinds=("cloze",)).accepts(c)] == ["cloze c1", "cloze c2"]
    assert [c.label for c in cards if CardFilter(grep="FLUSH_BATCH").accepts(c)] == ["cloze c1", "cloze c2"]
    assert [c.label for c in cards if CardFilter(grep="提交延迟").accepts(c)] == ["why"]


def test_piped_output_is_plain_and_terminal_output_coloured(runner: CliRunner) -> None:
    plain = runner.invoke(cli, ["preview", str(SEEDS), "--limit", "3"])
    coloured = runner.invoke(cli, ["preview", str(SEEDS), "--limit", "3"], color=True)
    assert plain.exit_code == coloured.exit_code == 0
    assert "\x1b[" not in plain.output and "\x1b[" in coloured.stdout
    assert plain.stdout.startswith("━━ ") and plain.stdout.count("\n    Q ") == 3


def test_cli_kind_grep_and_limit(runner: CliRunner) -> None:
    """Every card shown matches the filters; the count line on stderr says how many of the deck's cards."""
    result = runner.invoke(cli, ["preview", str(SEEDS), "--kind", "why", "--kind", "how"])
    labels = [line.split("]")[0].strip(" [") for line in result.stdout.splitlines() if line.startswith("  [")]
    assert labels and set(labels) == {"why", "how"}
    assert result.stderr.startswith(f"{len(labels)} of ")
    grep = runner.invoke(cli, ["preview", str(SEEDS), "--grep", "LRU_cache"])
    blocks = grep.stdout.split("\n  [")[1:]
    assert blocks and all("lru_cache" in block.lower() for block in blocks)
    limited = runner.invoke(cli, ["preview", str(SEEDS), "--limit", "2"])
    assert limited.stdout.count("\n  [") == 2 and limited.stderr.startswith("2 of ")


def test_cli_unknown_topic_shows_nothing(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["preview", str(SEEDS), "--topic", "no-such-topic"])
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr.startswith("0 of ")


def test_cli_bad_kind_is_a_usage_error(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["preview", "--kind", "essay"]).exit_code == 2


def test_html_writes_one_page_and_says_so(runner: CliRunner, tmp_path: Path) -> None:
    """The page is self-contained (no tag that loads anything), one article per card shown, the summary on stdout."""
    out = tmp_path / "p" / "preview.html"
    result = runner.invoke(cli, ["preview", str(SEEDS), "--kind", "cloze", "--html", str(out)])
    assert result.exit_code == 0
    said = re.fullmatch(r"Wrote (\d+) of (\d+) cards, from (\d+) of 16 PRs → (.+)\n", result.stdout)
    assert said and said.group(4) == str(out)
    page = out.read_text("utf-8")
    assert page.count('<article class="dg-card"') == page.count('data-kind="cloze"') == int(said.group(1)) > 0
    assert int(said.group(1)) < int(said.group(2))
    assert not re.search(r"<(?:link|img|iframe|object|embed|audio|video|source)\b|<script[^>]*\bsrc=", page)
    styles = "".join(re.findall(r"<style>(.*?)</style>", page, re.S))
    assert "url(" not in styles and "@import" not in styles


def test_summary_counts_prs_not_glossary_groups(runner: CliRunner) -> None:
    """Glossary cards (on a per-repository pseudo-PR) never make more PRs shown than the deck has."""
    result = runner.invoke(cli, ["preview", str(SEEDS)])
    said = re.fullmatch(r"(\d+) of (\d+) cards, from (\d+) of (\d+) PRs\n", result.stderr)
    assert said and said.group(1) == said.group(2) and said.group(4) == "16"  # the seeds' PRs, not glossary groups
    shown = {line for line in result.stdout.splitlines() if line.startswith("━━ ") and GLOSSARY_TITLE not in line}
    assert int(said.group(3)) == len(shown) <= 16
    assert "kind::glossary" in result.stdout
