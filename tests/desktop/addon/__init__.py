"""An Anki add-on for tests/deck/test_reviewer.py: drives Anki's real reviewer and records what it shows.

Inert unless DECKGEN_DESKTOP_JOB names a job file (written by tests/desktop/reviewer.py). Then,
once the profile is open (gui_hooks.profile_did_open), for every window size x theme x card x
side it shows the card through mw.reviewer's own _showQuestion/_showAnswer, waits for the
reviewer's render queue, evaluates measure.js in the reviewer webview, grabs a PNG, and finally
writes the raw results as JSON and exits the process (os._exit, after flushing): the
temporary Anki base folder is thrown away, so nothing needs Anki's close path.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Generator

JOB_PATH = os.environ.get("DECKGEN_DESKTOP_JOB")

if JOB_PATH:
    from aqt import gui_hooks, mw
    from aqt.qt import QApplication, QDialog, QImage, QMessageBox, QTimer, QWebEnginePage
    from aqt.theme import Theme, theme_manager
    from aqt.webview import AnkiWebPage

    HERE = Path(__file__).resolve().parent
    JOB: dict[str, Any] = json.loads(Path(JOB_PATH).read_text(encoding="utf-8"))
    OUT = Path(JOB["out_dir"])
    T0 = time.monotonic()
    DEBUG = bool(os.environ.get("DECKGEN_DESKTOP_DEBUG"))
    STATE: dict[str, Any] = {
        "status": "running", "error": None, "renders": [], "console": [], "dialogs": [],
        "timings": {}, "env": {}, "context": None,
    }
    _LOCK = threading.Lock()

    def _log(msg: str) -> None:
        sys.stdout.write(f"[deckgen-desktop {time.monotonic() - T0:6.2f}s] {msg}\n")
        sys.stdout.flush()

    # -- results -------------------------------------------------------------------------
    def _write(final: bool) -> None:
        with _LOCK:
            STATE["timings"]["total_s"] = round(time.monotonic() - T0, 2)
            data = json.dumps(STATE, ensure_ascii=False, indent=1, default=str)
            tmp = OUT / ".raw.json.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, OUT / "raw.json")

    def _finish(status: str, error: str | None = None, code: int = 0) -> None:
        STATE["status"] = status
        if error:
            STATE["error"] = error
        try:
            _write(final=True)
        finally:
            _log(f"finished: {status}")
            for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
                try:
                    stream.flush()  # Anki replaces sys.stderr with an ErrorHandler without flush()
                except Exception:
                    pass
            # Exit hard: Anki's normal close path syncs, backs up and tears down QtWebEngine,
            # none of which a throw-away profile needs, and all of which can hang headless.
            os._exit(code)

    def _watchdog() -> None:
        _log("add-on watchdog fired")
        _finish("timeout", f"add-on watchdog: not done after {JOB['addon_timeout_s']} s (context {STATE['context']})", 5)

    _wd = threading.Timer(float(JOB["addon_timeout_s"]), _watchdog)
    _wd.daemon = True
    _wd.start()

    # -- JS console capture --------------------------------------------------------------
    # AnkiWebPage.javaScriptConsoleMessage only prints to stdout; there is no hook for it.
    # sip dispatches C++ virtuals to the Python class attribute at call time, so wrapping it
    # on the class catches messages from webviews that already exist (mw.web was built
    # before add-ons load).
    _orig_console = AnkiWebPage.javaScriptConsoleMessage
    _LEVELS = {
        QWebEnginePage.JavaScriptConsoleMessageLevel.InfoMessageLevel: "info",
        QWebEnginePage.JavaScriptConsoleMessageLevel.WarningMessageLevel: "warning",
        QWebEnginePage.JavaScriptConsoleMessageLevel.ErrorMessageLevel: "error",
    }

    def _console(self: AnkiWebPage, level: Any, msg: str | None, line: int, src: str | None) -> None:
        try:
            if self is mw.web.page():
                page = "reviewer"
            elif self is mw.bottomWeb.page():
                page = "bottom"
            elif self is mw.toolbarWeb.page():
                page = "toolbar"
            else:
                page = "other"
            STATE["console"].append({
                "level": _LEVELS.get(level, str(level)), "message": msg, "line": line,
                "source": (src or "")[:200], "page": page, "context": STATE["context"],
                "t": round(time.monotonic() - T0, 3),
            })
        except Exception:  # never break Anki's own handler
            traceback.print_exc()
        return _orig_console(self, level, msg, line, src)

    AnkiWebPage.javaScriptConsoleMessage = _console  # type: ignore[method-assign]

    # -- dialogs nobody should see ---------------------------------------------------------
    def _sweep_dialogs() -> None:
        for w in QApplication.topLevelWidgets():
            if w is mw or not w.isVisible() or not isinstance(w, QDialog):
                continue
            text = w.text() if isinstance(w, QMessageBox) else ""
            STATE["dialogs"].append({"class": type(w).__name__, "title": w.windowTitle(), "text": text,
                                     "context": STATE["context"]})
            _log(f"closing unexpected dialog {type(w).__name__} {w.windowTitle()!r} {text[:200]!r}")
            w.reject()

    # -- a tiny coroutine driver over Qt callbacks --------------------------------------------
    Step = Generator[tuple, Any, None]

    class Driver:
        def __init__(self, gen: Step) -> None:
            self.gen = gen
            self.token = 0

        def resume(self, value: Any = None, token: int | None = None) -> None:
            if token is not None and token != self.token:
                return  # a stale callback (timed out already)
            self.token += 1
            try:
                cmd = self.gen.send(value)
            except StopIteration:
                return
            except Exception:
                _finish("error", traceback.format_exc(), 4)
                return
            tok = self.token
            if cmd[0] == "eval":
                js, timeout_ms = cmd[1], cmd[2] if len(cmd) > 2 else 15000
                if DEBUG:
                    _log(f"eval#{tok} {js[:60]!r}")
                mw.web.evalWithCallback(js, lambda v, t=tok: QTimer.singleShot(0, lambda: self.resume(v, t)))
                QTimer.singleShot(timeout_ms, lambda t=tok: self.resume(TimeoutError(js[:80]), t))
            elif cmd[0] == "sleep":
                QTimer.singleShot(int(cmd[1]), lambda t=tok: self.resume(None, t))
            else:
                raise ValueError(cmd)

    def ev(js: str, timeout_ms: int = 15000) -> Step:
        value = yield ("eval", js, timeout_ms)
        if isinstance(value, TimeoutError):
            raise TimeoutError(f"no answer from the reviewer webview to: {value}")
        return value

    def until(js: str, what: str, timeout_s: float = 20.0) -> Step:
        deadline = time.monotonic() + timeout_s
        while True:
            v = yield ("eval", js, 2000)
            if isinstance(v, TimeoutError):
                _log(f"lost eval while waiting for {what}; retrying")
                v = None
            if v:
                return v
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {what}")
            yield ("sleep", 30)

    SEQ = [0]

    def settle() -> Step:
        """Wait until everything the reviewer queued (_showQuestion/_showAnswer) has run, then
        for fonts and two animation frames, so layout and paint are final."""
        SEQ[0] += 1
        n = SEQ[0]
        yield from ev(f"window.__dgDone = 0; _queueAction(() => {{ window.__dgDone = {n}; }}); true")
        yield from until(f"window.__dgDone === {n}", "the reviewer's render queue")
        yield from until("!document.fonts || document.fonts.status === 'loaded'", "fonts")
        yield from ev(f"window.__dgRaf = 0; requestAnimationFrame(() => requestAnimationFrame(() => {{ window.__dgRaf = {n}; }})); true")
        yield from until(f"window.__dgRaf === {n}", "two animation frames")
        yield ("sleep", JOB.get("paint_delay_ms", 150))  # let the compositor hand Qt the new frame

    # -- screenshots and pixel probes ------------------------------------------------------
    def grab(rel: str, hr: dict | None) -> dict:
        QApplication.processEvents()
        pix = mw.web.grab()
        path = OUT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        pix.save(str(path), "PNG")
        img = pix.toImage().convertToFormat(QImage.Format.Format_RGB32)
        info: dict[str, Any] = {"path": rel, "width": img.width(), "height": img.height(),
                                "distinct_colors_sampled": _distinct(img)}
        if hr:
            info["hr_pixels"] = _hr_pixels(img, hr)
        return info

    def _distinct(img: QImage) -> int:
        """Colours sampled on a coarse grid, and finely at the top, where a short card's only lines are: a grid
        alone misses them (a one-line question drew 2 colours though it rendered)."""
        seen = set()
        for y in range(0, img.height(), max(1, img.height() // 40)):
            for x in range(0, img.width(), max(1, img.width() // 40)):
                seen.add(img.pixel(x, y))
        for y in range(0, min(img.height(), 240), 3):
            for x in range(0, img.width(), 3):
                seen.add(img.pixel(x, y))
        return len(seen)

    def _hr_pixels(img: QImage, hr: dict) -> dict:
        """Count the painted rows of the divider and its horizontal extent, from the pixels."""
        r = hr["rect"]
        dpr = img.devicePixelRatio() or 1.0
        x = int((r["vleft"] + r["width"] / 2) * dpr)
        y0 = int((r["vtop"] - 4) * dpr)
        y1 = int((r["vtop"] + r["height"] + 4) * dpr)
        if not (0 <= x < img.width() and 0 <= y0 and y1 < img.height()):
            return {"error": "divider outside the screenshot"}
        bg = img.pixel(x, y0)
        rows = [(y, img.pixel(x, y)) for y in range(y0, y1 + 1)]
        bands: list[dict] = []
        for y, p in rows:
            if p == bg:
                continue
            color = "#%06x" % (p & 0xFFFFFF)
            if bands and bands[-1]["color"] == color and bands[-1]["last_row"] == y - 1:
                bands[-1]["rows"] += 1
                bands[-1]["last_row"] = y
            else:
                bands.append({"color": color, "rows": 1, "first_row": y, "last_row": y})
        extent = None
        if bands:
            yb = bands[0]["first_row"]
            xs = [xx for xx in range(img.width()) if img.pixel(xx, yb) != bg]
            if xs:
                extent = {"left": xs[0] / dpr, "right": (xs[-1] + 1) / dpr, "width": (xs[-1] + 1 - xs[0]) / dpr}
        return {"background": "#%06x" % (bg & 0xFFFFFF), "bands": bands, "painted_rows": sum(b["rows"] for b in bands),
                "extent": extent, "image_width": img.width() / dpr}

    # -- the run ---------------------------------------------------------------------------
    MEASURE_JS = (HERE / "measure.js").read_text(encoding="utf-8")

    def webviews_idle() -> Step:
        """Wait until the main, toolbar and bottom webviews have finished loading. Switching
        mw.web to the reviewer while the deck browser page is still loading lets that page's
        late domDone release the reviewer's evals into the half-loaded reviewer page
        ("_showQuestion is not defined" and lost callbacks) -- an aqt race, not a card bug."""
        deadline = time.monotonic() + 20
        views = (mw.web, mw.toolbarWeb, mw.bottomWeb)
        while any(v.page().isLoading() or not v._domDone or v._pendingActions for v in views):
            if time.monotonic() > deadline:
                raise TimeoutError("webviews did not finish loading")
            yield ("sleep", 20)

    def enter_review() -> Step:
        """(Re)open the reviewer: reviewer.show() -> nextCard() -> _initWeb() loads a fresh
        reviewer page built for the current theme. One navigation only: two back-to-back
        setHtml() calls (deckBrowser, then review) let the first page's domDone release evals
        into a page that is being replaced, and their callbacks never come."""
        loaded: list[bool] = []
        slot = lambda ok: loaded.append(ok)
        yield from webviews_idle()
        mw.web.loadFinished.connect(slot)
        try:
            mw.moveToState("review")
            if mw.state != "review" or mw.reviewer.card is None:
                raise RuntimeError(f"the reviewer did not open (state {mw.state}); is the selected deck empty?")
            deadline = time.monotonic() + 20
            while not (loaded and mw.web._domDone):
                if time.monotonic() > deadline:
                    raise TimeoutError("the reviewer page did not load")
                yield ("sleep", 20)
        finally:
            mw.web.loadFinished.disconnect(slot)
        if not loaded[-1]:
            raise RuntimeError("the reviewer page failed to load")
        yield from webviews_idle()
        yield from until("typeof _queueAction === 'function' && !!document.getElementById('qa')", "reviewer page")
        yield from settle()

    def show(card_id: int, side: str) -> Step:
        r = mw.reviewer
        if side == "front":
            r.card = mw.col.get_card(card_id)
            r.card.start_timer()
            r._showQuestion()
        else:
            r._showAnswer()
        yield from settle()

    def main() -> Step:
        t = time.monotonic()
        from aqt.qt import qVersion
        from PyQt6.QtWebEngineCore import qWebEngineChromiumVersion, qWebEngineVersion
        import aqt
        STATE["env"] = {"anki": aqt.appVersion, "qt": qVersion(), "qtwebengine": qWebEngineVersion(),
                        "chromium": qWebEngineChromiumVersion(), "python": sys.version.split()[0],
                        "platform": QApplication.platformName(),
                        "chromium_flags": os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS")}
        STATE["timings"]["addon_load_to_profile_open_s"] = round(JOB_T_PROFILE - T0, 2)
        if os.environ.get("DECKGEN_DESKTOP_LAUNCHED"):  # wall clock set by reviewer.py at Popen
            STATE["timings"]["launch_to_profile_open_s"] = round(
                time.time() - (time.monotonic() - JOB_T_PROFILE) - float(os.environ["DECKGEN_DESKTOP_LAUNCHED"]), 2)
        first = True
        for size in JOB["sizes"]:
            w, h = size
            mw.showNormal()
            mw.setGeometry(0, 0, w, h)
            QApplication.processEvents()
            for theme in JOB["themes"]:
                STATE["context"] = {"phase": "enter-review", "theme": theme, "size": f"{w}x{h}"}
                mw.set_theme(Theme.DARK if theme == "dark" else Theme.LIGHT)
                yield from enter_review()
                if theme_manager.night_mode != (theme == "dark"):
                    raise RuntimeError(f"theme switch failed: night_mode={theme_manager.night_mode}")
                if first:
                    # canaries: prove that console.* calls and uncaught errors in the reviewer
                    # page reach the capture (they are tagged phase=canary, not a card)
                    first = False
                    STATE["context"] = {"phase": "canary"}
                    yield from ev("console.info('deckgen-desktop canary'); "
                                  "setTimeout(() => { throw new Error('deckgen-desktop canary'); }); true")
                    yield ("sleep", 50)
                for card in JOB["cards"]:
                    for side in ("front", "back"):
                        ctx = {"cid": card["cid"], "side": side, "theme": theme, "size": f"{w}x{h}"}
                        STATE["context"] = ctx
                        t1 = time.monotonic()
                        yield from show(card["cid"], side)
                        raw = yield from ev(MEASURE_JS)
                        if not raw:
                            raise RuntimeError(f"measure.js returned nothing for {ctx}")
                        m = json.loads(raw)
                        rel = f"shots/{w}x{h}/{theme}/{card['cid']}-{side}.png"
                        m["screenshot"] = grab(rel, m.get("hr"))
                        STATE["renders"].append({**ctx, "notetype": card["notetype"], "kind": card["kind"],
                                                 "ms": round((time.monotonic() - t1) * 1000), **m})
                    _write(final=False)  # progress: a killed run still leaves what it measured
                if JOB.get("window_shot"):
                    mw.grab().save(str(OUT / f"shots/{w}x{h}/{theme}/window.png"), "PNG")
        STATE["context"] = {"phase": "done"}
        yield ("sleep", 100)  # late console messages
        STATE["timings"]["run_s"] = round(time.monotonic() - t, 2)
        _finish("done")

    JOB_T_PROFILE = 0.0

    def _on_profile_open() -> None:
        global JOB_T_PROFILE
        JOB_T_PROFILE = time.monotonic()
        _log("profile open")
        timer = QTimer(mw)
        timer.timeout.connect(_sweep_dialogs)
        timer.start(250)
        # let loadProfile finish (auto-sync check, add-on update check) before driving the UI
        QTimer.singleShot(200, lambda: Driver(main()).resume())

    gui_hooks.profile_did_open.append(_on_profile_open)
    _log(f"add-on loaded, job {JOB_PATH}")
