"""deckgen lint: every problem of a seed corpus as `file:line: level: message`, and build refusing the same errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from deckgen.cli import cli
from deckgen.report.lint import lint_corpus
from tests.conftest import write_seed

HINT = "a seed file is: the repository on line 1, then entries of one summary line, a blank line and the review paragraph, separated by blank lines"


def expected_lines(folder: Path) -> list[str]:
    """What the fixture corpus tests/fixtures/lint holds, one line per problem planted in it."""
    a, b, c, d, e = (folder / n for n in ("a_content.txt", "b_structure.txt", "c_empty.txt", "d_gbk.txt", "e_no_repo.txt"))
    no_verdict = ("no reading verdict (精读 / 快速浏览 / 不值得精读) found in the review "
                  "(say whether the PR is worth reading: 值得精读, 快速浏览 or 不值得精读)")
    no_decision = ("no design decision found in the review (name decisions as 1) 2) … or **名称**: 说明, "
                   "or with connectives such as 采用 X 而非 Y, X，以避免 Y)")
    return [
        f"{a}:3: warning: duplicate PR: {b}:3 has the same repository and summary; the later file's entry is used and this one is ignored (remove one of the two entries)",
        f"{a}:9: warning: {no_verdict}",
        f"{a}:9: warning: unknown acronym ISO (add a [[term]] for it to {folder / 'glossary.toml'}, or list it in ignore = [...])",
        f"{a}:13: warning: {no_decision}",
        f"{b}:7: error: review paragraph without a PR summary line before it (add the one-line summary, then a blank line, above the review)",
        f"{b}:9: error: PR summary without a review paragraph (add a blank line and the review paragraph after it, or remove the summary)",
        f"{c}: error: empty file ({HINT})",
        f"{d}:3: error: not valid UTF-8 at byte offset 20 (re-save the file as UTF-8: iconv -f GBK -t UTF-8 for Chinese text, -f LATIN1 for Western)",
        f"{e}:1: error: first line must name the GitHub repository as owner/name, found '为缓存引入分段 LRU，降低锁冲突。' ({HINT})",
        f"{e}:1: warning: unknown acronym LRU (add a [[term]] for it to {folder / 'glossary.toml'}, or list it in ignore = [...])",
    ]


def test_lint_fixture_gives_exactly_the_expected_lines(runner: CliRunner, fixtures: Path) -> None:
    """Every planted problem, in file and line order, and exit 1 because some are errors."""
    folder = fixtures / "lint"
    result = runner.invoke(cli, ["lint", str(folder)])
    assert result.stdout.splitlines() == expected_lines(folder)
    assert result.stderr == "5 error(s), 5 warning(s) in 5 seed file(s)\n"
    assert result.exit_code == 1


def test_lint_clean_corpus_exits_0(runner: CliRunner, fixtures: Path) -> None:
    result = runner.invoke(cli, ["lint", str(fixtures / "good.txt")])
    assert (result.exit_code, result.stdout) == (0, "")


def test_warnings_alone_exit_0(runner: CliRunner, tmp_path: Path) -> None:
    seed = write_seed(tmp_path, "w.txt", "o/r\n\n调整日志格式。\n\n只是换了时间戳格式。\n")
    result = runner.invoke(cli, ["lint", str(seed)])
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{seed}:5: warning: no reading verdict")


def test_missing_path_is_an_error_message(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["lint", str(tmp_path / "nope")])
    assert (result.exit_code, result.stderr) == (1, f"Error: {tmp_path / 'nope'}: no such file or folder (check the path)\n")


def test_build_refuses_every_lint_error_with_the_same_message(runner: CliRunner, fixtures: Path, tmp_path: Path) -> None:
    """For each file with errors, build stops with lint's first error for it, word for word, and writes nothing."""
    folder = fixtures / "lint"
    errors = [line for line in expected_lines(folder) if ": error: " in line]
    out = tmp_path / "deck.apkg"
    for name in ("b_structure.txt", "c_empty.txt", "d_gbk.txt", "e_no_repo.txt"):
        sources = [str(folder / "a_content.txt"), str(folder / name)]
        first = next(line for line in errors if line.startswith(str(folder / name)))
        result = runner.invoke(cli, ["build", *sources, "-o", str(out)])
        assert result.exit_code == 1, name
        assert result.stderr == "Error: " + first.replace(": error: ", ": ", 1) + "\n"
        assert not out.exists()


