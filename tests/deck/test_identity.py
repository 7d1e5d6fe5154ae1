"""Recognising reworded PRs looks candidates up by exact signal instead of trying every pair of PRs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deckgen.deck import identity
from deckgen.deck.identity import SIMILAR_TITLE, Sides, _ratio, pair_prs


def pair_prs_every_pair(new: dict[str, list[Sides]], old: dict[str, list[Sides]]) -> dict[str, str]:
    """The rule as first written, over every pair of PRs: the oracle for the indexed version."""
    def signals(cards: list[Sides]) -> set[tuple[str, str, str]]:
        return {s for c in cards for s in (("k", c.kind, c.key), ("a", c.kind, c.answer), ("q", c.kind, c.question))
                if s[2]}

    old_signals = {pr: signals(cards) for pr, cards in old.items()}
    scored = []
    for new_pr, new_cards in new.items():
        for old_pr, old_cards in old.items():
            if new_pr.split("#")[0] != old_pr.split("#")[0]:
                continue
            matched = sum(1 for c in new_cards if signals([c]) & old_signals[old_pr])
            smaller, larger = sorted((len(new_cards), len(old_cards)))
            if not matched or 2 * matched < smaller:
                continue
            title = _ratio(new_cards[0].title, old_cards[0].title)
            if title >= SIMILAR_TITLE or 2 * matched >= larger:
                scored.append((-matched, -title, new_pr, old_pr))
    mapping: dict[str, str] = {}
    for _, _, new_pr, old_pr in sorted(scored):
        if new_pr not in mapping and old_pr not in mapping.values():
            mapping[new_pr] = old_pr
    return mapping


WORD = st.sampled_from(["", "a", "b", "c", "d"])
CARD = st.tuples(st.sampled_from(["why", "how"]), WORD, WORD, WORD)


def prs(prefix: str) -> st.SearchStrategy[dict[str, list[Sides]]]:
    pr = st.tuples(st.sampled_from(["o/r", "o/s"]), st.integers(0, 5), st.sampled_from(["标题一", "标题二", "题"]),
                   st.lists(CARD, min_size=1, max_size=4))
    return st.lists(pr, max_size=6).map(lambda items: {
        f"{repo}#{prefix}{n}": [Sides(f"{repo}#{prefix}{n}", key, kind, q, a, title) for kind, key, q, a in cards]
        for repo, n, title, cards in items})


@settings(max_examples=300, deadline=None)
@given(prs("n"), prs("o"))
def test_indexed_pairing_is_the_every_pair_rule(new: dict[str, list[Sides]], old: dict[str, list[Sides]]) -> None:
    assert pair_prs(new, old) == pair_prs_every_pair(new, old)


def test_unrelated_prs_are_never_compared(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """500 new and 500 removed PRs with nothing in common: no pair is scored (it used to be 250,000)."""
    compared = []
    monkeypatch.setattr(identity, "_ratio", lambda a, b: compared.append((a, b)) or 0.0)

    def side(pr: str, i: int) -> list[Sides]:
        return [Sides(pr, f"why:{pr}:{i}", "why", f"q{pr}", f"a{pr}", f"title {pr}")]

    new = {f"o/r#n{i}": side(f"o/r#n{i}", i) for i in range(500)}
    old = {f"o/r#o{i}": side(f"o/r#o{i}", i) for i in range(500)}
    assert pair_prs(new, old) == {}
    assert compared == []
