"""What a command loads: --help and lint never genanki; lint and a rebuild never jieba when the cache has everything,
and a rebuild with nothing new none of the extraction and card stages; only a push the HTTP client.

Behaviour, not timing: each command runs in a fresh interpreter and reports
which of the two heavy libraries (jieba ~0.5 s to start, genanki) it imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SEEDS

HEAVY = ("jieba", "genanki", "pkg_resources",  # jieba imports pkg_resources unless deckgen hides it (0.15 s)
         "urllib.request")  # 80 ms with http.client and email: only a push talks to Anki
CARD_MACHINERY = ("deckgen.extract", "deckgen.cards")
"""The stages that make an entry's review and cards: their patterns and rule tables took 0.2 s of a 0.44 s rebuild."""
REVIEW_WARNINGS = {"deckgen.extract", "deckgen.extract.findings"}
"""All of them a command needs to warn about a review it did not make itself (no verdict, no decision)."""
_PROBE = """
import json, sys
import deckgen.cache.results
deckgen.cache.results.OWN_PROCESS_ENTRIES = int(sys.argv.pop(1))
from deckgen.cli import cli
try:
    code = cli(sys.argv[1:], standalone_mode=False)
except SystemExit as exc:
    code = exc.code
stages = sorted(m for m in sys.modules if m.startswith(%r))
curriculum = sorted(m for m in sys.modules if m.startswith("deckgen.curriculum"))
print(json.dumps({"loaded": [m for m in %r if m in sys.modules], "stages": stages, "curriculum": curriculum,
                  "code": code}))
""" % (CARD_MACHINERY, HEAVY)


def run_probe(args: list[str], cache: Path, cwd: Path, own_process_entries: int = 1000) -> dict[str, list[str]]:
    """What a fresh interpreter that ran ``deckgen ARGS`` had imported: the heavy modules, and modules of the
    extraction and card stages."""
    env = {**os.environ, "DECKGEN_CACHE_DIR": str(cache), "SOURCE_DATE_EPOCH": "1700000000"}
    done = subprocess.run([sys.executable, "-c", _PROBE, str(own_process_entries), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] in (0, None), done.stdout + done.stderr
    return report


def loaded_by(args: list[str], cache: Path, cwd: Path, own_process_entries: int = 1000) -> list[str]:
    """The heavy modules a fresh interpreter imported to run ``deckgen ARGS``."""
    return run_probe(args, cache, cwd, own_process_entries)["loaded"]


@pytest.fixture(name="seeds")
def _seeds(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SEEDS, tmp_path / "seeds"))


@pytest.mark.parametrize("args", [["--help"], ["build", "--help"], ["lint", "--help"], ["push", "--help"],
                                  ["--version"]])
def test_help_loads_neither_jieba_nor_genanki(args: list[str], tmp_path: Path) -> None:
    assert loaded_by(args, tmp_path / "cache", tmp_path) == []


_BARE_PROBE = """
import json, sys
from deckgen.cli import cli
try:
    cli(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m == "deckgen" or m.startswith("deckgen."))))
"""
COMMAND_LINE_ONLY = {"deckgen", "deckgen.cli", "deckgen.options", "deckgen.kinds"}
"""What ``--help`` and ``--version`` may import of deckgen: the package, the CLI, its options and the card kinds
its ``--kind`` choice lists; no stage, and not even the data types (``deckgen.types``, with OpenSSL's hashes)."""


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["build", "--help"], ["preview", "--help"]])
def test_help_and_version_import_no_stage_of_the_library(args: list[str], tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _BARE_PROBE, *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=True)
    assert set(json.loads(done.stdout.strip().splitlines()[-1])) == COMMAND_LINE_ONLY


@pytest.mark.parametrize("args", [["--help"], ["topics", "--help"], ["build", "--help"]])
def test_help_reads_no_taxonomy_or_glossary(args: list[str], tmp_path: Path) -> None:
    """The built-in taxonomy and glossary (defaults/) are read by the curriculum stage, which --help never loads."""
    assert run_probe(args, tmp_path / "cache", tmp_path)["curriculum"] == []


def test_lint_never_loads_genanki_and_with_a_warm_cache_not_jieba(seeds: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert loaded_by(["lint", str(seeds)], cache, tmp_path) == ["jieba"]  # cold: it has to segment
    assert loaded_by(["lint", str(seeds)], cache, tmp_path) == []  # what the first run made is reused


def test_rebuild_with_a_warm_cache_does_not_load_jieba(seeds: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    build = ["build", str(seeds), "-o", str(tmp_path / "out" / "deck.apkg"), "-q"]
    assert loaded_by(build, cache, tmp_path) == ["jieba", "genanki"]
    assert loaded_by(build, cache, tmp_path) == ["genanki"]
    assert loaded_by([*build, "--no-cache"], cache, tmp_path) == ["jieba", "genanki"]


def test_a_big_cold_build_keeps_jieba_out_of_the_main_process(seeds: Path, tmp_path: Path) -> None:
    """Many entries to make (here: from 1 on): a worker makes them, so jieba never weighs on the packaging."""
    build = ["build", str(seeds), "-o", str(tmp_path / "out" / "deck.apkg"), "-q"]
    assert loaded_by(build, tmp_path / "cache", tmp_path, own_process_entries=1) == ["genanki"]


def test_a_rebuild_with_nothing_new_loads_no_extraction_or_card_stage(seeds: Path, tmp_path: Path) -> None:
    """Every entry from the cache: nothing of extract/ or cards/ is imported (their rule tables neither)."""
    cache = tmp_path / "cache"
    build = ["build", str(seeds), "-o", str(tmp_path / "out" / "deck.apkg"), "-q"]
    assert run_probe(build, cache, tmp_path)["stages"] != []  # cold: the cards are made here
    assert run_probe(build, cache, tmp_path)["stages"] == []
    assert set(run_probe(["lint", str(seeds)], cache, tmp_path)["stages"]) <= REVIEW_WARNINGS


def test_a_worker_making_the_cards_keeps_the_card_stages_out_of_the_main_process(seeds: Path, tmp_path: Path) -> None:
    build = ["build", str(seeds), "-o", str(tmp_path / "out" / "deck.apkg"), "-q"]
    assert set(run_probe(build, tmp_path / "cache", tmp_path, own_process_entries=1)["stages"]) <= REVIEW_WARNINGS
