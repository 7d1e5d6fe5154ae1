"""A card rendered as a note: what its fields say on the back of the card, as Anki renders it."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from deckgen.deck.notes import cloze_context, note_fields, source_field
from deckgen.text.prnumber import own_pr_number
from deckgen.deck.package import DeckPlan, write_apkg
from deckgen.text.markup import deletion
from deckgen.types import Card, CardKind, Entry, Relation, Verdict
from tests.conftest import AnkiCollection, read_apkg

ENTRY = Entry("o/r", "为调度器引入预分配工作区", "值得精读。采用 `a<b>` 而非 c。", Path("s.txt"), 3, 5)
GLOSSARY_ENTRY = Entry("o/r", "术语表 · deckgen glossary", "[[term]] term = \"DCP\"", Path("glossary.toml"), 7, 7)
GLOSSARY_CARD = Card(entry=GLOSSARY_ENTRY, kind=CardKind.GLOSSARY, key="glossary:term:dcp", prompt="术语「DCP」指什么？",
                     answer="解码上下文并行（Decode Context Parallelism）", cue="r · 术语",
                     sentence="解码阶段把 KV cache 按 token 切到多卡。", line=7, verdict=Verdict.UNKNOWN,
                     relation=Relation.TERM)


def back_text(anki: AnkiCollection, tmp_path: Path, card: Card) -> str:
    """The visible text of *card*'s back as Anki renders it (the style block and tags removed)."""
    out = write_apkg(DeckPlan([card], timestamp=1_700_000_000), tmp_path / f"{card.key}.apkg")
    anki.import_apkg(out)
    (cid,) = anki.col.find_cards("")
    page = anki.col.get_card(cid).answer()
    return html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<style>.*?</style>", "", page, flags=re.S)))


def test_a_glossary_card_has_no_pr_line(anki: AnkiCollection, tmp_path: Path) -> None:
    """A term belongs to no PR: no line of its back is labelled PR, its meaning is 释义, its verdict 术语表."""
    question, answer, cue, summary, sentence, source, verdict, status = note_fields(GLOSSARY_CARD)
    assert summary == "" and verdict == "术语表"
    back = back_text(anki, tmp_path, GLOSSARY_CARD)
    assert "PR" not in back and "deckgen glossary" not in back and "原文" not in back
    assert "释义解码阶段把 KV cache 按 token 切到多卡。" in back
    assert "术语表" in back and "glossary.toml:7" in back


def test_a_pr_card_keeps_its_pr_line(anki: AnkiCollection, tmp_path: Path) -> None:
    card = Card(entry=ENTRY, kind=CardKind.CONTRAST, key="contrast:contrast:c", prompt="用什么替代了「c」？",
                answer="`a<b>`", cue="r · 为调度器引入预分配工作区", sentence="采用 `a<b>` 而非 c", line=5,
                verdict=Verdict.DEEP, relation=Relation.CONTRAST)
    back = back_text(anki, tmp_path, card)
    assert "原文采用 a<b> 而非 c" in back and "PR为调度器引入预分配工作区" in back and "释义" not in back


SENTENCE = "此外，作者把序列化逻辑抽到了独立的 `cargo-util-schemas` crate 中，便于第三方工具复用"


@pytest.mark.parametrize(("prompt", "shown"), [
    # the whole sentence is on the card: no 原文 line
    ("此外，作者把序列化逻辑抽到了独立的 " + deletion(1, "`cargo-util-schemas`") + " crate 中，便于第三方工具复用", ""),
    # a word or two more (此外，) is not worth a line
    ("作者把序列化逻辑抽到了独立的 " + deletion(1, "`cargo-util-schemas`") + " crate 中，便于第三方工具复用", ""),
    # the rest of the sentence, after the part the card shows
    ("作者把序列化逻辑抽到了独立的 " + deletion(1, "`cargo-util-schemas`") + " crate 中", "…便于第三方工具复用"),
    # before and after
    ("把序列化逻辑抽到了独立的 " + deletion(1, "`cargo-util-schemas`") + " crate 中", "此外，作者…便于第三方工具复用"),
    # a pronoun the card resolved (它 → 该 PR) is no difference
    ("该 PR 把序列化逻辑抽到了独立的 " + deletion(1, "`cargo-util-schemas`") + " crate 中，便于第三方工具复用", ""),
], ids=["whole", "nearly-whole", "after", "before-and-after", "resolved-pronoun"])
def test_a_cloze_back_shows_only_what_the_sentence_adds(prompt: str, shown: str) -> None:
    sentence = SENTENCE if "该 PR" not in prompt else SENTENCE.replace("此外，作者", "它")
    assert cloze_context(prompt, sentence) == shown


