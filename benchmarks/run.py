"""Time deckgen builds against the floor, at several corpus sizes (benchmarks only; not part of the tests).

For each size the harness generates a corpus (``make_corpus.py``; ``seeds`` is
the real seed folder; ``realN``, e.g. ``real10000``, is N entries of real review
text, ``corpus/`` repeated with fresh identifiers by ``real_corpus.py``), then
runs, each in a fresh interpreter:

* ``cold``      ``deckgen build`` with an empty results cache and no deck or lock file yet;
* ``cold -jN``  the same with ``--jobs N``;
* ``floor``     ``floor.py``: read the same files, segment all their text once
                with jieba, write as many notes as the cold build wrote with genanki;
* ``no-change`` the build again: warm cache, lock file beside the deck;
* ``+1 file``   the build after adding one seed file of 50 new entries (for ``realN``, the
                next 50 entries of the real corpus: real text too).

It reports wall time, CPU time (user + system, workers included), entries/s
and peak RSS (the whole process tree, sampled every 20 ms, or the kernel's
per-process peak if higher), and the ratio of each run's wall and CPU time to
the floor's, measured in the same run so the ratios hold on any machine.  jieba's
dictionary is kept for every run, the floor included (once per installation:
jieba's own cache for the floor, deckgen's faster form of it for deckgen).  ``deckgen --help`` is timed too.  With ``--repeat R``
each run is repeated and the fastest kept (the usual way to discount a busy
machine); the cold builds and the floor take turns, so that each round measures them under the
same load.  The last lines check the targets of issue #32 (and of issue #8 where #32 is silent).

    python benchmarks/run.py                       # seeds, 1k, 10k, 100k (about 25 minutes on 2 cores)
    python benchmarks/run.py --sizes seeds,1000    # a quick look
    python benchmarks/run.py --sizes real10000     # real review text (issue #32's target: cold ≤ 2.2× the floor)
    python benchmarks/run.py --json results.json   # also keep the numbers
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from make_corpus import write_corpus  # noqa: E402
from real_corpus import write_real_corpus  # noqa: E402

NEW_FILE_ENTRIES = 50
ENTRY_CACHES = ("results", "notes", "locks")
"""The caches a cold build starts without and a +1 file build starts from as the build before left them (see
deckgen.cache.resultcache, deckgen.cache.notecache and deckgen.cache.lockmemo)."""


@dataclass
class Run:
    size: str
    name: str
    entries: int
    wall: float
    cpu: float
    rss_mb: float
    floor_wall: float = 0.0
    floor_cpu: float = 0.0

    @property
    def per_second(self) -> float:
        return self.entries / self.wall if self.wall else 0.0


def _tree_rss_kb(pid: int) -> int:
    """Resident memory of *pid* and all its descendants, in KiB (Linux /proc)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of running *args*; stops the harness if it fails.

    CPU time comes from the kernel's accounting of reaped children: the command's
    own and that of its workers, which it reaped before exiting.
    """
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kb(proc.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{out.decode()}\n{err.decode()}")
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, peak / 1024


def best(args: list[str], env: dict[str, str], repeat: int,
         before: Callable[[], None] = lambda: None) -> tuple[float, float, float]:
    runs = []
    for _ in range(repeat):
        before()
        runs.append(timed(args, env))
    return min(runs)


def deckgen(*args: str) -> list[str]:
    return [sys.executable, "-m", "deckgen", *args]


def notes_in(lock: Path) -> int:
    return len(json.loads(lock.read_text(encoding="utf-8"))["notes"])


def entries_in(size: str) -> int | None:
    """The number of entries a size asks for ('1000', 'real1000'); None for 'seeds' (as many as it has)."""
    return None if size == "seeds" else int(size.removeprefix("real"))


def bench_size(size: str, work: Path, jobs: int, repeat: int, extras: bool) -> list[Run]:
    corpus = work / f"corpus-{size}"
    real = size.startswith("real")
    if size == "seeds":
        if not corpus.exists():
            shutil.copytree(ROOT / "seeds", corpus)
        from deckgen.source.parse import scan_corpus

        count = len(scan_corpus([corpus]).entries)
    else:
        count = int(size.removeprefix("real"))
        if not (corpus / "topics.toml").exists():
            (write_real_corpus if real else write_corpus)(count, corpus)
    new_file = corpus / "zz_new.txt"
    new_file.unlink(missing_ok=True)
    cache, out = work / f"cache-{size}", work / f"out-{size}"
    deck = out / "deck.apkg"
    env = {**os.environ, "DECKGEN_CACHE_DIR": str(cache), "SOURCE_DATE_EPOCH": "1700000000"}
    build = deckgen("build", str(corpus), "-o", str(deck), "-q")

    def cold() -> None:
        # Every per-entry cache goes; jieba's dictionary and the tag table stay (built once per installation).
        for kind in ENTRY_CACHES:
            shutil.rmtree(cache / kind, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)

    # Keep jieba's dictionary for both deckgen and the floor, each in its form (a once-per-installation cost).
    subprocess.run(deckgen("build", str(ROOT / "seeds"), "-o", str(work / "warmup" / "d.apkg"), "-q", "--no-cache"),
                   env=env, check=True)
    # The cold builds and the floor take turns, round after round, so that each is measured under the
    # same load: on a shared machine, runs done one kind after the other drift apart by 10-30%.
    cold()
    first = timed(build, env)
    notes = notes_in(deck.with_name("deck.lock.json"))  # the floor writes as many notes
    floor = [sys.executable, str(HERE / "floor.py"), str(work / f"floor-{size}.apkg"), str(notes), str(corpus)]
    subprocess.run(floor, env=env, check=True, capture_output=True)  # warms jieba's default cache
    plan: dict[str, tuple[list[str], Callable[[], None]]] = {"cold": (build, cold), "floor": (floor, lambda: None)}
    if jobs > 1:
        plan[f"cold -j{jobs}"] = ([*build, "--jobs", str(jobs)], cold)
    measured: dict[str, list[tuple[float, float, float]]] = {name: [] for name in plan}
    measured["cold"].append(first)
    for round_ in range(repeat):
        for name, (args, before) in plan.items():
            if name == "cold" and round_ == 0:
                continue
            before()
            measured[name].append(timed(args, env))
    runs = [Run(size, name, count, *min(measured[name])) for name in plan]
    floor_wall, floor_cpu = min(measured["floor"])[:2]
    if extras:
        cold()
        subprocess.run(build, env=env, check=True)
        wall, cpu, rss = best(build, env, repeat)
        runs.append(Run(size, "no-change", count, wall, cpu, rss))
        lock_bytes = deck.with_name("deck.lock.json").read_bytes()
        deck_bytes = deck.read_bytes()

        saved = work / f"cache-{size}-saved"
        shutil.rmtree(saved, ignore_errors=True)
        for kind in ENTRY_CACHES:
            shutil.copytree(cache / kind, saved / kind)

        def add_file() -> None:
            # The same previous state every time: the deck, lock and caches of the corpus without the new file.
            deck.write_bytes(deck_bytes)
            deck.with_name("deck.lock.json").write_bytes(lock_bytes)
            new_file.unlink(missing_ok=True)
            for kind in ENTRY_CACHES:
                shutil.rmtree(cache / kind)
                shutil.copytree(saved / kind, cache / kind)
            extra = work / "new-file"
            shutil.rmtree(extra, ignore_errors=True)
            # A real corpus gets its next 50 entries (new PR numbers and identifiers), a synthetic one new PRs.
            written = (write_real_corpus(NEW_FILE_ENTRIES, extra, start=count, data_files=False) if real
                       else write_corpus(NEW_FILE_ENTRIES, extra, start=10_000_000, data_files=False))
            shutil.move(str(written[0]), new_file)

        wall, cpu, rss = best(build, env, repeat, add_file)
        runs.append(Run(size, "+1 file", count + NEW_FILE_ENTRIES, wall, cpu, rss))
        new_file.unlink(missing_ok=True)
        shutil.rmtree(saved, ignore_errors=True)
    for run in runs:
        run.floor_wall, run.floor_cpu = floor_wall, floor_cpu
    return runs


def table(runs: list[Run]) -> str:
    head = f"{'size':>9} {'run':<10} {'entries':>8} {'wall s':>8} {'CPU s':>8} {'entries/s':>10} {'RSS MB':>7} " \
           f"{'wall/floor':>10} {'CPU/floor':>9}"
    lines = [head, "-" * len(head)]
    for r in runs:
        lines.append(f"{r.size:>9} {r.name:<10} {r.entries:>8} {r.wall:>8.2f} {r.cpu:>8.2f} {r.per_second:>10.0f} "
                     f"{r.rss_mb:>7.0f} {r.wall / r.floor_wall:>10.2f} {r.cpu / r.floor_cpu:>9.2f}")
    return "\n".join(lines)


def targets(runs: list[Run], help_wall: float, click_wall: float, jobs: int) -> list[str]:
    """The targets of issue #32 (and those of issue #8 it leaves standing), each with the measured value and whether
    it is met."""
    find = {(r.size, r.name): r for r in runs}
    out: list[str] = []

    def check(ok: bool, text: str) -> None:
        out.append(f"{'met ' if ok else 'MISS'} {text}")

    check(help_wall <= 1.3 * click_wall, f"deckgen --help: {help_wall:.3f} s, {help_wall / click_wall:.2f}× a bare "
          f"`import click` ({click_wall:.3f} s) (target ≤ 1.3×)")
    if (r := find.get(("seeds", "cold"))):
        check(r.wall <= 1.4 * r.floor_wall, f"cold build of seeds/: {r.wall / r.floor_wall:.2f}× floor wall "
              f"({r.cpu / r.floor_cpu:.2f}× CPU) (target ≤ 1.4×)")
    for size in ("seeds", "10000"):
        if (r := find.get((size, "no-change"))):
            check(r.wall <= 0.15 * r.floor_wall, f"no-change rebuild of {size}: {r.wall / r.floor_wall:.2f}× floor "
                  f"wall, {r.wall:.3f} s (target ≤ 0.15×)")
    if (r := find.get(("real10000", "cold"))):
        check(r.wall <= 2.2 * r.floor_wall, f"real-review 10k cold: {r.wall / r.floor_wall:.2f}× floor wall "
              f"({r.cpu / r.floor_cpu:.2f}× CPU) (target ≤ 2.2×)")
    if (r := find.get(("10000", "cold"))):
        check(r.wall <= 1.6 * r.floor_wall, f"10k cold: {r.wall / r.floor_wall:.2f}× floor wall "
              f"({r.cpu / r.floor_cpu:.2f}× CPU) (target ≤ 1.6×)")
        check(r.rss_mb <= 400, f"10k cold peak RSS: {r.rss_mb:.0f} MB (target ≤ 400 MB)")
        if (j := find.get(("10000", f"cold -j{jobs}"))):
            check(j.wall <= 1.0 * j.floor_wall, f"10k cold --jobs {jobs}: {j.wall / j.floor_wall:.2f}× floor wall "
                  f"(target ≤ 1.0×), peak RSS {j.rss_mb:.0f} MB")
        if (n := find.get(("10000", "+1 file"))):
            check(n.wall <= 0.2 * r.wall, f"10k + one 50-entry file: {n.wall:.2f} s = {n.wall / r.wall:.0%} of the "
                  f"full build (target ≤ 20%)")
        if (h := find.get(("100000", "cold"))):
            # Linear: ten times the entries in about ten times the time; the floor's own ratio shows how much the
            # machine's load changed between the two sizes.
            check(h.wall <= 12 * r.wall, f"100k cold: {h.wall / r.wall:.1f}× the 10k time (linear: 10×; target ≤ 12×; "
                  f"the floor took {h.floor_wall / r.floor_wall:.1f}×)")
            check(h.rss_mb <= 2048, f"100k cold peak RSS: {h.rss_mb:.0f} MB (target ≤ 2 GB)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="seeds,1000,10000,100000",
                        help="comma-separated: 'seeds', entry counts (synthetic) and/or realN (real reviews, "
                             "N entries) (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=2, help="also time --jobs N (default 2; 1 to skip)")
    parser.add_argument("--repeat", type=int, default=0,
                        help="runs per measurement, fastest kept (default: 3 up to 1k entries, else 1)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/deckgen-bench"), help="corpora, caches, decks")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    # Bytecode for every module, as an installed deckgen has: with PYTHONDONTWRITEBYTECODE set, a module edited since
    # its bytecode was written would be compiled again by every timed run (0.1-0.2 s of a no-change rebuild).
    compileall.compile_dir(ROOT / "deckgen", quiet=1)
    env = {**os.environ, "DECKGEN_CACHE_DIR": str(args.work / "cache-help")}
    # --help as a user runs it: the installed command (``python -m`` would add runpy's import to it).
    script = Path(sys.executable).with_name("deckgen")
    help_wall = min(timed([str(script), "--help"] if script.exists() else deckgen("--help"), env)[0] for _ in range(5))
    click_wall = min(timed([sys.executable, "-c", "import click"], env)[0] for _ in range(5))
    runs: list[Run] = []
    for size in args.sizes.split(","):
        count = entries_in(size)
        small = count is None or count <= 1000
        repeat = args.repeat or (3 if small else 1)
        # 100k: only the cold builds and the floor (each takes minutes); the rest is measured at 10k.
        extras = count is None or count <= 10_000
        runs.extend(bench_size(size, args.work, args.jobs if size != "seeds" else 1, repeat, extras))
        print(table([r for r in runs if r.size == size]), flush=True)
        print(flush=True)
    print(table(runs))
    print(f"\ndeckgen --help: {help_wall:.3f} s wall, import click: {click_wall:.3f} s (best of 5 each)\n")
    print("\n".join(targets(runs, help_wall, click_wall, args.jobs)))
    if args.json:
        args.json.write_text(json.dumps({"help_wall": help_wall, "click_wall": click_wall,
                                         "runs": [asdict(r) for r in runs]}, indent=1))


if __name__ == "__main__":
    main()
