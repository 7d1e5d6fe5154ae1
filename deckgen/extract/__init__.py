"""An entry in; a :class:`~deckgen.types.Review` out: its reading verdict, identifiers and design decisions as facts.

:mod:`.relations` matches connectives on tokens (X 而非 Y, X 以避免 Y, 通过 X 实现 Y …);
:mod:`.extract` finds the decisions of one review; :mod:`.findings` says what a review lacks.
"""
