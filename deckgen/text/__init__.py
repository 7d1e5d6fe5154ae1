"""Review text in; the pieces extraction works on out.

:mod:`.units` cuts a review into enumeration items and sentences; :mod:`.segment`
puts jieba behind a small interface that keeps code and English terms whole
(:mod:`.jiebadict` keeps jieba's dictionary in a form that loads fast);
:mod:`.clauses` finds clause-aware token spans; :mod:`.matching` matches keywords
and identifiers; :mod:`.markup` turns corpus text into escaped card HTML.
"""
