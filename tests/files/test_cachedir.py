"""Where deckgen keeps its cache, and when it keeps none."""

from __future__ import annotations

from pathlib import Path

import pytest

from deckgen.files.cachedir import cache_dir, private_cache_dir


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DECKGEN_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)


def test_order_of_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir() == tmp_path / ".cache" / "deckgen"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "deckgen"
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


def test_relative_xdg_and_home_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """XDG spec: a relative path is invalid; it would put the cache wherever deckgen runs."""
    monkeypatch.setenv("XDG_CACHE_HOME", "cache")
    monkeypatch.setenv("HOME", "relative/home")
    assert cache_dir() is None


def test_private_folder_is_created_0700(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(tmp_path / "a" / "b"))
    assert private_cache_dir() == tmp_path / "a" / "b"
    assert (tmp_path / "a" / "b").stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o775])
def test_folder_others_can_write_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: int) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(shared))
    assert private_cache_dir() is None


def test_a_file_is_no_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(tmp_path / "file"))
    assert private_cache_dir() is None
