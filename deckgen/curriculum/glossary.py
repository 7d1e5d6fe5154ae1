"""The glossary: terms and acronyms of the field in ``glossary.toml``, and the cards that teach them.

Read here (parse stage); everything after reading is pure::

    ignore = ["PR", "JSON"]          # acronyms that need no card (no warning either)

    [[term]]
    term = "DCP"
    en = "Decode Context Parallelism"
    zh = "解码上下文并行"                # the answer: short, one fact
    meaning = "解码阶段把长序列的 KV cache 按 token 切分到多张卡上……"   # optional
    aliases = ["解码上下文并行"]     # other spellings that count as a use of the term

A file beside the seeds is laid over the built-in glossary (see :mod:`.builtin`)
by :func:`layer_glossary` unless it says ``use_builtin = false``.

The card asks 术语「DCP」指什么？ and answers 解码上下文并行（Decode Context
Parallelism）; the meaning is shown below the answer.

A PR *uses* a term when the term or an alias occurs in its summary or review
(matched like topic keywords, see :mod:`deckgen.text.matching`).

Identity: a glossary card is shared by every PR of a repository that uses the
term, so its GUID cannot contain a PR's key.  Each repository gets one
glossary pseudo-entry whose ``pr_key`` is the fixed ``<owner>/<name>#glossary``
(real PR keys are ``#`` + 12 hex digits, so they never collide), and the card
key is ``glossary:term:<normalised term>``: the GUID survives rewording of the
meaning, new PRs using the term, and moving the entry within the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from ..source.datafile import read_toml, required_string, string_list, tables
from ..text.matching import KeywordIndex, Keywords, fold, nfkc
from ..types import Card, CardKind, Entry, Relation, Verdict, norm
from .origin import Origin, origin_label, where_to_add
from .topics import TOPIC_TAG_PREFIX

GLOSSARY_FILE = "glossary.toml"
_KEYS = frozenset({"term", "en", "zh", "meaning", "aliases"})
_CODE_SPAN_RE = re.compile(r"`[^`\n]+`")
# A run of ASCII letters and digits not glued to other word characters.  The edge before it is checked
# after its first letter: a pattern that starts with a character class is tried only where one stands.
_TOKEN_RE = re.compile(r"[A-Za-z](?<![A-Za-z0-9_][A-Za-z])[A-Za-z0-9]{1,11}(?![A-Za-z0-9_])")
GLOSSARY_TITLE = "术语表 · deckgen glossary"


@dataclass(frozen=True)
class Term:
    term: str
    en: str
    zh: str
    meaning: str = ""
    aliases: tuple[str, ...] = ()
    line: int | None = None
    source: Path | None = None
    """The file the term comes from when it is not the glossary's own (a built-in term under a repository's file)."""

    @cached_property
    def spellings(self) -> Keywords:
        return Keywords((self.term, *self.aliases))

    @property
    def answer(self) -> str:
        """The card's answer: the Chinese name, with the English expansion unless it only repeats the term."""
        if norm(self.term) in norm(self.en) or norm(self.en) in norm(self.zh):
            return self.zh
        return f"{self.zh}（{self.en}）"

    @property
    def key(self) -> str:
        """The card key: the term's normalised form, so case or spacing fixes keep the GUID."""
        return f"glossary:term:{norm(self.term)}"


