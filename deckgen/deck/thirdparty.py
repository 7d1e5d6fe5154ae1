"""genanki, imported without the two modules it loads but deckgen never uses.

``genanki.model`` imports ``yaml``, for note types given as YAML text (deckgen
gives lists), and the ``cached_property`` package, which imports ``asyncio``,
for cached properties that are coroutines (genanki has none).  Together they
were 40 ms of every command that writes a deck: a fifth of a rebuild with no
change.  While genanki loads, each is a stand-in that imports the real module
the moment anything is looked up in it; the one thing ``cached_property`` looks
up, ``asyncio.iscoroutinefunction``, is ``inspect``'s (asyncio's own also
accepts functions marked by its long-removed ``@coroutine`` decorator).  A
module imported before is used as it is, and any import after gets the real one.
(jieba is imported its own way, and only when needed: see :mod:`deckgen.text.segment`.)

Modules import genanki from here: ``from .thirdparty import genanki``.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

UNUSED_BY_DECKGEN = ("asyncio", "yaml")


class _StandIn(ModuleType):
    """Stands for a module not imported yet: the first attribute looked up imports it."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


def _import_genanki() -> ModuleType:
    if "genanki" in sys.modules:
        return sys.modules["genanki"]
    stand_ins = {name: _StandIn(name) for name in UNUSED_BY_DECKGEN if name not in sys.modules}
    if "asyncio" in stand_ins:
        setattr(stand_ins["asyncio"], "iscoroutinefunction", inspect.iscoroutinefunction)
    sys.modules.update(stand_ins)
    try:
        import genanki
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
    return genanki


if TYPE_CHECKING:
    import genanki as genanki
else:
    genanki = _import_genanki()
