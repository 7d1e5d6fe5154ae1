"""Drive Debian's headless chromium over the DevTools protocol on a pipe (no extra Python package).

``--remote-debugging-pipe`` makes chromium read JSON commands from fd 3 and
write replies and events to fd 4, each message ending in a NUL byte.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

# The flags this machine needs (.library/env/machines/python.md): no sandbox as root, and no
# background networking, which the closed network would refuse over and over.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic",
         "--remote-debugging-pipe", "--window-size=1200,900")


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def launch_browser() -> "Browser":
    """A browser for a test module; skips the tests without chromium, fails them in CI (DECKGEN_REQUIRE_BROWSER)."""
    import pytest

    executable = find_chromium()
    if executable is None:
        if os.environ.get("DECKGEN_REQUIRE_BROWSER"):
            pytest.fail("chromium is not installed (.ci/run installs it with apt-get install chromium)")
        pytest.skip("chromium is not installed (.ci/run installs it with apt-get install chromium)")
    return Browser(executable)


class Browser:
    """One chromium process with one page; events are kept for the test to inspect."""

    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="deckgen-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The child gets the pipes as fds 3 (commands in) and 4 (replies out).
        def wire() -> None:
            commands, replies = os.dup(to_browser_r), os.dup(from_browser_w)  # copies first: either may be 3 or 4
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        # chromium's own log goes to a file: a pipe nobody reads could fill up and stall it.
        self.log = Path(tempfile.mkstemp(prefix="deckgen-chromium-", suffix=".log")[1])
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                # close_fds=False keeps the inheritable fds 3 and 4 that wire() makes; Python's own
                # fds are not inheritable (PEP 446), so nothing else leaks into chromium.
                close_fds=False, preexec_fn=wire,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its reply; events seen meanwhile go to :attr:`events`."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            self.events.append(self._read())

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", session=True, format="png", captureBeyondViewport=False)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def events_named(self, method: str) -> list[dict[str, Any]]:
        return [e.get("params", {}) for e in self.events if e.get("method") == method]

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], self.timeout)
            chunk = os.read(self._from_browser, 1 << 20) if ready else b""
            if not chunk:
                log = self.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"chromium stopped answering; its log ends:\n{log}")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        self.log.unlink(missing_ok=True)
        shutil.rmtree(self.profile, ignore_errors=True)