@dataclass(frozen=True)
class Glossary:
    path: Path
    """The file a person edits: the repository's, or the built-in one (see :attr:`origin`)."""
    terms: tuple[Term, ...]
    ignore: tuple[str, ...] = ()
    use_builtin: bool = True
    """As the file says: False when it stands alone instead of being laid over the built-in glossary."""
    origin: Origin = Origin.FILE

    @property
    def label(self) -> str:
        return origin_label(self.path, self.origin, "glossary")

    @property
    def add_to(self) -> str:
        """Where a person adds a term: the repository's file, or a new one beside the seeds."""
        return where_to_add(self.path, self.origin, GLOSSARY_FILE)

    def unknown_advice(self, each: str, *, say_where: bool = True) -> str:
        """What to do about acronyms without an entry (*each*: "it" or "each"); *say_where* names the file to edit,
        which a message naming the glossary's file already does (the built-in's is never edited: always named)."""
        builtin = self.origin is Origin.BUILTIN
        where = f" to {self.add_to}" if say_where or builtin else ""
        return f"add a [[term]] for {each}{where}, or list it in ignore = [...]{' there' if builtin else ''}"

    @cached_property
    def _known(self) -> frozenset[str]:
        return frozenset({norm(s) for t in self.terms for s in (t.term, *t.aliases)} | {norm(s) for s in self.ignore})

    @cached_property
    def blanking_only_removes(self) -> bool:
        """Whether blanking out spellings can only remove acronyms from a text, never reveal one.

        A spelling's match ends at a non-word character or where the next character is not one
        (see :mod:`deckgen.text.matching`), so the words around it stay whole; only a backtick in a
        spelling could change which text counts as a code span.
        """
        return not any("`" in s for t in self.terms for s in (t.term, *t.aliases))

    @cached_property
    def _index(self) -> KeywordIndex:
        """Every term's spellings (set i for term i), searched together."""
        return KeywordIndex([t.spellings for t in self.terms])

    def knows(self, acronym: str) -> bool:
        """Whether *acronym* is a term, an alias or ignored."""
        return norm(acronym) in self._known


class GlossaryEntry(Entry):
    """The per-repository pseudo-entry glossary cards hang on (see the module docstring)."""

    def _pr_key(self) -> str:
        return f"{self.repo}#glossary"


def load_glossary(path: Path) -> Glossary:
    """Read ``glossary.toml``; a :class:`~deckgen.errors.DataFileError` naming file and line for anything wrong."""
    where = read_toml(path)
    where.only_keys(where.data, frozenset({"term", "ignore", "use_builtin"}), None, "the file",
                    "a glossary has [[term]] tables, an optional ignore = [...] list and use_builtin = true/false")
    terms: list[Term] = []
    seen: dict[str, int | None] = {}
    for table, line in tables(where, "term"):
        where.only_keys(table, _KEYS, line, "[[term]]", f"known keys: {', '.join(sorted(_KEYS))}")
        name = required_string(table, "term", where, line, "[[term]]")
        what = f"term {name!r}"
        meaning = table.get("meaning", "")
        if not isinstance(meaning, str):
            raise where.error(line, f"{what}: 'meaning' must be a string", 'write meaning = "…"')
        term = Term(name, required_string(table, "en", where, line, what), required_string(table, "zh", where, line, what),
                    meaning.strip(), string_list(table, "aliases", where, line), line)
        where.unique(seen, term.key, line, f"term {name!r}", "merge the two entries")
        terms.append(term)
    ignore = string_list(where.data, "ignore", where, where.key_line("ignore"))
    return Glossary(Path(path), tuple(terms), ignore, where.boolean("use_builtin", True))


def layer_glossary(own: Glossary, base: Glossary) -> Glossary:
    """*own* over *base*: *own*'s terms first, then *base*'s other terms; both ignore lists.

    A term of *own* replaces *base*'s term of the same key (its spellings, answer and meaning);
    a term *own* ignores is no card even when *base* has it.  The result has *own*'s path.
    """
    mine = {t.key for t in own.terms}
    ignored = {norm(s) for s in own.ignore}
    kept = tuple(replace(t, source=t.source or base.path) for t in base.terms
                 if t.key not in mine and norm(t.term) not in ignored)
    return Glossary(own.path, own.terms + kept, tuple(dict.fromkeys((*own.ignore, *base.ignore))), own.use_builtin,
                    Origin.LAYERED)


def entry_text(entry: Entry) -> str:
    return f"{entry.title}\n{entry.review}"


def terms_used(entry: Entry, glossary: Glossary) -> tuple[Term, ...]:
    """The glossary terms *entry* uses, in glossary order."""
    # fold(entry_text(entry)), from the halves the topic match has just folded: a line break stands
    # between them, and NFKC and case folding never carry across one.
    used = glossary._index.hits(f"{fold(entry.title)}\n{fold(entry.review)}")
    return tuple(t for i, t in enumerate(glossary.terms) if used.get(i))


