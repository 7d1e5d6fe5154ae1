"""Data files: what a TOML file parsed to is kept in the private cache, and a changed or damaged one is parsed again."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from deckgen.errors import DataFileError
from deckgen.source.datafile import read_toml


@pytest.fixture(name="cache")
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(folder))
    return folder


def _refuse(text: str) -> None:
    raise AssertionError("parsed again")


def test_a_file_read_before_is_not_parsed_again(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "glossary.toml"
    path.write_text('[[term]]\nterm = "KV cache"\nmeaning = "缓存"\n', encoding="utf-8")
    first = read_toml(path)
    assert list(cache.glob("deckgen-toml.*.marshal"))
    monkeypatch.setattr(tomllib, "loads", _refuse)
    again = read_toml(path)
    assert again.data == first.data == {"term": [{"term": "KV cache", "meaning": "缓存"}]}
    assert again.text == first.text


def test_an_edited_file_is_parsed_as_it_is_now(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "topics.toml"
    path.write_text('a = 1\n', encoding="utf-8")
    assert read_toml(path).data == {"a": 1}
    before = path.stat()
    path.write_text('a = 2\n', encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same size and time: only the text tells
    assert read_toml(path).data == {"a": 2}


def test_a_damaged_kept_file_is_ignored_and_a_bad_file_still_names_its_line(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "topics.toml"
    path.write_text('a = 1\n', encoding="utf-8")
    read_toml(path)
    for kept in cache.glob("deckgen-toml.*.marshal"):
        kept.write_bytes(kept.read_bytes()[:-3])
    assert read_toml(path).data == {"a": 1}
    path.write_text('a = 1\nb = \n', encoding="utf-8")
    with pytest.raises(DataFileError) as error:
        read_toml(path)
    assert error.value.line == 2


def test_dates_which_marshal_cannot_keep_are_parsed_every_time(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "topics.toml"
    path.write_text('when = 2026-12-06\n', encoding="utf-8")
    assert str(read_toml(path).data["when"]) == "2026-12-06"
    assert str(read_toml(path).data["when"]) == "2026-12-06"


def test_one_kept_file_per_data_file_however_often_it_changes(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "glossary.toml"
    for value in range(5):
        path.write_text(f"a = {value * 1000}\n", encoding="utf-8")
        assert read_toml(path).data == {"a": value * 1000}
    assert len(list(cache.glob("deckgen-toml.*.marshal"))) == 1


def test_without_a_private_cache_folder_nothing_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # others may write here: deckgen keeps nothing in it
    monkeypatch.setenv("DECKGEN_CACHE_DIR", str(shared))
    path = tmp_path / "topics.toml"
    path.write_text("a = 1\n", encoding="utf-8")
    assert read_toml(path).data == read_toml(path).data == {"a": 1}
    assert list(shared.iterdir()) == []
