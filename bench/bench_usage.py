"""`agentdex usage` on a big history, and what storing usage costs the cold build.

    python bench/generate_corpus.py /tmp/c1000 --size-mb 1000
    python bench/bench_usage.py /tmp/c1000 --work /tmp/bu --before /tmp/main-src [--runs 11]
    python bench/bench_usage.py /tmp/c1000 --work /tmp/bu --builds 0 --data D \
        --before /tmp/main-src --before-data D2     # the views, now and before, alternating

``--before`` is the ``src`` folder of the code to compare the cold build
with (e.g. a worktree of the commit before usage was stored). Cold builds of
HOME alternate, before and now (``--builds`` of each, every one into a fresh
data dir under ``--work``), so both see the same machine; then, on the last
"now" index, ``--runs`` fresh ``agentdex usage`` processes per view (with
the refresh check, and ``--no-refresh``; ``--json``, the table on a 160-column
pty, the table to a pipe). Prints one JSON document.
"""

from __future__ import annotations

import argparse
import compileall
import fcntl
import json
import os
import pty
import resource
import select
import shutil
import sqlite3
import statistics
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"


def _env(src: Path, data: Path) -> dict[str, str]:
    # the same environment for every run: the variables discovery may read (AGENTDEX_*,
    # ...) are part of the refresh manifest's fingerprint, and a run with other values
    # would send the next one to a full refresh
    env = {**os.environ, "PYTHONPATH": str(src), "AGENTDEX_DATA_DIR": str(data),
           "AGENTDEX_PAGER": "cat", "TERM": "xterm-256color"}  # fmt: skip
    env.pop("AGENTDEX_CONFIG", None)
    return env


def _timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def _timed_on_terminal(args: list[str], env: dict[str, str], columns: int = 160) -> float:
    """Seconds of ``args`` writing to a pty of ``columns`` x 50 (no pager), output drained."""
    main, replica = pty.openpty()
    fcntl.ioctl(replica, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    term_env = dict(env)
    term_env.pop("COLUMNS", None)
    term_env.pop("LINES", None)
    started = time.perf_counter()
    proc = subprocess.Popen(args, stdin=replica, stdout=replica, stderr=replica, env=term_env)
    os.close(replica)
    while True:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                if not os.read(main, 65536):
                    break
            except OSError:  # the child closed its end
                break
        elif proc.poll() is not None:
            break
    code = proc.wait()
    seconds = time.perf_counter() - started
    os.close(main)
    if code != 0:
        raise SystemExit(f"{args} on a terminal exited {code}")
    return seconds


def cold_build(home: Path, src: Path, data: Path) -> tuple[float, float]:
    """Wall and CPU (user + system, the build's processes) seconds of one cold build."""
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    command = [sys.executable, "-m", "agentdex", "--home", str(home), "index", "--json"]
    env = {**_env(src, data), "AGENTDEX_BACKGROUND_BUILD": "0"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = _timed(command, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def usage_tables(data: Path) -> dict[str, Any]:
    found = sorted(data.rglob("index.db"))
    if not found:
        return {}
    db = sqlite3.connect(f"file:{found[-1]}?mode=ro", uri=True)
    try:
        calls = db.execute("SELECT count(*), sum(counted) FROM usage_calls").fetchone()
        rollup = db.execute("SELECT count(*) FROM usage_rollup").fetchone()[0]
        pages = (
            db.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'usage%'").fetchone()[0]
            if _has_dbstat(db)
            else None
        )
    finally:
        db.close()
    return {"call_rows": calls[0], "counted_calls": calls[1], "rollup_rows": rollup,
            "usage_tables_bytes": pages}  # fmt: skip


def _has_dbstat(db: sqlite3.Connection) -> bool:
    try:
        db.execute("SELECT 1 FROM dbstat LIMIT 1")
        return True
    except sqlite3.Error:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--before", type=Path, help="src folder to compare the cold build with")
    parser.add_argument("--builds", type=int, default=2, help="0: time usage on --work/now-0")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--data", type=Path, help="with --builds 0: the data dir to time usage on")
    parser.add_argument("--views", default="day,model,project,session", help="--by values")
    parser.add_argument(
        "--before-data",
        type=Path,
        help="with --before and --builds 0: time the views of --before too, on this data dir"
        " (its own index: another code's migrations send the other's refresh check to a full"
        " refresh), run for run alternating with --data",
    )
    args = parser.parse_args()
    # as an installed package runs: from bytecode (this machine's PYTHONDONTWRITEBYTECODE=1
    # would otherwise make every fresh process compile what changed since the last one)
    for src in (SRC, args.before):
        if src is not None:
            compileall.compile_dir(str(src), quiet=1)
    builds: dict[str, list[float]] = {"before": [], "now": []}
    cpu: dict[str, list[float]] = {"before": [], "now": []}
    for i in range(args.builds):
        # alternate which goes first, so neither always follows the other's page cache
        order = (("before", args.before), ("now", SRC))
        for label, src in order if i % 2 == 0 else order[::-1]:
            seconds, cpu_s = cold_build(args.home, src, args.work / f"{label}-{i}")
            builds[label].append(round(seconds, 2))
            cpu[label].append(round(cpu_s, 2))
            load = os.getloadavg()[0]
            print(f"cold build {label} #{i}: {seconds:.1f} s, CPU {cpu_s:.1f} s, load {load:.2f}",
                  file=sys.stderr)  # fmt: skip
    data = args.data or args.work / f"now-{max(0, args.builds - 1)}"
    env = _env(SRC, data)
    # the code and data each timed view runs with: now's, and before's when compared
    codes = {"": env}
    if args.before_data is not None and args.before is not None:
        codes["before: "] = _env(args.before, args.before_data)
    # what any fresh Python process costs on this machine (site-packages' .pth files included)
    startup = [_timed([sys.executable, "-c", "pass"], env) for _ in range(max(1, args.runs))]
    base = [sys.executable, "-m", "agentdex", "--home", str(args.home), "usage"]
    views: dict[str, Any] = {}
    for code_env in codes.values() if args.runs else ():
        # once: the manifest is rewritten for this environment if it was another's
        _timed([*base, "--json"], code_env)
    for by in args.views.split(",") if args.runs else ():
        for refresh in (True, False):
            for output in ("--json", "terminal", "pipe"):
                command = [*base, "--by", by] + ([] if refresh else ["--no-refresh"])
                if output == "--json":
                    command.append("--json")
                timed = _timed_on_terminal if output == "terminal" else _timed
                samples: dict[str, list[float]] = {label: [] for label in codes}
                for _ in range(args.runs):  # run for run alternating, when compared
                    for label, code_env in codes.items():
                        samples[label].append(timed(command, code_env))
                for label, got in samples.items():
                    key = f"{label}{by} {output}{'' if refresh else ' --no-refresh'}"
                    views[key] = round(statistics.median(got) * 1000, 1)
                    print(f"usage {key}: {views[key]} ms", file=sys.stderr)
    ratio = cpu_ratio = None
    if args.builds:
        before, now = statistics.median(builds["before"]), statistics.median(builds["now"])
        ratio = round(now / before, 3)
        cpu_ratio = round(statistics.median(cpu["now"]) / statistics.median(cpu["before"]), 3)
    result = {
        "home": str(args.home),
        "cold_build_s": builds,
        "cold_build_ratio": ratio,
        "cold_build_cpu_s": cpu,
        "cold_build_cpu_ratio": cpu_ratio,
        "python_startup_ms_median": round(statistics.median(startup) * 1000, 1),
        "usage_fresh_ms_median": views,
        **usage_tables(data),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