def find_acronyms(text: str) -> list[str]:
    """Acronym-shaped words in *text* outside code spans: DCP, MRV2, LoRA, MoE, ROCm; ``PRs`` counts as PR.

    Acronym-shaped: 2–12 letters and digits starting with a letter, at least two
    capitals and at most one lower-case letter (so CuPy, DeepSeek and MiniCPM are
    names, not acronyms).
    """
    found: list[str] = []
    for word in _TOKEN_RE.findall(_CODE_SPAN_RE.sub(" ", text) if "`" in text else text):
        if word.islower():  # no capital (most words): not an acronym, with or without a plural s
            continue
        if word.endswith("s") and len(word) >= 3 and word[:-1].isupper():
            word = word[:-1]
        if sum(map(str.isupper, word)) >= 2 and sum(map(str.islower, word)) <= 1:
            found.append(word)
    return found


def count_prs(acronyms_by_pr: Iterable[Iterable[str]]) -> tuple[tuple[str, int], ...]:
    """Each acronym with the number of PRs using it (each PR's list without repeats); most used first."""
    prs: dict[str, int] = {}
    for acronyms in acronyms_by_pr:
        for acronym in acronyms:
            prs[acronym] = prs.get(acronym, 0) + 1
    return tuple(sorted(prs.items(), key=lambda item: (-item[1], item[0])))


def unknown_in(text: str, glossary: Glossary) -> list[str]:
    """The acronyms in *text* with no glossary entry, each once, in order of first use (``deckgen lint`` per line)."""
    # An acronym inside a known spelling ("KV" in "KV 缓存") is covered by that term's card.
    # As NFKC(text), from the halves (normalised by the topic match already when text is an entry's title and
    # review): NFKC never carries across a line break.
    head, newline, tail = text.partition("\n")
    text = nfkc(head) + newline + nfkc(tail)
    if glossary.blanking_only_removes and all(map(glossary.knows, find_acronyms(text))):
        return []  # the usual case, and blanking spellings out could only take acronyms away
    for term in glossary.terms:
        text = term.spellings.blank(text)
    return [acronym for acronym in dict.fromkeys(find_acronyms(text)) if not glossary.knows(acronym)]


def glossary_cards(entries: Sequence[Entry], glossary: Glossary, pr_topics: Mapping[str, tuple[str, ...]],
                   used: Sequence[Iterable[str]]) -> list[Card]:
    """One card per (repository, term used by a PR of that repository), tagged with those PRs' topics.

    *used* gives each entry's term keys (see :func:`terms_used`).  Cards come in glossary order
    within each repository, repositories in order of first appearance.
    """
    users: dict[tuple[str, str], list[Entry]] = {}
    for entry, entry_keys in zip(entries, used):
        for key in entry_keys:
            users.setdefault((entry.repo, key), []).append(entry)
    cards: list[Card] = []
    for repo in dict.fromkeys(e.repo for e in entries):
        for term in glossary.terms:
            prs = users.get((repo, term.key))
            if prs:
                cards.append(_card(repo, term, prs, term.source or glossary.path, pr_topics))
    return cards


def _card(repo: str, term: Term, prs: list[Entry], path: Path, pr_topics: Mapping[str, tuple[str, ...]]) -> Card:
    line = term.line or 1
    # The entry's "review" is the glossary entry itself: the text the card is drawn from.  Its title is
    # fixed: naming the PRs that use the term would change the note (and overwrite users' edits to it)
    # whenever a new PR uses the term; the topic tags say where it is used.
    source = f"{term.term}（{term.en}）：{term.zh}。{term.meaning}"
    entry = GlossaryEntry(repo=repo, title=GLOSSARY_TITLE, review=source, path=path, title_line=line, review_line=line)
    topics = sorted({t for e in prs for t in pr_topics.get(e.pr_key, ())})
    return Card(entry=entry, kind=CardKind.GLOSSARY, key=term.key, prompt=f"术语「{term.term}」指什么？",
                answer=term.answer, cue=f"{repo.split('/')[-1]} · 术语", sentence=term.meaning, line=line,
                verdict=Verdict.UNKNOWN, relation=Relation.TERM, tags=tuple(TOPIC_TAG_PREFIX + t for t in topics))
