"""Read the TOML data files that live beside the seeds (part of the parse stage).

``topics.toml`` and ``glossary.toml`` are edited by users, so every problem
is reported as a :class:`DataFileError` naming the file and line.  tomllib
reports syntax errors with a line and column in its message; semantic
problems (a missing key in the third ``[[topic]]``) are located by counting
the array-of-tables headers in the text.
"""

from __future__ import annotations

import marshal
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataFileError
from ..files.atomic import write_cache_file
from ..files.cachedir import private_cache_dir, sealed, unsealed
from ..types import short_hash
from .parse import read_seed_text

_AT_LINE_RE = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_AT_END_RE = re.compile(r"\s*\(at end of document\)\s*$")


@dataclass(frozen=True)
class DataFile:
    """A parsed TOML file and what is needed to point at its lines in messages."""

    path: Path
    data: Mapping[str, Any]
    text: str

    def table_lines(self, array: str) -> list[int]:
        """Lines of every ``[[array]]`` header, in order (one pass: the built-in glossary has hundreds)."""
        header = re.compile(rf"^[ \t]*\[\[[ \t]*{re.escape(array)}[ \t]*\]\]", re.M)
        starts = [m.start() for m in header.finditer(self.text)]
        lines, number, position = [], 1, 0
        for start in starts:
            number += self.text.count("\n", position, start)
            position = start
            lines.append(number)
        return lines

    def header_line(self, table: str) -> int | None:
        """Line of the ``[table]`` header, if the file uses one."""
        header = re.compile(rf"^\s*\[\s*{re.escape(table)}\s*\]")
        for number, line in enumerate(self.text.split("\n"), start=1):
            if header.match(line):
                return number
        return None

    def boolean(self, key: str, default: bool) -> bool:
        """Top-level ``key = true/false``; *default* when it is missing, a clear error when it is not a boolean."""
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.error(self.key_line(key), f"{key!r} must be true or false", f"write {key} = false (or true)")
        return value

    def key_line(self, key: str) -> int | None:
        """Line where top-level *key* is assigned, if it is written as ``key = …``."""
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for number, line in enumerate(self.text.split("\n"), start=1):
            if pattern.match(line):
                return number
        return None

    def error(self, line: int | None, problem: str, fix: str = "") -> DataFileError:
        return DataFileError(self.path, line, problem, fix)

    def only_keys(self, table: Mapping[str, Any], allowed: frozenset[str], line: int | None, what: str, fix: str) -> None:
        """An error for the first key of *table* not in *allowed* (a typo such as ``keyword`` for ``keywords``)."""
        unknown = sorted(set(table) - allowed)
        if unknown:
            at = self.key_line(unknown[0]) if line is None else line
            raise self.error(at, f"unknown key {unknown[0]!r} in {what}", fix)

    def unique(self, seen: dict[str, int | None], key: str, line: int | None, what: str, fix: str) -> None:
        """Record *key* as defined on *line*; an error if it was defined before."""
        if key in seen:
            first = f" (first defined on line {seen[key]})" if seen[key] else ""
            raise self.error(line, f"duplicate {what}{first}", fix)
        seen[key] = line


def read_toml(path: Path) -> DataFile:
    """Parse the TOML file at *path*; a :class:`DataFileError` with file and line if it is not valid TOML."""
    text = read_seed_text(Path(path))
    kept = _kept_path(Path(path))
    data = _read_kept(kept, text) if kept else None
    if data is not None:
        return DataFile(Path(path), data, text)
    import tomllib  # only when a file is parsed: what one parsed to is kept (below), and tomllib compiles patterns

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _AT_LINE_RE.search(message)
        line: int | None
        if match:
            line, column = int(match.group(1)), int(match.group(2))
            problem = f"invalid TOML: {message[: match.start()]} (column {column})"
        else:
            line = text.count("\n") + 1 if _AT_END_RE.search(message) else None
            problem = f"invalid TOML: {_AT_END_RE.sub('', message)}"
        raise DataFileError(path, line, problem, "fix the TOML syntax; see https://toml.io") from None
    if kept:
        _keep(kept, text, data)
    return DataFile(Path(path), data, text)


# The built-in glossary and taxonomy are read by every build, a rebuild with nothing new too, and parsing their
# TOML was a tenth of such a rebuild: what a file parsed to is kept in the private cache folder, in marshal's form
# (30 times faster to load), one file per data file (named by its path) holding the text it was parsed from.  Like
# jieba's dictionary it is set-up, not a build's cache: --no-cache does not turn it off.
_MAGIC = f"deckgen-toml 1 {sys.version_info[0]}.{sys.version_info[1]}\n".encode()  # marshal's form is per Python


def _kept_path(path: Path) -> Path | None:
    folder = private_cache_dir()
    if folder is None:
        return None
    return folder / f"deckgen-toml.{short_hash(str(path.resolve()), 16)}.marshal"


def _read_kept(kept: Path, text: str) -> dict[str, Any] | None:
    try:
        payload = unsealed(_MAGIC, kept.read_bytes())
        found = marshal.loads(payload) if payload is not None else None
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if not (isinstance(found, tuple) and len(found) == 2 and found[0] == text and isinstance(found[1], dict)):
        return None
    return found[1]


def _keep(kept: Path, text: str, data: dict[str, Any]) -> None:
    try:
        payload = marshal.dumps((text, data))
    except ValueError:  # TOML dates and times have no marshal form: such a file is parsed every time
        return
    write_cache_file(kept, sealed(_MAGIC, payload))


def find_beside(sources: Iterable[Path], name: str) -> Path | None:
    """The data file *name* beside the seeds: in a seed folder, or in a seed file's folder; first found wins."""
    for source in sources:
        source = Path(source)
        folder = source if source.is_dir() else source.parent
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def string_list(table: Mapping[str, Any], key: str, where: DataFile, line: int | None) -> tuple[str, ...]:
    """``table[key]`` as a tuple of non-empty strings (missing → empty); a clear error otherwise."""
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise where.error(line, f"{key!r} must be a list of non-empty strings", f'for example {key} = ["a", "b"]')
    return tuple(v.strip() for v in value)


def required_string(table: Mapping[str, Any], key: str, where: DataFile, line: int | None, what: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise where.error(line, f"{what} has no {key!r}", f'add {key} = "…"')
    return value.strip()


def tables(where: DataFile, array: str) -> list[tuple[Mapping[str, Any], int | None]]:
    """The ``[[array]]`` tables of a file with their header lines; an error if *array* is not a list of tables."""
    value = where.data.get(array, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise where.error(where.key_line(array), f"{array!r} must be an array of tables", f"write each one under a [[{array}]] header")
    lines = where.table_lines(array)
    return [(table, lines[index] if index < len(lines) else None) for index, table in enumerate(value)]
