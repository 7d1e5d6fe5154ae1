"""The per-user cache: what reuses earlier builds' work, wrapped around the stages from outside.

The stages never import it.  :mod:`.results` makes each entry's review and cards
(:func:`deckgen.cards.cards.make_result`) here or in worker processes, or reads them
from :mod:`.resultcache`; :mod:`.notecache` does the same for an entry's notes
(:func:`deckgen.deck.notes.entry_notes`), a row per seed file; :mod:`.lockmemo`
remembers the lock files a build wrote; :mod:`.entrystore` stores them all.
"""
