"""Show deckgen cards in the real Anki desktop reviewer (aqt) under Xvfb and measure what it renders.

:func:`run` prepares a throw-away Anki base folder (``prepare.py``, with Anki's own code),
copies the add-on in ``addon/`` into it and starts Anki under ``xvfb-run``, in a process
group of its own.  The add-on (on ``gui_hooks.profile_did_open``) shows the chosen cards
through the reviewer's own ``_showQuestion``/``_showAnswer`` in each theme and window size,
runs ``addon/measure.js`` in the reviewer webview, saves a screenshot of each side, records
every JavaScript console message, writes ``raw.json`` and exits.  :func:`evaluate` turns the
measurements into checks.  Nothing here imports aqt: Qt stays out of the pytest process.

Tests reach this through :func:`missing_requirements` first: anywhere aqt, ``xvfb-run`` or
the Qt xcb libraries are missing, the test is skipped, or fails when ``DECKGEN_REQUIRE_DESKTOP``
is set (``.ci/run`` sets it and installs them).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ADDON = HERE / "addon"
PREPARE = HERE / "prepare.py"
PROFILE = "deckgen"
REQUIRE_ENV = "DECKGEN_REQUIRE_DESKTOP"
INSTALL_HINT = ".ci/run installs them: aqt[qt] through pip install -e '.[test]', and Debian's xvfb, xauth and Qt's xcb libraries"
# What the add-on is asked to run Anki with (the environment).
CHROMIUM_FLAGS = "--no-sandbox --disable-gpu"


def _qt_binaries() -> list[Path]:
    """The Qt libraries whose shared-library dependencies must all resolve: the xcb platform plugin and WebEngine."""
    spec = importlib.util.find_spec("PyQt6")
    if spec is None or not spec.submodule_search_locations:
        return []
    qt = Path(list(spec.submodule_search_locations)[0]) / "Qt6"
    return [qt / "plugins" / "platforms" / "libqxcb.so", qt / "lib" / "libQt6WebEngineCore.so.6",
            qt / "libexec" / "QtWebEngineProcess"]


def _installed(module: str) -> bool:
    """Whether *module* can be imported, without importing it (Qt stays out of the pytest process)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


def missing_requirements() -> list[str]:
    """Why the desktop reviewer cannot run here (empty when it can)."""
    if not sys.platform.startswith("linux"):
        return [f"the desktop reviewer test runs on Linux under Xvfb (this is {sys.platform})"]
    missing = [f"{what} is not installed" for module, what in (("aqt", "aqt (Anki desktop)"),
                                                               ("PyQt6.QtWebEngineCore", "PyQt6-WebEngine"))
               if not _installed(module)]
    for program in ("xvfb-run", "xauth"):
        if shutil.which(program) is None:
            missing.append(f"{program} is not installed")
    if missing:
        return missing
    ldd = shutil.which("ldd")
    for binary in _qt_binaries():
        if not binary.exists():
            missing.append(f"{binary} is missing")
        elif ldd:
            out = subprocess.run([ldd, str(binary)], capture_output=True, text=True, timeout=30).stdout
            lost = sorted({line.split()[0] for line in out.splitlines() if "not found" in line})
            if lost:
                missing.append(f"{binary.name} needs libraries that are not installed: {', '.join(lost)}")
    return missing


def require_desktop() -> None:
    """Skip the calling test where Anki desktop cannot run; fail it instead when ``DECKGEN_REQUIRE_DESKTOP`` is set."""
    import pytest

    missing = missing_requirements()
    if missing:
        reason = f"Anki desktop cannot run here: {'; '.join(missing)} ({INSTALL_HINT})"
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{REQUIRE_ENV} is set, but {reason}")
        pytest.skip(reason)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """End the process group *proc* leads (xvfb-run, Xvfb, Anki, QtWebEngineProcess): SIGTERM, then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            proc.poll()  # reap the leader, or it stays in the group as a zombie
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


def anki_env(base: Path, **extra: str) -> dict[str, str]:
    """The environment Anki runs in: Xvfb's display, no Anki or Qt settings of the caller's, and everything it
    writes kept in the base folder *base* (its runtime folder is made here)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANKI", "QT_", "QTWEBENGINE", "WAYLAND")) and k != "DISPLAY"}
    env.update(
        QT_QPA_PLATFORM="xcb",
        QTWEBENGINE_CHROMIUM_FLAGS=CHROMIUM_FLAGS,
        HOME=str(base), XDG_DATA_HOME=str(base / "xdg-data"), XDG_CONFIG_HOME=str(base / "xdg-config"),
        XDG_CACHE_HOME=str(base / "xdg-cache"), XDG_RUNTIME_DIR=str(base / "xdg-runtime"),
        # Anki lets one instance run per user, found through a local socket in the temporary folder: a folder
        # of its own makes this Anki independent of any other the user runs (another test, a learner's Anki).
        TMPDIR=str(base / "tmp"),
        LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1",
        **extra,
    )
    for folder in ("xdg-runtime", "tmp"):
        (base / folder).mkdir(mode=0o700, exist_ok=True)
    return env


