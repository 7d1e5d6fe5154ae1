"""A deck into a running Anki, through the AnkiConnect add-on: ``deckgen push``.

:mod:`.client` speaks AnkiConnect's HTTP and JSON; :mod:`.state` reads what the collection holds of
the deck (notes by GUID, with their dates and tags); :mod:`.changes` works out, without side effects,
what must change for the collection to hold the deck; :mod:`.send` sends it.  Between the deck stage
below and the pipeline above: a push writes the same ``.apkg`` and lock file as a build, through the
pipeline.
"""
