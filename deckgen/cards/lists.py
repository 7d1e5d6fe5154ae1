"""Whether a phrase stands in its clause as one member of a list or a pair (A、B 和 C; A 与 B).

Such a member is guessed from the others, or has no meaning of its own: no cloze gap is made of it, and the
acceptance model reads it as a feature of a candidate.
"""

from __future__ import annotations

import re

_LIST_JOINT = re.compile(r"^\s*(?:、|和|与|及|以及|或|/|\+|→|->)\s*")
_LIST_JOINT_BEFORE = re.compile(r"(?:、|和|与|及|以及|或|/|\+|→|->)\s*$")


def in_a_list(term: str, clause: str) -> bool:
    """Whether *term* stands in *clause* as a member of a list or a pair: next to 、 or joined by 和/与/及 …"""
    at = clause.find(term)
    if at < 0:
        return False
    before, after = clause[:at].rstrip("“「`"), clause[at + len(term):].lstrip("”」`")
    return bool(_LIST_JOINT.match(after) or _LIST_JOINT_BEFORE.search(before))