def anki_command(base: Path) -> list[str]:
    """Anki desktop on its own Xvfb display, opening the profile prepare.py made in *base*."""
    return ["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24 -nolisten tcp",
            sys.executable, "-c", "import aqt, sys; sys.exit(aqt.run())", "-b", str(base), "-p", PROFILE]


def run(apkg: Path, out: Path, *, cards: str = "kind:1,code:2", themes: tuple[str, ...] = ("light", "dark"),
        sizes: tuple[tuple[int, int], ...] = ((1200, 900), (640, 900)), timeout: float = 120.0) -> dict[str, Any]:
    """Show *cards* of *apkg* in the reviewer; measurements, checks and screenshots under *out*.

    The result has ``run`` (status, timings, versions, the log's tail), ``cards``, ``checks``
    (see :func:`evaluate`), ``renders`` and ``console``; it is also written to ``out/results.json``.
    """
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="deckgen-anki-"))
    try:
        prepared = subprocess.run([sys.executable, str(PREPARE), str(base), str(apkg), cards],
                                  capture_output=True, text=True, timeout=120, cwd=str(base))
        if prepared.returncode != 0:
            raise RuntimeError(f"preparing the Anki profile failed:\n{prepared.stderr[-3000:]}")
        chosen = json.loads(prepared.stdout)
        shutil.copytree(ADDON, base / "addons21" / "deckgen_desktop_test", ignore=shutil.ignore_patterns("__pycache__"))
        job = {"out_dir": str(out), "cards": chosen, "themes": list(themes), "sizes": [list(s) for s in sizes],
               "addon_timeout_s": max(10.0, timeout - 5)}
        job_path = out / "job.json"
        job_path.write_text(json.dumps(job, indent=1, ensure_ascii=False), encoding="utf-8")
        t_prepare = time.monotonic() - t0

        env = anki_env(base, DECKGEN_DESKTOP_JOB=str(job_path), DECKGEN_DESKTOP_LAUNCHED=repr(time.time()))
        command = anki_command(base)
        log_path = out / "anki.log"
        status = None
        t_launch = time.monotonic()
        with log_path.open("wb") as log:
            proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, cwd=str(base))
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                status = "timeout"
            finally:
                kill_group(proc)  # also Xvfb or QtWebEngineProcess left behind, and on Ctrl-C
        t_anki = time.monotonic() - t_launch
    finally:
        shutil.rmtree(base, ignore_errors=True)

    raw: dict[str, Any] = {}
    raw_path = out / "raw.json"
    if raw_path.is_file():
        try:
            raw = json.loads(raw_path.read_text(encoding="utf-8"))
        except ValueError:
            raw = {"status": "unreadable raw.json"}
    if status is None:
        status = raw.get("status") or f"Anki exited ({proc.returncode}) without results"
    log_tail = log_path.read_text(encoding="utf-8", errors="replace")[-4000:]
    result = {
        "run": {"status": status, "ok": status == "done", "error": raw.get("error"), "returncode": proc.returncode,
                "timings_s": {"prepare": round(t_prepare, 2), "anki": round(t_anki, 2),
                              "total": round(time.monotonic() - t0, 2), **(raw.get("timings") or {})},
                "env": raw.get("env"), "command": command, "log_tail": log_tail},
        "cards": chosen,
        "checks": evaluate(chosen, raw.get("renders", []), raw.get("console", []), raw.get("dialogs", []),
                           themes) if status == "done" else {},
        "renders": raw.get("renders", []), "console": raw.get("console", []), "dialogs": raw.get("dialogs", []),
        "out": str(out),
    }
    (out / "results.json").write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    return result


