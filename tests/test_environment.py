"""Unfriendly environments: builds still work, stdout carries only the summary, no cache in shared folders.

Each test runs a real `python -m deckgen build` with no terminal (new session, stdin
from /dev/null, pipes for output) and a minimal environment.  Run as root, the child
gives up the capabilities that let root ignore permission bits, so that read-only
folders really are read-only to it.
"""

from __future__ import annotations

import ctypes
import marshal
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deckgen import BuildOptions, build_deck
from deckgen.files.cachedir import kept_file
from tests.conftest import FIXTURES, NOBODY, as_root

EPOCH = "1700000000"
SEED = FIXTURES / "good.txt"
JIEBA_NOISE = re.compile(r"Traceback|Building prefix dict|Dump cache|Loading model|Prefix dict")


_PR_CAPBSET_DROP = 24
# CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER: what lets root read and write regardless of modes.
_ROOT_POWERS = (1, 2, 3)


def _without_root_powers() -> None:
    """In the child before exec: drop root's permission-bypassing capabilities from the bounding set.

    (Dropping to another user is no option: this Python may live in root's private home.)
    """
    if as_root():
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in _ROOT_POWERS:
            if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def folder(path: Path, mode: int = 0o755, mine: bool = True) -> Path:
    """A folder of the child's user (*mine*) or of another user, with *mode*."""
    path.mkdir(parents=True, exist_ok=True)
    if not mine:
        os.chown(path, NOBODY, NOBODY)
    path.chmod(mode)
    return path


