"""Anki desktop running the real AnkiConnect add-on under Xvfb, for the push tests (tests/test_push.py).

:class:`AnkiDesktop` makes a throw-away Anki base folder with one profile (``prepare.py``), copies the
AnkiConnect add-on into it with the config a test asks for (its own free port always), and starts and
stops Anki (aqt, under ``xvfb-run``, in a process group of its own) as often as the test needs: the
collection stays between runs, and while Anki is stopped the test reads and changes it through Anki's
own backend, as a learner studying would.  :class:`CutOff` stands between deckgen and AnkiConnect and
makes Anki quit at a chosen point of a push.

The add-on is AnkiConnect as published (``../shared/vendor/anki-connect/`` beside the checkout, see its
VENDOR.md; :data:`ADDON_ENV` names another copy); it is a test fixture only, never part of deckgen.
Where Anki desktop or the add-on is missing the tests are skipped, or fail with DECKGEN_REQUIRE_DESKTOP.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.desktop.reviewer import PREPARE, PROFILE, REQUIRE_ENV, anki_command, anki_env, kill_group, require_desktop

ROOT = Path(__file__).resolve().parents[2]
ADDON_ENV = "DECKGEN_ANKICONNECT_ADDON"
VENDORED = ROOT.parent / "shared" / "vendor" / "anki-connect"
STARTUP_S = 90.0
"""How long Anki may take to start answering (a deadline for a hung start, not a measurement)."""


def addon_source() -> Path:
    """The AnkiConnect add-on folder (``plugin/`` of the vendored copy); skip or fail the test where there is none."""
    require_desktop()
    named = os.environ.get(ADDON_ENV)
    folder = Path(named) if named else VENDORED / "plugin"
    if not (folder / "__init__.py").is_file():
        reason = (f"the AnkiConnect add-on is not at {folder} (CI has ../shared/vendor/anki-connect beside the "
                  f"checkout; set {ADDON_ENV} to another copy's plugin folder)")
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{REQUIRE_ENV} is set, but {reason}")
        pytest.skip(reason)
    return folder


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def post(url: str, action: str, **params: Any) -> Any:
    """One AnkiConnect action, for the harness itself (deckgen has its own client)."""
    body = json.dumps({"action": action, "version": 6, "params": params}).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=60) as answer:
        return json.loads(answer.read())


class AnkiDesktop:
    """A throw-away Anki profile with AnkiConnect listening at :attr:`url`; start and stop at will.

    *config* overrides AnkiConnect's config (``apiKey``, ``apiVersion``, …).  The base folder is a new temporary
    folder named *prefix*… (outside pytest's tmp: a long path would be too long for Anki's sockets).  Use as a
    context manager: Anki is stopped, and the base folder removed, at the end.
    """

    def __init__(self, prefix: str = "deckgen-anki-push-", **config: Any) -> None:
        source = addon_source()  # skips or fails the test before anything is made
        self.base = base = Path(tempfile.mkdtemp(prefix=prefix))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = base / "anki.log"
        prepared = subprocess.run([sys.executable, str(PREPARE), str(base)], capture_output=True, text=True,
                                  timeout=120, cwd=str(base))
        assert prepared.returncode == 0, f"preparing the Anki profile failed:\n{prepared.stderr[-3000:]}"
        self.collection.parent.mkdir(exist_ok=True)  # so that a test can fill the collection before Anki first runs
        addon = base / "addons21" / "AnkiConnect"  # the folder name the add-on expects (not "plugin")
        shutil.copytree(source, addon, ignore=shutil.ignore_patterns("__pycache__"))
        settings = json.loads((addon / "config.json").read_text(encoding="utf-8"))
        settings.update(webBindPort=self.port, **config)
        (addon / "config.json").write_text(json.dumps(settings, indent=1), encoding="utf-8")

    @property
    def collection(self) -> Path:
        return self.base / PROFILE / "collection.anki2"

    def start(self) -> None:
        """Start Anki and wait until AnkiConnect answers."""
        assert self.proc is None, "Anki is running already"
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(anki_command(self.base), env=anki_env(self.base), stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                         cwd=str(self.base))
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                post(self.url, "version")
                return
            except (urllib.error.URLError, OSError, ValueError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    tail = self.log.read_text(encoding="utf-8", errors="replace")[-3000:]
                    self.kill()
                    pytest.fail(f"Anki with AnkiConnect did not start answering at {self.url}; its log ends:\n{tail}")
                time.sleep(0.2)

    def stop(self) -> None:
        """Quit Anki as a learner does, so that it closes the collection; killed if it does not end.

        Anki quits on SIGTERM as on File → Exit (AnkiConnect's guiExitAnki loses its timer and never does).
        Only Anki's own process gets it: Xvfb, in the same group, must outlive Anki's closing.
        """
        if self.proc is None:
            return
        for pid in _anki_processes(self.proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=60)  # xvfb-run ends when Anki has
        self.kill()

    def kill(self) -> None:
        """End Anki at once (and Xvfb with it), as a crash or a power cut would."""
        if self.proc is not None:
            kill_group(self.proc)
            self.proc = None

    def __enter__(self) -> AnkiDesktop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)


class CutOff:
    """A stand-in for AnkiConnect's address that passes requests on to *anki* until the *after*-th
    ``importPackage`` has been answered, then kills Anki and stops listening: Anki quits midway through a push.
    """

    def __init__(self, anki: AnkiDesktop, after: int) -> None:
        self.anki = anki
        self.left = after
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        cut = self

        class Forward(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with urllib.request.urlopen(urllib.request.Request(cut.anki.url, data=body), timeout=600) as answer:
                    reply = answer.read()
                if json.loads(body).get("action") == "importPackage":
                    cut.left -= 1
                    if cut.left == 0:  # Anki has imported the package and quits; whoever asks next finds nobody
                        cut.anki.kill()
                        cut.server.shutdown()  # this handler runs in a thread of its own, not serve_forever's
                        cut.server.server_close()
                self.send_response(200)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        return Forward

    def __enter__(self) -> CutOff:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def _anki_processes(group: int) -> list[int]:
    """The Anki process(es) in process group *group* (the Python running ``aqt.run()``), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # ended meanwhile
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (name)": state, ppid, pgrp, …
        if int(fields[2]) == group and b"aqt.run()" in command:
            found.append(int(entry.name))
    return found
