"""How AnkiConnect's answers, and the lack of one, reach the user: one line each, saying what to do.

The real add-on is tests/test_push.py's; here a small server answers as other programs, and older or busy
AnkiConnects, do.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from deckgen.push.client import AnkiConnect, AnkiRefused, AnkiUnreachable
from tests.desktop.ankiconnect import free_port


@pytest.fixture(name="serve")
def _serve() -> Iterator[object]:
    """``serve(status, body)``: the URL of a server answering every request so, and the requests it got."""
    servers: list[ThreadingHTTPServer] = []

    def serve(status: int, body: bytes, seen: list[dict[str, object]] | None = None) -> str:
        class Answer(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                request = self.rfile.read(int(self.headers["Content-Length"]))
                if seen is not None:
                    seen.append(json.loads(request))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def answer(result: object = None, error: str | None = None) -> bytes:
    return json.dumps({"result": result, "error": error}).encode()


def test_nothing_listening_names_the_url_and_the_add_on() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(AnkiUnreachable) as caught:
        AnkiConnect(url).version()
    assert str(caught.value).startswith(f"cannot reach AnkiConnect at {url} (")
    assert str(caught.value).endswith("): start Anki; if it is running, install the AnkiConnect add-on (Tools → "
                                      "Add-ons → Get Add-ons, code 2055492159) and restart Anki")


@pytest.mark.parametrize(("status", "body", "message"), [
    (404, b"<h1>Not Found</h1>", "{url} answered HTTP 404, not as AnkiConnect does: check --url (AnkiConnect "
                                 "listens on http://127.0.0.1:8765 unless its config says otherwise)"),
    (200, b"<html>a web server</html>", "{url} answered, but not with AnkiConnect's JSON: check --url"),
    (200, b"4", "AnkiConnect at {url} speaks API version 4; deckgen needs 6 or newer: update the add-on (Tools → "
                "Add-ons → AnkiConnect → Check for Updates) and restart Anki"),
    (200, answer(error="collection is not available"),
     "Anki at {url} has no collection open: open your profile in Anki, then push again"),
])
def test_an_answer_that_is_not_a_usable_ankiconnects(serve, status: int, body: bytes, message: str) -> None:  # type: ignore[no-untyped-def]
    url = serve(status, body)
    with pytest.raises((AnkiUnreachable, AnkiRefused)) as caught:
        AnkiConnect(url).version()
    assert str(caught.value) == message.format(url=url)


def test_a_failed_action_is_named_with_ankis_words_on_one_line(serve) -> None:  # type: ignore[no-untyped-def]
    url = serve(200, answer(error="Traceback (most recent call last):\n  File …\nException: deck was not found"))
    with pytest.raises(AnkiRefused) as caught:
        AnkiConnect(url).call("exportPackage", deck="x", path="/tmp/x.apkg")
    assert str(caught.value) == (f"AnkiConnect at {url} failed to run 'exportPackage': Traceback (most recent call "
                                 "last): File … Exception: deck was not found")


def test_requests_carry_the_key_and_multi_runs_each_action_at_version_6(serve) -> None:  # type: ignore[no-untyped-def]
    seen: list[dict[str, object]] = []
    url = serve(200, answer([{"result": 1, "error": None}, {"result": ["a"], "error": None}]), seen)
    assert AnkiConnect(url, "sesame").multi([("one", {}), ("two", {"x": "中文"})]) == [1, ["a"]]
    assert seen == [{"action": "multi", "version": 6, "key": "sesame", "params": {"actions": [
        {"action": "one", "version": 6, "params": {}}, {"action": "two", "version": 6, "params": {"x": "中文"}}]}}]
