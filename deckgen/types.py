"""The values passed between pipeline stages: parse → extract → cards → package."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from pathlib import Path

from .kinds import CardKind as CardKind  # where it always was, for every user of the types

_PUNCT_RE = re.compile(r"[\s\W_]+", re.UNICODE)


@lru_cache(maxsize=16384)  # pure; the gate and the lock compare the same texts many times
def norm(text: str) -> str:
    """Comparison form: NFKC, lower case, no whitespace or punctuation.

    Text made only of symbols (``!=``, ``->``) keeps them, so it never compares as empty.
    """
    folded = unicodedata.normalize("NFKC", text).lower()
    return _PUNCT_RE.sub("", folded) or "".join(folded.split())


def short_hash(text: str, length: int = 12) -> str:
    """A stable hex digest (never Python's salted ``hash()``)."""
    return _sha256_hex(text.encode("utf-8"))[:length]


def _sha256_hex(data: bytes) -> str:
    # hashlib here, not at the top: OpenSSL's bindings take longer to load than the rest of this module, and
    # `deckgen --help` loads neither.
    from hashlib import sha256

    return sha256(data).hexdigest()


@dataclass(frozen=True)
class Entry:
    """One PR review in a seed file: its summary line and review paragraph."""

    repo: str
    """GitHub repository, ``owner/name`` (line 1 of the seed file)."""
    title: str
    """The one-sentence PR summary, verbatim."""
    review: str
    """The review paragraph; its lines joined with ``\\n``."""
    path: Path
    title_line: int
    review_line: int
    pr_key: str = field(init=False, repr=False, compare=False)
    """Identity of the PR: repository plus normalised summary.

    Punctuation and spacing fixes in the summary keep the key (and every
    card's GUID); a reworded summary is a different PR to deckgen.
    """
    content_key: str = field(init=False, repr=False, compare=False)
    """A hash of everything about the entry that extraction and its cards depend on (lines included)."""

    def __post_init__(self) -> None:
        # Both keys are asked for by every build, so they are worked out now: set later (a cached
        # property), each would grow the entry's __dict__ past its shared-keys table, 400 bytes an
        # entry, 40 MB in a build of 100,000.
        object.__setattr__(self, "pr_key", self._pr_key())
        text = "\0".join((self.repo, self.title, self.review, str(self.path), str(self.title_line),
                          str(self.review_line), type(self).__name__))
        object.__setattr__(self, "content_key", _sha256_hex(text.encode("utf-8", "surrogatepass")))

    def _pr_key(self) -> str:
        return f"{self.repo}#{short_hash(norm(self.title))}"

    @property
    def source(self) -> str:
        return f"{self.repo} · {self.path.name}:{self.title_line}"

    def line_of(self, offset: int) -> int:
        """Seed-file line of a character offset in :attr:`review`."""
        return self.review_line + self.review.count("\n", 0, offset)


def _as_constructor_call(self: object) -> tuple[type, tuple[object, ...]]:
    # Pickled as a call of the class with its fields: the default for frozen slotted dataclasses
    # (dataclasses' __setstate__, which looks the fields up again for every object) was most of
    # reading a cached result back.
    cls = type(self)
    return cls, tuple(map(self.__getattribute__, cls.__slots__))  # type: ignore[attr-defined]


class Verdict(str, Enum):
    """Whether the review says the PR is worth reading closely."""

    DEEP = "deep"  # 精读
    SKIM = "skim"  # 快速浏览 / 略读
    SKIP = "skip"  # 不值得精读
    UNKNOWN = "unknown"

    @property
    def label(self) -> str:
        return {"deep": "精读", "skim": "快速浏览", "skip": "不值得精读", "unknown": "未注明"}[self.value]


class Relation(str, Enum):
    """How a fact was stated in the review; decides which questions it can answer."""

    DEFINITION = "definition"  # **名称**: 说明 / 名称——说明
    CONTRAST = "contrast"  # X 而非 Y / 用 X 替代 Y
    PURPOSE = "purpose"  # X 以 Y / 为了 Y，X
    AVOID = "avoid"  # X，以避免 Y
    RESULT = "result"  # X，从而 Y / X 确保 Y / X 让 Y
    MEANS = "means"  # 通过 X 实现 Y / 用 X 做 Y
    SHOW = "show"  # X 体现了 / 展示了 Y
    SOLVE = "solve"  # X 解决 Y
    ROLE = "role"  # X 作为 Y
    ACTION = "action"  # 把 X V 到 Y (name holds the agent)
    CONDITION = "condition"  # 当 X 时，Y / 若 X，则 Y
    CAUSE = "cause"  # 由于 X，(所以) Y / Y，因为 X
    TRADEOFF = "tradeoff"  # (X 的)好处是 Y / 代价是 Y (verb holds 好处 or 代价)
    TERM = "term"  # a key phrase worth a cloze, no relation
    HEADLINE = "headline"  # the change the PR summary states (subject: what the question shows)
    SLOT = "slot"  # a phrase of a decision asked in place (subject: the question with a gap)
    WHOLE = "whole"  # a unit's whole choice (subject: the unit's head, its name or what it is about)


@dataclass(frozen=True, slots=True)  # hundreds of thousands in a big build: no __dict__ each
class Fact:
    """One design decision, or one relation inside it, found in a review."""

    relation: Relation
    subject: str
    """X: the decision, means or chosen option (plain text; backticks mark code)."""
    detail: str
    """Y: its mechanism, purpose, effect or the rejected alternative."""
    sentence: str
    """The whole sentence or enumeration item the fact comes from."""
    line: int
    marker: str = ""
    """The connective as written: 而非, 以避免, 确保了, 通过 …"""
    verb: str = ""
    """For means/result facts: the verb that heads :attr:`detail` (实现, 保证 …)."""
    name: str = ""
    """The decision's name when the review gives one (bold heading, quoted term)."""
    lead: str = ""
    """Text introducing an enumeration ("关键设计决策："), kept as cloze context."""
    prefix: str = ""
    """Words before the marker in its clause ("新格式需要" in 新格式需要通过 X 开启), for the question."""
    unit: int = 0
    """Which decision unit of the review states it, in review order from 1; 0 for the summary's headline."""
    score: float = 0.0
    """For a key phrase (a :data:`Relation.TERM` fact of marker ``span``): how likely a learner should recall it."""

    __reduce__ = _as_constructor_call


@dataclass(frozen=True, slots=True)  # hundreds of thousands in a big build: no __dict__ each
class Review:
    """What deckgen understood of one entry."""

    entry: Entry
    verdict: Verdict
    verdict_phrase: str
    facts: tuple[Fact, ...]
    identifiers: tuple[str, ...] = ()
    pr_refs: tuple[str, ...] = ()
    clause_scores: tuple[tuple[str, float], ...] = ()
    """Each clause of the review's decisions with how likely it states one (:mod:`deckgen.extract.decisions`)."""
    long_sentences: tuple[tuple[int, int], ...] = ()
    """The seed line and length of each sentence too long to read whole, read in pieces (issue #27)."""
    unread: tuple[int, int] | None = None
    """For a review of too many sentences and items to read them all: the seed line of the first one not read, and
    how many were not (issue #27)."""

    __reduce__ = _as_constructor_call


@dataclass(frozen=True, slots=True)  # hundreds of thousands in a big build: no __dict__ each
class Card:
    """One card as a learner will see it, before it becomes an Anki note.

    Text fields are plain text with backticks marking code; the packaging
    stage escapes them.  For a cloze card :attr:`prompt` holds the text with
    ``{{c1::…}}`` deletions and :attr:`answer` the deleted text.
    """

    entry: Entry
    kind: CardKind
    key: str
    """Stable identity inside the PR: kind plus the fact's anchor, never the card text."""
    prompt: str
    answer: str
    cue: str
    sentence: str
    line: int
    verdict: Verdict
    relation: Relation
    score: float = 0.0
    """How likely a learner keeps the card (the acceptance model's probability; the card model's without it)."""
    tags: tuple[str, ...] = field(default=())

    __reduce__ = _as_constructor_call

    def with_tags(self, extra: tuple[str, ...]) -> Card:
        """This card with *extra* tags after its own (what dataclasses.replace does, at a third of its cost)."""
        values = list(map(self.__getattribute__, Card.__slots__))  # type: ignore[attr-defined]
        values[_CARD_TAGS] = (*self.tags, *extra)
        return Card(*values)

    @property
    def guid_parts(self) -> tuple[str, str, str]:
        return (self.entry.repo, self.entry.pr_key, self.key)


_CARD_TAGS = Card.__slots__.index("tags")  # type: ignore[attr-defined]


class Level(str, Enum):
    """How bad a :class:`SeedFinding` is: errors stop a build, warnings do not."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class SeedFinding:
    """One problem in a seed file, as ``deckgen lint`` prints it: ``path:line: level: message (fix)``.

    The parse stage collects these instead of stopping at the first problem;
    :class:`~deckgen.errors.SeedError` is the first error finding, raised.
    """

    path: Path
    line: int | None
    """1-based line, or ``None`` when the problem is the whole file (empty, unreadable)."""
    level: Level
    message: str
    """What is wrong."""
    fix: str = ""
    """What to do about it (may be empty)."""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else f"{self.path}"

    @property
    def text(self) -> str:
        """The message with its fix, as ``Error:`` lines and lint lines show it."""
        return f"{self.message} ({self.fix})" if self.fix else self.message

    def __str__(self) -> str:
        return f"{self.where}: {self.level.value}: {self.text}"


@dataclass(frozen=True)
class DeckChanges:
    """Notes of a build compared with the lock file (counts of notes, as Anki's import log counts them)."""

    version: int
    new: int
    changed: int
    unchanged: int
    obsolete: int
    pruned: int
    first_build: bool


@dataclass(frozen=True)
class BuildReport:
    """What a build did, for the CLI's summary line and for tests."""

    output: Path
    entries: int
    cards: int
    files: int
    warnings: tuple[str, ...] = ()
    lock: Path | None = None
    changes: DeckChanges | None = None
