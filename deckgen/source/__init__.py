"""Seed files and data files in; entries and findings out.

:mod:`.parse` reads seed files into :class:`~deckgen.types.Entry` values and
:class:`~deckgen.types.SeedFinding` problems (the only stage that reads the seeds);
:mod:`.datafile` reads the TOML data files kept beside them, with file:line errors.
"""
