"""Which PR a seed entry reviews: its number, when the summary or the review says so unambiguously."""

from __future__ import annotations

import re
from functools import lru_cache

# A review names other PRs and issues too (另见 #1234, 下游组件（如 Rust 前端 PR #55842）, Issue #52330), so a
# number is this PR's only where the text says so: a summary ending in "(#4412)", as GitHub titles merged PRs,
# or starting with "#4412" or "PR #4412"; a review saying 本 PR（#4412） or 此 PR #4412.  Not 该 PR, which
# can mean a PR just mentioned.
_TITLE_PR_RE = re.compile(r"[(（]\s*#(\d{1,7})\s*[)）]\s*[。.]?\s*$|^\s*(?:PR\s*)?#(\d{1,7})(?!\d)")
_REVIEW_PR_RE = re.compile(r"(?:本|此)\s*PR\s*[(（]?\s*#(\d{1,7})(?!\d)")


@lru_cache(maxsize=1024)  # the same entry for each of its cards
def own_pr_number(title: str, review: str) -> str | None:
    """The number of the PR a seed entry reviews, when its summary or review names it unambiguously."""
    found = {n for m in _TITLE_PR_RE.finditer(title) for n in m.groups() if n}
    found.update(_REVIEW_PR_RE.findall(review))
    return found.pop() if len(found) == 1 else None
