"""Replace output files atomically, so an interrupted build never leaves a half-written file.

Every file is first written to a hidden temporary file in the target's own
folder (same file system, so the rename is atomic), flushed and fsynced; only
when all of them are complete are they renamed over their targets, one after
the other, with SIGINT/SIGTERM/SIGHUP held back so that an interrupt cannot
fall between two renames (a new deck with an old lock file).

What an interrupt does:

* SIGINT, SIGTERM, SIGHUP before the renames: the temporary files are removed,
  every target keeps its previous bytes, and the signal then takes its usual
  course (SIGTERM/SIGHUP end the process, SIGINT raises KeyboardInterrupt).
  Signals the process ignores (``nohup``) stay ignored.
* The same signals during the renames: delivered right after them, so the
  new files are all in place before the process stops.
* SIGKILL (or a power cut) cannot be caught: every target still holds either
  its previous or its new bytes (never a mix inside one file), but the
  temporary files stay behind, and a SIGKILL in the microseconds between two
  renames leaves a new deck beside an old lock file (rebuild to fix).  The
  next write into that folder removes temporary files left by processes of
  this host that are no longer running; they are named
  ``.deckgen-tmp-<host>-<pid>-<random><suffix>`` and are always safe to delete.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from ..errors import OutputError
from ..shutdown import STOP_SIGNALS as _SIGNALS
from ..shutdown import signals_held as _signals_blocked

TEMP_PREFIX = ".deckgen-tmp-"
_TEMP_RE = re.compile(re.escape(TEMP_PREFIX) + r"(?P<host>.+)-(?P<pid>\d+)-[0-9a-f]{16}(?:\.[^.]*)?$")
_CAN_MASK = hasattr(signal, "pthread_sigmask")


class _Interrupted(BaseException):
    """A caught SIGINT/SIGTERM/SIGHUP, unwinding the write so its temporary files are removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Staging:
    """New versions of files, written beside their targets and put in place together."""

    def __init__(self) -> None:
        self.staged: list[tuple[Path, Path]] = []  # (temporary file, target), until committed
        self.committed = False
        self.targets: list[Path] = []
        self._host = _host()

    @contextmanager
    def open(self, target: Path) -> Iterator[BinaryIO]:
        """A binary file that becomes *target* when the staging commits."""
        target = _real_target(Path(target))
        if target.is_dir():
            raise OutputError(f"{target}: is a folder; give a file name such as {target / 'deck.apkg'}")
        folder = target.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{folder}: cannot create the output folder ({_reason(exc)}); "
                              "create it or choose another output path") from None
        _sweep(folder, self._host)
        temp = _temp_name(folder, self._host, target.suffix)
        # Registered before it exists: an interrupt right after creation still removes it.
        self.staged.append((temp, target))
        self.targets.append(target)
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except OSError as exc:
            raise OutputError(f"{target}: cannot write in {folder} ({_reason(exc)}); "
                              "make the folder writable or choose another output path") from None
        try:
            with os.fdopen(fd, "wb") as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            with suppress(OSError):  # a new file gets the umask; a replaced one keeps its mode
                os.chmod(temp, stat.S_IMODE(target.stat().st_mode))
        except OSError as exc:
            raise OutputError(f"{target}: writing failed ({_reason(exc)}); the previous file is unchanged") from None

    def write_bytes(self, target: Path, data: bytes) -> None:
        with self.open(target) as handle:
            handle.write(data)

    def commit(self) -> None:
        """Rename every staged file over its target, with interrupts held back until all are in place."""
        with _signals_blocked():
            for temp, target in self.staged:
                try:
                    os.replace(temp, target)
                except OSError as exc:
                    raise OutputError(f"{target}: cannot replace it ({_reason(exc)}); "
                                      "the new version was not written") from None
            for folder in sorted({target.parent for _, target in self.staged}):
                _fsync_folder(folder)
            self.staged.clear()
            self.committed = True

    def discard(self) -> None:
        for temp, _ in self.staged:
            with suppress(OSError):
                temp.unlink(missing_ok=True)
        self.staged.clear()


