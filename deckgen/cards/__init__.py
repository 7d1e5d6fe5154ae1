"""A review in; its cards out: candidate questions and cloze deletions for every fact, then the quality gate.

:mod:`.cards` fills the templates; :mod:`.gate` checks, ranks and selects the cards
(``docs/card-quality.md`` §2).
"""
