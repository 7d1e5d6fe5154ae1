"""Shared fixtures: a CLI runner, small corpora, an isolated cache, and a real Anki collection."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from deckgen import BuildOptions

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEEDS = ROOT / "seeds"


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test touches the real home directory's cache (session-wide: session fixtures build decks too)."""
    saved = {k: os.environ.get(k) for k in ("DECKGEN_CACHE_DIR", "SOURCE_DATE_EPOCH")}
    os.environ["DECKGEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    os.environ.pop("SOURCE_DATE_EPOCH", None)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(name="runner")
def _runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(name="fixtures")
def _fixtures() -> Path:
    return FIXTURES


def write_seed(folder: Path, name: str, text: str) -> Path:
    """Write a seed file (UTF-8) and return its path."""
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def query_apkg(path: Path, sql: str) -> list[tuple]:  # type: ignore[type-arg]
    """The rows of *sql* run on the collection inside an .apkg."""
    with zipfile.ZipFile(path) as archive, archive.open("collection.anki2") as src:
        data = src.read()
    db = path.parent / (path.name + ".read.sqlite")
    db.write_bytes(data)
    try:
        with sqlite3.connect(db) as connection:
            return connection.execute(sql).fetchall()
    finally:
        db.unlink()


def read_apkg(path: Path) -> list[tuple[str, list[str], str, int]]:
    """(guid, fields, tags, mid) of every note in an .apkg, in note-id order."""
    rows = query_apkg(path, "select guid, flds, tags, mid from notes order by id")
    return [(guid, flds.split("\x1f"), tags.strip(), mid) for guid, flds, tags, mid in rows]


class AnkiCollection:
    """A temporary collection driven through Anki's own backend (the `anki` wheel)."""

    def __init__(self, path: Path) -> None:
        from anki.collection import Collection

        self.path = path
        self.col = Collection(str(path))

    def import_apkg(self, package: Path, **options: object):  # type: ignore[no-untyped-def]
        from anki.collection import ImportAnkiPackageOptions, ImportAnkiPackageRequest

        request = ImportAnkiPackageRequest(package_path=str(package), options=ImportAnkiPackageOptions(**options))
        return self.col.import_anki_package(request).log

    def reopen(self) -> None:
        """Reopen, so note types are read fresh (the Python cache can show the pre-import state)."""
        from anki.collection import Collection

        self.col.close()
        self.col = Collection(str(self.path))

    def close(self) -> None:
        self.col.close()


@pytest.fixture(name="anki")
def _anki(tmp_path: Path) -> Iterator[AnkiCollection]:
    collection = AnkiCollection(tmp_path / "collection.anki2")
    try:
        yield collection
    finally:
        collection.close()


@pytest.fixture(scope="session", name="seeds_deck")
def _seeds_deck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The deck built from seeds/, once per test session."""
    from deckgen import build_deck

    out = tmp_path_factory.mktemp("deck") / "seeds.apkg"
    build_deck([SEEDS], out, options=BuildOptions(timestamp=1_700_000_000))
    return out


NOBODY = 65534


def as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@contextmanager
def unprivileged() -> Iterator[None]:
    """Run the block as an ordinary user, so that permission bits apply (root ignores them).

    Only the effective ids change, so the test process gets root back afterwards.
    """
    if not as_root():
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture(name="user_tmp")
def _user_tmp() -> Iterator[Path]:
    """A folder the unprivileged user owns (pytest's own tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="deckgen-test-"))
    folder.chmod(0o755)
    if as_root():
        os.chown(folder, NOBODY, NOBODY)
    try:
        yield folder
    finally:
        for path in (folder, *folder.rglob("*")):
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(folder)
