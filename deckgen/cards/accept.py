"""A candidate card in; how likely a learner keeps it out: a small linear model trained on reviewers' verdicts.

The card model (:mod:`.rank`) learns whether a card's answer holds a gold key; a card can hold one and still be
garbled, mismatched or context-free.  This model learns what blind reviewers keep: every candidate the generator
offers for the development reviews was rated KEEP, FIX or DROP by reviewers who saw only the PR's summary, its
review and the card (``corpus/verdicts/``), and a candidate is positive when rated KEEP.  Its features hold for
any review: the card model's own features and score, how the fact was found (a relation, a headline form, a key
phrase and the span model's score for it), where the decision stands, words that point at nothing, how many
other candidates of the PR test the same text, and the words at the edges of the question and answer that occur
in many reviews (never a name of one PR).  Its weights and threshold are data (``rules/acceptance.json``),
trained by ``benchmarks/train_acceptance.py``; the same card always gets the same probability.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import islice
from typing import Any

from ..files.datadir import data_dir, model_weights, read_model
from ..text.segment import Segmenter, Token, units
from ..types import CardKind, norm
from .gate import Candidate, is_bare_cue, tested
from .lists import in_a_list
from .rank import features as card_features
from .rank import probability as card_probability

ACCEPTANCE_FILE = "acceptance.json"
_DANGLING = re.compile(r"这也|这一|这种|这样|此举|其|据此|上述|前者|后者|该方案|该机制|该做法|它们?|二者|两者")
_CODE = re.compile(r"`[^`]+`|[A-Za-z_][A-Za-z0-9_.:/+#-]*")
_SHORT_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9]{0,5}")
_NAMED = re.compile(r"^「[^」]*」中，")
_GAP = re.compile("\ue000\\d\ue001[^\ue002]*\ue002")
_SIGNS = tomllib.loads((data_dir("rules") / "acceptance.toml").read_text(encoding="utf-8"))["sentence"]
_SENTENCE_SIGNS = tuple((name, re.compile("|".join(words))) for name, words in sorted(_SIGNS.items()))
_VISIBLE = re.compile(r"[A-Za-z0-9_]+|[\u3400-\u9fff]")


def _bucket(n: float, edges: Iterable[float]) -> str:
    return next((f"<={edge}" for edge in edges if n <= edge), "more")


def echoes(candidates: Sequence[Candidate]) -> Counter[str]:
    """How many candidates of one PR test each text (its plain form): a phrase several rules pick is salient."""
    return Counter(norm(t) for c in candidates for t in set(tested(c.card)) if norm(t))


# A feature reads a card's edge words only, and segmenting all of every candidate's question and answer was a
# tenth of a build: only the blocks at the edge asked for are segmented (Segmenter.first_tokens, last_tokens).
@lru_cache(maxsize=4096)  # a PR's candidates share answers, and corpora their phrasings
def first_words(seg: Segmenter, text: str, count: int) -> tuple[str, ...]:
    """The first *count* words of *text*, its code and English words each read as ``C``."""
    return _visible_words(seg.first_tokens(_CODE.sub(" C ", text)), count)


@lru_cache(maxsize=4096)
def last_words(seg: Segmenter, text: str, count: int) -> tuple[str, ...]:
    """The last *count* words of *text*, in their order, read as :func:`first_words` reads them."""
    return _visible_words(seg.last_tokens(_CODE.sub(" C ", text)), count)[::-1]


def _visible_words(tokens: Iterator[Token], count: int) -> tuple[str, ...]:
    return tuple(t.text if not t.protected else "C" for t in islice((t for t in tokens if t.text.strip()), count))


def features(candidate: Candidate, warnings: Sequence[str], seg: Segmenter, scores: Sequence[tuple[str, float]],
             echo: Counter[str]) -> list[str]:
    """The features of *candidate* (with the gate's warning checks *warnings*, its review's clause decision scores
    *scores* and its PR's :func:`echoes`): names, each with value 1."""
    card = candidate.card
    base = card_features(card, warnings, seg, scores)
    found = [f"r:{name}" for name in base]
    found.append(f"card{_bucket(round(10 * card_probability(base)), (1, 2, 3, 5, 7))}")
    found.append(f"marker={card.kind.value}:{candidate.marker or '-'}")
    found.append(f"unit={_bucket(candidate.unit, (0, 1, 2, 4))}")
    if is_bare_cue(card.cue):
        found.append("bare_cue")
    if candidate.phrase:
        found.append(f"phrase{_bucket(round(10 * candidate.phrase), (1, 2, 4, 6, 8))}")
    texts = tested(card)
    found.append(f"echo={_bucket(max(echo.get(norm(t), 1) for t in texts) - 1, (0, 1, 2))}")
    question = card.prompt if card.kind != CardKind.CLOZE else _GAP.sub("＿", card.prompt)
    if card.kind == CardKind.CLOZE:
        hidden = sum(units(t) for t in texts)
        found.append(f"hidden{_bucket(round(10 * hidden / max(units(question) + hidden, 1)), (1, 2, 3))}")
        at = question.find("＿")
        before, after = question[:at].strip(), question[at + 1:].strip()
        if not before or before.endswith(("：", ":", "，")):
            found.append("gap_opens")
        if not after or after.startswith(("。", "；")):
            found.append("gap_closes")
        elif after.startswith(("：", ":", "——")) and units(after) >= 6:
            found.append("gap_explained")  # "[……]：调度器支持同一模型并行处理多个请求": the name, told by what follows
    else:
        tail = last_words(seg, question, 3)
        found.extend(f"qe{len(tail) - k}={w}" for k, w in enumerate(tail))
    for where, text in (("q", question), ("a", " ".join(texts))):
        found.extend(f"d{where}={m.group()}" for m in _DANGLING.finditer(text))
    opens = first_words(seg, texts[0], 1) if texts else ()
    if opens:
        found += [f"aw=^{opens[0]}", f"aw={last_words(seg, texts[0], 1)[0]}$"]
    if texts and _SHORT_LATIN.fullmatch(texts[0].strip()):
        found.append("a_short_latin")  # API, KV, true, guard: rated trivial most of the time
    named = _NAMED.match(question)
    if named:
        found.append("q_named")
    head = first_words(seg, question[named.end() if named else 0:], 2)
    found.extend(f"qw=^{w}" for w in head)
    found.append(f"visible{_bucket(round(10 * _visible_share(texts, question + card.cue)), (0, 2, 4, 6))}")
    if any(in_a_list(t, card.sentence) for t in texts):
        found.append("in_list")
    found.extend(_sentence_signs(card.sentence))
    return found


@lru_cache(maxsize=256)  # a PR's candidates come from a few sentences
def _sentence_signs(sentence: str) -> tuple[str, ...]:
    return tuple(f"s_{name}" for name, pattern in _SENTENCE_SIGNS if pattern.search(sentence))


def _visible_share(texts: Sequence[str], front: str) -> float:
    """How much of what *texts* hide can be read on the front: the share of their characters (CJK characters and
    English words) that occur there."""
    parts = [p.lower() for t in texts for p in _VISIBLE.findall(t)]
    shown = front.lower()
    return sum(1 for p in parts if p in shown) / max(len(parts), 1)


@lru_cache(maxsize=1)
def _model() -> dict[str, Any]:
    return read_model(ACCEPTANCE_FILE)


@lru_cache(maxsize=1)
def weights() -> dict[str, float]:
    """The model's weights (``rules/acceptance.json``); none when there is no file."""
    return model_weights(_model())


def threshold(name: str = "threshold") -> float:
    """A threshold of ``rules/acceptance.json``: ``threshold``, the least probability of a card a decision unit
    gets; ``second``, of a second card of a unit."""
    return float(_model().get(name, 0.0))


def probability(names: Iterable[str], table: dict[str, float] | None = None) -> float:
    """The model's probability that a learner keeps a card with these features."""
    table = weights() if table is None else table
    z = sum(table.get(name, 0.0) for name in names)
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))
