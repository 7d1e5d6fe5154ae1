"""The kinds of card deckgen makes: their own module, so that the CLI's ``--kind`` choice costs no data types to load
(``deckgen --help`` imports Click and the options only).  :mod:`deckgen.types` gives them with the rest."""

from __future__ import annotations

from enum import Enum


class CardKind(str, Enum):
    DECISION = "decision"  # what a named decision does
    NAME = "name"  # the reverse: which decision does this
    WHY = "why"  # purpose / result
    HOW = "how"  # means / mechanism
    CONTRAST = "contrast"  # chosen instead of what
    CLOZE = "cloze"
    GLOSSARY = "glossary"  # a term of the field → its meaning (deckgen/curriculum/glossary.py)
    HEADLINE = "headline"  # the change the PR summary states, asked from its goal or object
    WHAT = "what"  # a phrase of a decision (what was added, used, moved where), asked in place
