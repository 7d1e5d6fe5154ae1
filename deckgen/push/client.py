"""AnkiConnect, the add-on through which programs change a running Anki: its HTTP and JSON, its failures in words.

Takes a URL and an API key; gives :class:`AnkiConnect`, whose :meth:`~AnkiConnect.call` runs one action and
:meth:`~AnkiConnect.multi` several in one request.  AnkiConnect takes one POST of a JSON object per request
and answers ``{"result": …, "error": …}``; the standard library speaks that (``urllib.request``, ``json``).
Every failure is an :class:`AnkiUnreachable` or an :class:`AnkiRefused` whose message says what to do.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from http.client import HTTPException
from typing import Any

from ..errors import DeckgenError

API_VERSION = 6
"""The AnkiConnect API deckgen speaks (its ``multi``, ``importPackage`` and ``exportPackage`` as documented for 6)."""
ADDON_CODE = "2055492159"
TIMEOUT = 600.0
"""Seconds an answer may take: AnkiConnect answers when Anki has done the work, and importing 10,000 notes
is work.  Anki showing a modal dialog holds every answer back."""
_KEY_REFUSED = "valid api key must be provided"
_NO_COLLECTION = "collection is not available"


class AnkiUnreachable(DeckgenError):
    """Nothing answers at the URL as AnkiConnect does: Anki is not running, the add-on is missing, or it stopped."""


class AnkiRefused(DeckgenError):
    """AnkiConnect answered with an error: a wrong API key, too old a version, an action that failed."""


class AnkiConnect:
    """One running Anki, reached through AnkiConnect at *url*; *key* is its API key, if it has one."""

    def __init__(self, url: str, key: str | None = None, *, timeout: float = TIMEOUT) -> None:
        self.url = url
        self.key = key
        self.timeout = timeout

    def call(self, action: str, **params: Any) -> Any:
        """The result of *action* with *params*; :class:`AnkiRefused` naming the action if it fails."""
        return self._result(action, self._post(self._request(action, params)))

    def multi(self, actions: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        """The results of several actions, run in one request and in order; :class:`AnkiRefused` on the first error.

        AnkiConnect runs all of them whatever fails, so actions that depend on each other go in separate calls.
        """
        if not actions:
            return []
        answers = self.call("multi", actions=[{"action": name, "version": API_VERSION, "params": dict(params)}
                                              for name, params in actions])
        return [self._result(name, answer) for (name, _), answer in zip(actions, answers)]

    def version(self) -> int:
        """The API version AnkiConnect speaks, once the API key is known to be right; refused below 6."""
        answer = self._post(self._request("version", {}))
        # Before version 5 AnkiConnect answered with the bare result, not {"result": …, "error": …}.
        version = answer if isinstance(answer, int) else self._result("version", answer)
        if not isinstance(version, int) or version < API_VERSION:
            raise AnkiRefused(f"AnkiConnect at {self.url} speaks API version {version}; deckgen needs {API_VERSION} or "
                              "newer: update the add-on (Tools → Add-ons → AnkiConnect → Check for Updates) and restart Anki")
        return version

    def _request(self, action: str, params: Mapping[str, Any]) -> bytes:
        body: dict[str, Any] = {"action": action, "version": API_VERSION, "params": dict(params)}
        if self.key is not None:
            body["key"] = self.key
        # UTF-8, not \u escapes: Chinese fields are half the bytes, and AnkiConnect reads a request 1 KiB at a time.
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def _post(self, data: bytes) -> Any:
        request = urllib.request.Request(self.url, data=data, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 (the user's URL)
                body = response.read()
        except urllib.error.HTTPError as exc:
            exc.close()  # it holds the answer's connection open
            raise AnkiUnreachable(f"{self.url} answered HTTP {exc.code}, not as AnkiConnect does: check --url "
                                  f"(AnkiConnect listens on http://127.0.0.1:8765 unless its config says otherwise)") from None
        except (socket.timeout, TimeoutError):
            raise AnkiUnreachable(f"AnkiConnect at {self.url} did not answer within {self.timeout:g} s: close any "
                                  "dialog open in Anki, then push again") from None
        except (urllib.error.URLError, HTTPException, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise AnkiUnreachable(f"cannot reach AnkiConnect at {self.url} ({_words(reason)}): start Anki; if it is "
                                  f"running, install the AnkiConnect add-on (Tools → Add-ons → Get Add-ons, code "
                                  f"{ADDON_CODE}) and restart Anki") from None
        try:
            return json.loads(body)
        except ValueError:
            raise AnkiUnreachable(f"{self.url} answered, but not with AnkiConnect's JSON: check --url") from None

    def _result(self, action: str, answer: Any) -> Any:
        if not isinstance(answer, dict) or set(answer) != {"result", "error"}:
            raise AnkiUnreachable(f"{self.url} answered {action!r}, but not as AnkiConnect {API_VERSION} does: "
                                  "check --url, and update AnkiConnect (Tools → Add-ons → Check for Updates)")
        error = answer["error"]
        if error is None:
            return answer["result"]
        if error == _KEY_REFUSED:
            how = "AnkiConnect's config (Tools → Add-ons → AnkiConnect → Config, \"apiKey\")"
            if self.key is None:
                raise AnkiRefused(f"AnkiConnect at {self.url} wants an API key: pass the key from {how} with "
                                  "--api-key or DECKGEN_ANKICONNECT_KEY")
            raise AnkiRefused(f"AnkiConnect at {self.url} refused the API key: pass the key from {how} with "
                              "--api-key or DECKGEN_ANKICONNECT_KEY")
        if error == _NO_COLLECTION:
            raise AnkiRefused(f"Anki at {self.url} has no collection open: open your profile in Anki, then push again")
        raise AnkiRefused(f"AnkiConnect at {self.url} failed to run {action!r}: {_words(error)}")


def _words(reason: object) -> str:
    """An error as one line of text (a message from Anki may hold a traceback's newlines)."""
    text = " ".join(str(reason).split())
    return text if len(text) <= 300 else text[:299] + "…"
