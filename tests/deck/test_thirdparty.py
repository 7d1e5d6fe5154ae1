"""genanki loads without asyncio and yaml, and works as before: each check in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import SEEDS


def run_python(code: str, tmp_path: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={"DECKGEN_CACHE_DIR": str(tmp_path / "cache"), "PATH": ""}, check=True)
    return out.stdout.split()


def test_building_a_deck_imports_neither_asyncio_nor_yaml(tmp_path: Path) -> None:
    code = f"""
import sys
from pathlib import Path
from deckgen.pipeline import build_deck
report = build_deck([Path({str(SEEDS)!r})], Path("deck.apkg"))
print(report.cards > 0, "asyncio" in sys.modules, "yaml" in sys.modules)
"""
    assert run_python(code, tmp_path) == ["True", "False", "False"]
    assert (tmp_path / "deck.apkg").stat().st_size > 0


def test_a_module_genanki_skipped_is_the_real_one_when_used(tmp_path: Path) -> None:
    code = """
import sys
from deckgen.deck.thirdparty import genanki
import genanki.model
print(genanki.model.yaml.safe_load("a: 1") == {"a": 1}, type(sys.modules["yaml"]).__name__)
import yaml
print(yaml is sys.modules["yaml"], hasattr(yaml, "safe_dump"))
"""
    assert run_python(code, tmp_path) == ["True", "module", "True", "True"]


def test_genankis_cached_properties_still_work_and_asyncio_imported_first_is_used(tmp_path: Path) -> None:
    code = """
import asyncio
import cached_property
from deckgen.deck.thirdparty import genanki
from deckgen.deck.notetypes import cloze_model
print(cached_property.asyncio is asyncio, cloze_model()._req == cloze_model()._req)
"""
    assert run_python(code, tmp_path) == ["True", "True"]
    without_asyncio = """
from deckgen.deck.notetypes import qa_model
model = qa_model()
print(model._req is model._req, len(model._req) > 0)
"""
    assert run_python(without_asyncio, tmp_path) == ["True", "True"]