def test_cloze_context_never_cuts_a_code_span() -> None:
    sentence = "缓存键包含 `torch.__version__` 与 Triton 版本，加载时逐项比对"
    prompt = "ch.__version__` 与 " + deletion(1, "Triton") + " 版本"  # a text that starts inside the code span
    assert cloze_context(prompt, sentence) == "缓存键包含…加载时逐项比对"


def test_a_cloze_card_without_context_has_no_sentence_line(anki: AnkiCollection, tmp_path: Path) -> None:
    """On the back the cloze text is shown whole: the 原文 line would repeat it."""
    card = Card(entry=ENTRY, kind=CardKind.CLOZE, key="cloze:x",
                prompt="作者把序列化逻辑抽到了独立的 " + deletion(1, "`cargo-util-schemas`") + " crate 中，便于第三方工具复用",
                answer="`cargo-util-schemas`", cue="r · 为调度器引入预分配工作区", sentence=SENTENCE, line=5,
                verdict=Verdict.DEEP, relation=Relation.TERM)
    assert note_fields(card)[3] == ""
    back = back_text(anki, tmp_path, card)
    assert "原文" not in back and back.count("便于第三方工具复用") == 1


def test_a_cloze_card_shows_the_rest_of_its_sentence(anki: AnkiCollection, tmp_path: Path) -> None:
    card = Card(entry=ENTRY, kind=CardKind.CLOZE, key="cloze:x",
                prompt="作者把序列化逻辑抽到了独立的 " + deletion(1, "`cargo-util-schemas`") + " crate 中",
                answer="`cargo-util-schemas`", cue="r · 为调度器引入预分配工作区", sentence=SENTENCE, line=5,
                verdict=Verdict.DEEP, relation=Relation.TERM)
    back = back_text(anki, tmp_path, card)
    assert "原文…便于第三方工具复用" in back and back.count("序列化逻辑") == 1


@pytest.mark.parametrize(("title", "review", "number"), [
    ("修复调度器的竞态 (#4412)", "值得精读。", "4412"),  # GitHub's title of a merged PR
    ("修复调度器的竞态（#4412）。", "值得精读。", "4412"),
    ("#4412: 修复调度器的竞态", "值得精读。", "4412"),
    ("修复调度器的竞态", "本 PR（#4412）把锁换成了无锁队列。", "4412"),
    ("修复调度器的竞态", "此 PR #4412 值得精读。", "4412"),
    ("修复调度器的竞态 (#4412)", "本 PR（#4412）值得精读，另见 #1234。", "4412"),
    # other PRs and issues a review names are not this PR
    ("修复调度器的竞态", "值得精读，另见 #1234。", None),
    ("修复调度器的竞态", "确保下游组件（如 Rust 前端 PR #55842）能正确处理新格式。", None),
    ("修复调度器的竞态", "Issue #52330 对线程超订阅的量化分析值得学习。", None),
    ("修复调度器的竞态", "另见 #1234，该 PR（#1234）引入了这个锁。", None),  # 该 PR: the one just named
    ("回滚 #1234 引入的改动", "值得精读。", None),
    ("修复调度器的竞态 (#4412)", "本 PR（#4413）值得精读。", None),  # two numbers: neither
], ids=["title-merged", "title-fullwidth", "title-start", "review-ben", "review-ci", "both-agree", "see-also",
        "downstream", "issue", "gai-pr", "revert", "disagree"])
def test_the_pr_number_is_shown_only_when_the_seed_says_it_is_this_pr(title: str, review: str,
                                                                      number: str | None) -> None:
    assert own_pr_number(title, review) == number


def test_the_source_line_names_the_repository_and_pr_and_keeps_file_and_line_as_a_detail(
        anki: AnkiCollection, tmp_path: Path) -> None:
    entry = Entry("o/r", "为调度器引入预分配工作区 (#4412)", "本 PR 值得精读。", Path("001_x.txt"), 3, 5)
    card = Card(entry=entry, kind=CardKind.WHY, key="why:x", prompt="预分配工作区是为了避免什么？",
                answer="捕获期间分配显存", cue="r · 为调度器引入预分配工作区", sentence="预分配工作区以避免捕获期间分配显存",
                line=5, verdict=Verdict.DEEP, relation=Relation.PURPOSE)
    assert source_field(card) == 'o/r · PR #4412 · <span class="where">001_x.txt:5</span>'
    assert "精读o/r · PR #4412 · 001_x.txt:5" in back_text(anki, tmp_path, card)
    assert source_field(GLOSSARY_CARD) == 'o/r · <span class="where">glossary.toml:7</span>'


def test_no_card_of_seeds_claims_a_pr_number(seeds_deck: Path) -> None:
    """seeds/ name PRs (另外可关注 #44258, Rust 前端 PR #55842) and an issue, never their own: repository only."""
    sources = {fields[-3] for _, fields, _, _ in read_apkg(seeds_deck)}
    assert sources and all(s.startswith('vllm-project/vllm · <span class="where">') for s in sources), sources
