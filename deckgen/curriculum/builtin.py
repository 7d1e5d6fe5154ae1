"""deckgen's built-in taxonomy and glossary of LLM systems (``defaults/`` beside the package), and laying a
repository's own files over them.

A build reads them when it matches topics or terms, once per process; ``--help``
and the commands that make no deck never do.  A repository's ``topics.toml`` or
``glossary.toml`` extends the built-in data: an entry with the id (term) of a
built-in one replaces it, the others are added before the built-in ones.  A file
that says ``use_builtin = false`` is used on its own.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from ..files.datadir import data_dir
from .glossary import GLOSSARY_FILE, Glossary, layer_glossary, load_glossary
from .origin import Origin
from .topics import TAXONOMY_FILE, Taxonomy, layer_taxonomy, load_taxonomy

BUILTIN_DIR = "defaults"


def builtin_path(name: str) -> Path:
    """The built-in data file *name* (``topics.toml`` or ``glossary.toml``)."""
    return data_dir(BUILTIN_DIR) / name


@lru_cache(maxsize=1)
def builtin_taxonomy() -> Taxonomy:
    return replace(load_taxonomy(builtin_path(TAXONOMY_FILE)), origin=Origin.BUILTIN)


@lru_cache(maxsize=1)
def builtin_glossary() -> Glossary:
    return replace(load_glossary(builtin_path(GLOSSARY_FILE)), origin=Origin.BUILTIN)


def with_builtin_taxonomy(own: Taxonomy | None) -> Taxonomy:
    """The taxonomy a build uses: the built-in one, *own* over it, or *own* alone when it says ``use_builtin = false``."""
    if own is None:
        return builtin_taxonomy()
    return layer_taxonomy(own, builtin_taxonomy()) if own.use_builtin else own


def with_builtin_glossary(own: Glossary | None) -> Glossary:
    """The glossary a build uses: the built-in one, *own* over it, or *own* alone when it says ``use_builtin = false``."""
    if own is None:
        return builtin_glossary()
    return layer_glossary(own, builtin_glossary()) if own.use_builtin else own