def test_unknown_acronyms_once_at_first_use(tmp_path: Path) -> None:
    """An acronym the glossary beside the seeds lacks is reported once, at its first line; code and names are not acronyms."""
    seed = write_seed(tmp_path, "a.txt", "o/r\n\n为 MoE 引入 DCP 支持。\n\n值得精读。通过 `TP_SIZE` 配置 FlashAttention，\n"
                                         "并让 DCP 与 ROCm 兼容，以避免 OOM；MoE 同理。\n")
    write_seed(tmp_path, "glossary.toml", 'use_builtin = false\n[[term]]\nterm = "DCP"\nen = "Decode Context Parallelism"\n'
                                          'zh = "解码上下文并行"\n')
    report = lint_corpus([seed])
    assert [(f.line, f.message) for f in report.findings] == [
        (3, "unknown acronym MoE"), (6, "unknown acronym ROCm"), (6, "unknown acronym OOM")]
    assert report.glossary_checked


def test_without_a_glossary_file_the_builtin_one_checks_acronyms(runner: CliRunner, tmp_path: Path) -> None:
    seed = write_seed(tmp_path, "a.txt", "o/r\n\n为 MoE 引入 ZQXW 缓存。\n\n值得精读。采用分段缓存而非全局缓存，以避免锁竞争。\n")
    result = runner.invoke(cli, ["lint", str(seed)])
    assert result.exit_code == 0
    assert result.stdout == (f"{seed}:3: warning: unknown acronym ZQXW (add a [[term]] for it to a glossary.toml beside "
                             "the seeds, or list it in ignore = [...] there)\n")  # MoE is a built-in term
    assert result.stderr == "0 error(s), 1 warning(s) in 1 seed file(s)\n"


def test_glossary_option_checks_against_that_glossary(runner: CliRunner, tmp_path: Path) -> None:
    """lint --glossary FILE reads the acronyms a build with the same option would: not the glossary beside the seeds."""
    (tmp_path / "seeds").mkdir()
    seed = write_seed(tmp_path, "seeds/a.txt", "o/r\n\n为 MoE 引入 DCP 支持。\n\n值得精读。采用分段缓存而非全局缓存，以避免锁竞争。\n")
    write_seed(tmp_path, "seeds/glossary.toml", 'use_builtin = false\n[[term]]\nterm = "DCP"\nen = "Decode Context Parallelism"\n'
                                                'zh = "解码上下文并行"\n')
    other = write_seed(tmp_path, "other.toml", 'use_builtin = false\n[[term]]\nterm = "MoE"\nen = "Mixture of Experts"\n'
                                               'zh = "混合专家"\n')
    beside = runner.invoke(cli, ["lint", str(seed)])
    chosen = runner.invoke(cli, ["lint", str(seed), "--glossary", str(other)])
    assert (beside.exit_code, chosen.exit_code) == (0, 0)
    assert "unknown acronym MoE" in beside.stdout and "DCP" not in beside.stdout
    assert chosen.stdout == f"{seed}:3: warning: unknown acronym DCP (add a [[term]] for it to {other}, or list it in ignore = [...])\n"
    missing = runner.invoke(cli, ["lint", str(seed), "--glossary", str(tmp_path / "nowhere.toml")])
    assert missing.exit_code == 1 and "nowhere.toml" in missing.stderr and "Traceback" not in missing.output



_RUN = "\u200b".join(["通过缓存实现复用"] * 100)  # 899 characters as written, 800 once the U+200B are gone
_ITEMS = "\n".join(f"- 通过 `opt_{n}` 实现复用" for n in range(130))


@pytest.mark.parametrize(("review", "line", "warning"), [
    # A pasted run with no 。！？ (invisible separators do not count) is read in pieces.
    (f"值得精读。\n{_RUN}。", 6, "a sentence of 800 characters with no 。！？ to end it: deckgen reads it in pieces of at "
     "most 500 characters, cut after ；，、 or a space (end each sentence with 。, or split the review, so that every "
     "sentence is read whole)"),
    # Line 5 is the list's lead, a sentence of its own, then an item a line: the 100 read are the lead and items 0-98.
    (f"值得精读，关键设计决策：\n{_ITEMS}", 105, "the review goes on for 31 more sentences and items than the 100 "
     "deckgen reads of one review: nothing from here on makes a card (keep the review to its design decisions, or "
     "split it into entries of their own)"),
], ids=["long-sentence", "too-many-items"])
def test_what_deckgen_does_not_read_whole_is_a_warning_at_its_line(runner: CliRunner, tmp_path: Path, review: str,
                                                                   line: int, warning: str) -> None:
    seed = write_seed(tmp_path, "w.txt", f"o/r\n\n调整缓存。\n\n{review}\n")
    result = runner.invoke(cli, ["lint", str(seed)])
    assert (result.exit_code, result.stdout) == (0, f"{seed}:{line}: warning: {warning}\n")