def listing(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*")) if path.exists() else ["<missing>"]


class Build:
    """One `deckgen build` of tests/fixtures/good.txt in *root*, without a terminal or root's powers."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.seeds = folder(root / "seeds")
        shutil.copy(SEED, self.seeds / SEED.name)
        self.out = folder(root / "out") / "deck.apkg"
        self.work = folder(root / "work")

    def run(self, **env: str) -> subprocess.CompletedProcess[str]:
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SOURCE_DATE_EPOCH": EPOCH, **env}
        return subprocess.run([sys.executable, "-m", "deckgen", "build", str(self.seeds), "-o", str(self.out)],
                              cwd=self.work, env=environment, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, encoding="utf-8", start_new_session=True, preexec_fn=_without_root_powers,
                              timeout=120)

    def check(self, result: subprocess.CompletedProcess[str], reference: Path) -> None:
        """Exit 0; stdout is the summary line alone; stderr only deckgen's warnings; the deck is the reference deck."""
        assert result.returncode == 0, result.stderr
        assert re.fullmatch(rf"Built 2 PRs, \d+ cards from 1 seed file\(s\) → {re.escape(str(self.out))}\n",
                            result.stdout), result.stdout
        assert not JIEBA_NOISE.search(result.stderr), result.stderr
        assert all(line.startswith("Warning: ") for line in result.stderr.splitlines()), result.stderr
        assert self.out.read_bytes() == reference.read_bytes()
        assert listing(self.work) == []


@pytest.fixture(scope="module", name="reference")
def _reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The deck an ordinary build makes from the same seed at the same time (built in this process)."""
    out = tmp_path_factory.mktemp("reference") / "deck.apkg"
    build_deck([SEED], out, options=BuildOptions(timestamp=int(EPOCH)))
    return out


@pytest.fixture(name="build")
def _build(tmp_path: Path) -> Build:
    return Build(tmp_path)


def poisoned_cache(folder: Path) -> list[str]:
    """Prefix dictionaries planted in *folder* that, if loaded, break the build; their names.

    deckgen's own kept form (its frequencies total less than 0: the build fails on a logarithm), and jieba's own cache
    file (every character of the seed gets a non-number frequency), which deckgen never reads.
    """
    from deckgen.text.prefixdict import dictionary_path, to_bytes
    from deckgen.text.segment import get_segmenter

    kept = kept_file(dictionary_path(get_segmenter()._tk), folder, "deckgen-prefixdict")
    assert kept is not None
    kept.write_bytes(to_bytes({char: 1 for char in SEED.read_text(encoding="utf-8") if not char.isspace()}, -2**62) or b"")
    with (folder / "jieba.cache").open("wb") as handle:
        marshal.dump(({char: "planted" for char in SEED.read_text(encoding="utf-8")}, 1), handle)
    return sorted([kept.name, "jieba.cache"])


def test_writable_home_gets_a_private_cache(build: Build, reference: Path) -> None:
    """Control for the tests below: with a normal HOME jieba's dictionary is kept in ~/.cache/deckgen, mode 0700."""
    home = folder(build.root / "home")
    build.check(build.run(HOME=str(home)), reference)
    cache = home / ".cache" / "deckgen"
    assert len(list(cache.glob("deckgen-prefixdict.*.marshal"))) == 1
    assert not (cache / "jieba.cache").exists()  # jieba's own form of it is neither read nor written
    assert cache.stat().st_mode & 0o777 == 0o700


def test_a_poisoned_cache_in_a_private_folder_is_loaded(build: Build) -> None:
    """Control for the shared-folder tests: deckgen does load the planted file from a folder it trusts."""
    cache = folder(build.root / "cache", 0o700)
    poisoned_cache(cache)
    result = build.run(DECKGEN_CACHE_DIR=str(cache))
    assert result.returncode != 0 and "math domain error" in result.stderr


def test_read_only_home(build: Build, reference: Path) -> None:
    home = folder(build.root / "home", 0o555)
    build.check(build.run(HOME=str(home)), reference)
    assert listing(home) == []


@pytest.mark.parametrize("home", ["no-such-home", ""], ids=["missing", "empty"])
def test_missing_or_empty_home(build: Build, reference: Path, home: str) -> None:
    """A HOME that does not exist is not created; an empty one does not put a cache in the current folder."""
    path = build.root / home if home else ""
    build.check(build.run(HOME=str(path)), reference)
    assert not (build.root / "no-such-home").exists()


def test_read_only_cache_folder(build: Build, reference: Path) -> None:
    cache = folder(build.root / "cache", 0o555)
    build.check(build.run(DECKGEN_CACHE_DIR=str(cache)), reference)
    assert listing(cache) == []


def test_world_writable_cache_folder_is_neither_read_nor_written(build: Build, reference: Path) -> None:
    """jieba marshal-loads its cache: one planted in a shared folder must not be used, and nothing is written there."""
    shared = folder(build.root / "shared", 0o1777)
    planted = poisoned_cache(shared)
    build.check(build.run(DECKGEN_CACHE_DIR=str(shared)), reference)
    assert listing(shared) == planted


@pytest.mark.skipif(not as_root(), reason="needs a folder owned by another user")
def test_cache_folder_owned_by_another_user_is_not_used(build: Build, reference: Path) -> None:
    """$XDG_CACHE_HOME on a shared disk where someone else created deckgen/ first: not trusted."""
    shared = folder(build.root / "xdg", 0o1777)
    theirs = folder(shared / "deckgen", 0o755, mine=False)
    planted = poisoned_cache(theirs)
    build.check(build.run(XDG_CACHE_HOME=str(shared)), reference)
    assert listing(shared) == ["deckgen", *(f"deckgen/{name}" for name in planted)]


@pytest.mark.parametrize("state", ["read-only", "missing"])
def test_unwritable_tmpdir(build: Build, reference: Path, state: str) -> None:
    """No private cache and TMPDIR unusable: still a build, and no fallback into a temporary folder."""
    tmpdir = folder(build.root / "tmp", 0o555) if state == "read-only" else build.root / "tmp"
    home = folder(build.root / "home", 0o555)
    build.check(build.run(HOME=str(home), TMPDIR=str(tmpdir)), reference)
    assert listing(tmpdir) == ([] if state == "read-only" else ["<missing>"])


@pytest.mark.parametrize("locale", [{"LANG": "C"}, {"LC_ALL": "C"}, {"LC_ALL": "C", "PYTHONUTF8": "0"},
                                    {"PYTHONIOENCODING": "ascii"}],
                         ids=["LANG=C", "LC_ALL=C", "LC_ALL=C-no-utf8-mode", "ascii-stdout"])
def test_c_locale_and_no_terminal(build: Build, reference: Path, locale: dict[str, str]) -> None:
    """Cron-like: no terminal, no TERM, a C locale; the summary (with its →) still prints, nothing else on stdout."""
    cache = folder(build.root / "cache", 0o700)
    build.check(build.run(DECKGEN_CACHE_DIR=str(cache), **locale), reference)