@contextmanager
def atomic_files() -> Iterator[Staging]:
    """Stage files inside the block; they replace their targets when it ends without an exception.

    ::

        with atomic_files() as staging:
            staging.write_bytes(deck_path, deck_bytes)
            staging.write_bytes(lock_path, lock_bytes)
    """
    staging = Staging()
    with _signals_raise(cleanup=staging.discard) as delivered:
        try:
            yield staging
            staging.commit()
        except BaseException:
            with _signals_blocked():
                staging.discard()
            raise
    if delivered and not staging.committed:  # a caller's own handler ran and returned
        raise OutputError(f"{', '.join(map(str, staging.targets)) or 'output'}: interrupted by "
                          f"{signal.Signals(delivered[0]).name} before the new version was complete; "
                          "the previous file is unchanged, build again")


@contextmanager
def _signals_raise(cleanup: Callable[[], None]) -> Iterator[list[int]]:
    """Turn SIGINT/SIGTERM/SIGHUP into an exception inside the block, so that ``finally`` clauses run.

    On a signal, *cleanup* runs with further signals held back; then the signal
    is raised again under the handler that was in place before, so the process
    ends (or a caller's handler runs) as it would have without deckgen.  Only
    the main thread can install handlers; in other threads the block runs
    unprotected.
    """
    delivered: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield delivered
        return
    previous: dict[int, object] = {}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ()) if _CAN_MASK else None

    def handler(signum: int, frame: object) -> None:
        if _CAN_MASK:  # hold further signals back until the previous handlers are restored
            signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        raise _Interrupted(signum)

    try:
        for signum in _SIGNALS:
            current = signal.getsignal(signum)
            if current is signal.SIG_IGN or current is None:
                continue  # ignored (nohup) stays ignored; None: set outside Python, leave it alone
            previous[signum] = current
            signal.signal(signum, handler)
        yield delivered
    except _Interrupted as exc:
        delivered.append(exc.signum)
        cleanup()
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)  # type: ignore[arg-type]
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if delivered:
        signal.raise_signal(delivered[0])


def _host() -> str:
    if hasattr(os, "uname"):  # the kernel's node name, as gethostname() gives it, without socket (3 ms of every build)
        name = os.uname().nodename
    else:
        import socket

        name = socket.gethostname()
    return re.sub(r"[^A-Za-z0-9.]+", "_", name) or "host"


def _temp_name(folder: Path, host: str, suffix: str) -> Path:
    return folder / f"{TEMP_PREFIX}{host}-{os.getpid()}-{secrets.token_hex(8)}{suffix}"


@contextmanager
def scratch_file(folder: Path, suffix: str) -> Iterator[Path]:
    """A path for a temporary working file in *folder*, removed when the block ends, however it ends.

    Named like the staged files, so one left by a killed process is swept by the
    next write into *folder*.  Use it inside :func:`atomic_files` for signal safety.
    """
    path = _temp_name(folder, _host(), suffix)
    try:
        yield path
    finally:
        with suppress(OSError):
            path.unlink(missing_ok=True)


def _real_target(target: Path) -> Path:
    """Write through a symbolic link (the link stays, the file it names is replaced)."""
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def _sweep(folder: Path, host: str) -> None:
    """Remove temporary files left in *folder* by processes of this host that no longer run (SIGKILL)."""
    if os.name != "posix":
        return  # os.kill(pid, 0) is no liveness test on Windows
    try:
        names = [entry.name for entry in os.scandir(folder) if entry.name.startswith(TEMP_PREFIX)]
    except OSError:
        return
    for name in names:
        match = _TEMP_RE.match(name)
        if not match or match["host"] != host or _running(int(match["pid"])):
            continue
        with suppress(OSError):
            (folder / name).unlink()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _fsync_folder(folder: Path) -> None:
    """Make the renames durable; not every platform or file system can fsync a folder."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def write_cache_file(path: Path, data: bytes) -> bool:
    """Put *data* at *path* whole or not at all: a private (0600) temporary file beside it, renamed over it.

    For caches only (never outputs): no fsync and no signal handling, because a
    cache file cut short by a crash fails its own check and is made again.
    Returns whether the file was written; an error is only a missed chance.
    """
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True
