"""The package's layout is enforced: import-linter's contracts in pyproject.toml hold, and breaking one fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the deckgen package and pyproject.toml found in *root*."""
    command = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(command), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_the_import_contracts_hold() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 kept, 0 broken" in done.stdout


@pytest.fixture(name="copy")
def _copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "deckgen", tmp_path / "deckgen", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("text/units.py", "from ..cards import gate", "Stages are layered"),  # a stage reaching up
    ("cards/gate.py", "from ..cache import resultcache", "Stages are layered"),  # stage code reaching into the cache
    ("pipeline.py", "import click", "Only the command line imports Click"),
    ("report/preview.py", "import click", "Only the command line imports Click"),
    ("curriculum/glossary.py", "import genanki", "Only the deck stage imports genanki"),
    ("cli.py", "import urllib.request", "Only the AnkiConnect client speaks HTTP"),
    ("push/send.py", "from http.client import HTTPConnection", "Only the AnkiConnect client speaks HTTP"),
    ("deck/package.py", "from ..push import client", "Stages are layered"),  # the deck stage reaching up to Anki
    ("push/state.py", "from ..cache import lockmemo", "Stages are layered"),  # the push and the cache are independent
])
def test_an_import_against_the_layout_breaks_a_contract(copy: Path, module: str, line: str, contract: str) -> None:
    with (copy / "deckgen" / module).open("a", encoding="utf-8") as handle:
        handle.write(f"\n{line}  # noqa\n")
    done = lint_imports(copy)
    assert done.returncode != 0
    broken = done.stdout.split("Broken contracts")[-1]
    assert contract in broken, done.stdout


def test_a_module_outside_every_layer_breaks_the_layers_contract(copy: Path) -> None:
    (copy / "deckgen" / "helpers.py").write_text('"""A new top-level module that nobody placed."""\n', encoding="utf-8")
    done = lint_imports(copy)
    assert done.returncode != 0 and "deckgen.helpers" in done.stdout
