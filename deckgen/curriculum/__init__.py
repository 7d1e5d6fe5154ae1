"""Reviews and cards in, with the taxonomy and glossary; topic tags, glossary cards and the study order out.

:mod:`.topics` reads ``topics.toml`` and matches PRs to topics; :mod:`.glossary` reads
``glossary.toml`` and makes term cards; :mod:`.curriculum` applies both to a corpus;
:mod:`.order` gives new cards their positions.
"""
