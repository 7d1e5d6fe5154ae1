"""Low-level file helpers that several stages use: atomic output files, the private cache folder, sealed cache files.

Nothing here knows about seeds, cards or decks.
"""
