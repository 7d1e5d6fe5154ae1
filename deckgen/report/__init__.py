"""What the read-only commands show, on top of :mod:`deckgen.pipeline`; none writes a deck.

:mod:`.lint` lists seed-file problems; :mod:`.stats` counts a deck; :mod:`.preview`
and :mod:`.preview_html` show its cards; :mod:`.plan` says what a rebuild changes for
users (``deckgen plan``, ``build --check``).
"""