def card_group(card: dict[str, Any]) -> str:
    """The card kinds the test must see rendered: Q/A (a PR's question), cloze, glossary."""
    if card["kind"] == "glossary":
        return "glossary"
    return "cloze" if card["notetype"].endswith("Cloze") else "Q/A"


_REPO_RE = re.compile(r"^[\w.-]+/[\w.-]+")


def evaluate(cards: list[dict[str, Any]], renders: list[dict[str, Any]], console: list[dict[str, Any]],
             dialogs: list[dict[str, Any]], themes: tuple[str, ...] = ("light", "dark")) -> dict[str, dict[str, Any]]:
    """Checks over the add-on's raw measurements: name → ``ok``, ``description``, ``checked`` and ``failures``."""
    checks: dict[str, dict[str, Any]] = {}

    def check(name: str, description: str, failures: list[Any], checked: int) -> None:
        checks[name] = {"ok": not failures and checked > 0, "description": description, "checked": checked,
                        "failure_count": len(failures), "failures": failures[:50]}

    def where(r: dict[str, Any]) -> dict[str, Any]:
        return {k: r[k] for k in ("cid", "kind", "theme", "size", "side")}

    backs = [r for r in renders if r["side"] == "back"]

    # Every card kind renders, front and back, in every theme.
    expected = {(group, theme, side) for group in ("Q/A", "cloze", "glossary") for theme in themes
                for side in ("front", "back")}
    group_of = {c["cid"]: card_group(c) for c in cards}
    seen = {(group_of.get(r["cid"]), r["theme"], r["side"]) for r in renders}
    fails: list[Any] = [{"not rendered": list(k)} for k in sorted(expected - seen)]  # type: ignore[arg-type]
    for r in renders:
        t = r["text"]
        problems = []
        if not t["qa"]:
            problems.append("empty #qa")
        if not t["deckgen_blocks"]:
            problems.append("no .deckgen block (the template did not render)")
        if r["side"] == "front" and not any(t["question"] + t["cloze_text"]):
            problems.append("no question or cloze text")
        if r["side"] == "back":
            if r["notetype"].endswith("Cloze"):
                if not any(x and x != "[...]" for x in t["cloze"]):
                    problems.append("no revealed cloze text")
            elif not any(t["answer"]):
                problems.append("empty .answer")
            if not any(t["source"]):
                problems.append("no source line")
        if r["screenshot"]["distinct_colors_sampled"] < 3:
            problems.append(f"the screenshot looks blank ({r['screenshot']['distinct_colors_sampled']} colours sampled)")
        if problems:
            fails.append({**where(r), "problems": problems})
    check("every_kind_renders", "Q/A, cloze and glossary cards render front and back, with their content, "
          "in both themes", fails, len(renders))

    fails = [{**where(r), "body_class": r["body_class"]} for r in renders if r["night_mode"] != (r["theme"] == "dark")]
    check("theme_applied", "the reviewer body has the nightMode class exactly in the dark theme", fails, len(renders))

    # 1. code inside the answer or a revealed gap keeps the answer's colour
    fails, n = [], 0
    for r in backs:
        for c in r["codes"]:
            if c["region"] not in ("answer", "cloze"):
                continue
            n += 1
            if not c["color_matches_region"]:
                fails.append({**where(r), "code": c["text"], "region": c["region"], "code_color": c["color"],
                              "region_color": c["region_color"]})
    check("code_colour_matches_answer", "<code> inside .answer or a revealed .cloze has the colour of that "
          "answer or gap", fails, n)

    # 2. identifiers never break inside a word: the layout (per character line boxes), and the style that allows it
    fails, n = [], 0
    for r in renders:
        for c in r["codes"]:
            n += 1
            mid = [b for b in c["breaks"] if b["mid_word"]]
            if mid:
                fails.append({**where(r), "code": c["text"], "lines": c["lines"], "word_break": c["word_break"],
                              "breaks": [f"{b['before']}|{b['after']}" for b in mid]})
    check("code_no_midword_break", "no <code> is split between two word characters across lines", fails, n)
    fails, n = [], 0
    for r in renders:
        for c in r["codes"]:
            n += 1
            if c["word_break"] == "break-all" or c["line_break"] == "anywhere" or c["overflow_wrap"] == "anywhere":
                fails.append({**where(r), "code": c["text"], "word_break": c["word_break"],
                              "overflow_wrap": c["overflow_wrap"], "line_break": c["line_break"]})
    check("code_word_break_style", "the computed word-break, overflow-wrap and line-break of <code> never allow a "
          "break anywhere", fails, n)

    # 3. the answer divider: one line, inside the card column
    fails_lines: list[Any] = []
    fails_column: list[Any] = []
    for r in backs:
        hr = r.get("hr")
        if not hr:
            fails_lines.append({**where(r), "problem": "no hr#answer on the back"})
            continue
        pixels = r["screenshot"].get("hr_pixels") or {}
        rows = pixels.get("painted_rows")
        if hr["visible_lines"] != 1 or hr["painted_height"] > 1.01 or (rows is not None and rows > 1):
            fails_lines.append({**where(r), "painted_height_css": hr["painted_height"], "bands_css": hr["bands"],
                                "pixel_bands": pixels.get("bands")})
        if not hr["within_column"]:
            fails_column.append({**where(r), "hr_width": hr["rect"]["width"], "column_width": r["column"]["width"],
                                 "hr_left": hr["rect"]["left"], "column_left": r["column"]["left"],
                                 "pixel_extent": pixels.get("extent")})
    check("answer_divider_single_line", "hr#answer paints one line at most 1px high (computed style and pixels)",
          fails_lines, len(backs))
    check("answer_divider_within_column", "hr#answer lies within the .deckgen column, not across the window",
          fails_column, len(backs))

    # 4. a glossary card is not labelled as a PR
    glossary_backs = [r for r in backs if group_of.get(r["cid"]) == "glossary"]
    fails = [{**where(r), "labels": r["text"]["labels"]} for r in glossary_backs if "PR" in r["text"]["labels"]]
    check("glossary_not_labelled_pr", "no line of a glossary card's back is labelled PR", fails, len(glossary_backs))

    # 5. the 原文 line of a cloze back does not repeat the sentence shown above it
    fails, n = [], 0
    for r in backs:
        if group_of.get(r["cid"]) != "cloze":
            continue
        n += 1
        shown = "".join(r["text"]["cloze_text"])
        for line in r["text"]["sentence"]:
            own = line.replace("…", "")
            blocks = SequenceMatcher(None, own, shown, autojunk=False).get_matching_blocks()
            matched = sum(b.size for b in blocks if b.size >= 4)  # runs of text, not a shared 的 here and there
            if own and matched > 0.5 * len(own):
                fails.append({**where(r), "sentence": line, "cloze_text": shown,
                              "repeated": round(matched / len(own), 2)})
    check("cloze_sentence_not_repeated", "the 原文 line of a cloze back repeats at most half of itself from the "
          "cloze text above it", fails, n)

    # 6. the source line names the repository, the file and line are a smaller detail
    fails = []
    repos = {c["cid"]: c.get("repo", "") for c in cards}
    for r in backs:
        source = " ".join(r["text"]["source"])
        problems = []
        if not _REPO_RE.match(source) or (repos.get(r["cid"]) and not source.startswith(repos[r["cid"]])):
            problems.append("does not start with the repository")
        if not r["text"]["where"]:
            problems.append("no .where detail (file and line)")
        elif not all(w < s for w, s in zip(r["font_px"]["where"], r["font_px"]["source"])):
            problems.append("the file and line are not smaller than the source line")
        if problems:
            fails.append({**where(r), "source": source, "problems": problems})
    check("source_line_readable", "the source line starts with the repository; the file and line are a smaller "
          "detail", fails, len(backs))

    # JavaScript console: everything but the add-on's own canaries
    canary = [m for m in console if (m.get("context") or {}).get("phase") == "canary"]
    messages = [m for m in console if m not in canary]
    check("no_console_messages", "no JavaScript console message (any level, any webview) while the cards were shown",
          messages, len(renders))
    levels = {m["level"] for m in canary if "deckgen-desktop canary" in (m["message"] or "") and m["page"] == "reviewer"}
    checks["console_capture_works"] = {
        "ok": levels >= {"info", "error"}, "levels_seen": sorted(levels), "checked": 1, "failures": [],
        "description": "a console.info and an uncaught Error in the reviewer page were both captured"}
    check("no_unexpected_dialogs", "no dialog opened while the cards were shown", dialogs, 1)
    return checks
