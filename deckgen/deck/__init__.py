"""Cards in; Anki notes, ``.apkg`` packages and the lock file out.

:mod:`.notes` makes an entry's notes (the whole card-making path for one entry, as
one pure function) and renders a card's fields; :mod:`.notetypes` holds the two note
types; :mod:`.lock` and :mod:`.identity` keep every note's GUID and dates across
rebuilds; :mod:`.package` and :mod:`.collection` write the package;
:mod:`.topicdecks` selects and describes full and topic decks; :mod:`.render` renders
a card as Anki does.  The only stage that imports genanki (through :mod:`.thirdparty`).
"""
