#!/usr/bin/env python3
"""Where a fresh ``agentdex search`` process spends its wall time, step by step.

Each run starts ``python -c <probe> ARGS`` (the probe runs the CLI as
``python -m agentdex`` would, byte-compiled) and marks, on the wall clock
shared with this process, when the interpreter reached the probe, when
click and the search API were imported, when the search began and ended,
when the forked refresh check was started and answered, when the JSON was
written, when ``atexit`` ran, and when the process was gone (this side).
Medians over ``--runs`` of each step's length:

    python bench/fresh_steps.py HOME [--runs 11] [--src SRC] [--python PATH] \
        [--mark MODULE:ATTR ...] [--watch PID] -- search --json -n 20 QUERY

``--mark agentdex.search.run:SearchRun.run`` (repeatable) also times every call
of that function, in whichever thread runs it (the embed thread's calls too):
per function, the median over runs of its calls' summed time and its thread's
CPU time, of its first call's start after the search began, and of its last
call's end; the threads it ran in. Marks are made as the CLI imports each
module (an import hook: the probe imports nothing ahead of the CLI, so the
refresh check is forked where it would be). ``--watch PID``: the CPU another process (the resident
embedder) spends during each run.

With ``AGENTDEX_DATA_DIR`` / ``AGENTDEX_CONFIG`` of the index to search. The
probe is not ``python -m agentdex`` itself, so it never takes the early exit
of :mod:`agentdex.cli._exit`; its ``atexit -> gone`` row is what a normal
exit's teardown costs (the early exit skips it). ``--json`` prints the
medians as one JSON document. ``--python`` runs the probe with that
interpreter (e.g. a clean venv from ``bench/make_venv.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"

PROBE = r"""
import time as _time
_T = {"interpreter": _time.time()}
import atexit, importlib, importlib.util, json, os, sys

def _mark(name):
    _T.setdefault(name, _time.time())

def _done():
    _mark("atexit")
    _T["spans"] = _SPANS
    _T["cpu"] = list(os.times())[:4]
    os.write(int(os.environ["STEPS_FD"]), json.dumps(_T).encode())

atexit.register(_done)

_SPANS = {}

def _span(owner, path):
    import threading
    module = owner.__name__
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    real = getattr(owner, name)
    key = module + ":" + path

    def timed(*args, **kwargs):
        begun, cpu = _time.time(), _time.thread_time()
        try:
            return real(*args, **kwargs)
        finally:
            _SPANS.setdefault(key, []).append((threading.current_thread().name, begun,
                _time.time(), _time.thread_time() - cpu))

    setattr(owner, name, staticmethod(timed) if isinstance(
        owner.__dict__.get(name), staticmethod) else timed)

def _wrap(owner, path, before, after):
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    real = getattr(owner, name, None)
    if real is None:  # not in this tree's version of the module
        return

    def wrapped(*args, **kwargs):
        _mark(before)
        try:
            return real(*args, **kwargs)
        finally:
            _mark(after)

    setattr(owner, name, wrapped)

#: module -> what to do once it is imported (the CLI imports in its own order: the probe
#: must not import anything ahead of it, or the refresh check's fork would move)
_AFTER = {
    "click": [lambda m: _mark("click imported")],
    "agentdex.api.search": [
        lambda m: _mark("search modules imported"),
        lambda m: _wrap(m, "search", "search begins", "search ends"),
    ],
    "agentdex.api.check_early": [lambda m: _wrap(m, "fork_check", "fork begins", "check forked")],
    "agentdex.api.check_ahead": [
        lambda m: _wrap(m, "_start_check", "fork begins", "check forked"),
        lambda m: _wrap(m, "PendingCheck.result", "answer found", "check answered"),
    ],
    # the search command: click's (cli/search.py, which prints in older trees) or the work
    # itself (cli/_searching.py, run without click when the command line allows it)
    "agentdex.cli.search": [
        lambda m: _mark("search command imported"),
        lambda m: _wrap(m, "emit_json", "json begins", "json written"),
    ],
    "agentdex.cli._searching": [
        lambda m: _mark("search command imported"),
        lambda m: _wrap(m, "emit_json", "json begins", "json written"),
    ],
}

class _AfterImport:
    # runs _AFTER's callables once their module has been imported (by the CLI)

    def find_spec(self, name, path=None, target=None):
        if name not in _AFTER:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module, _run=run, _name=name):
            _run(module)
            for then in _AFTER.pop(_name, []):
                then(module)

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _AfterImport())
for _spec in filter(None, os.environ.get("STEPS_MARKS", "").split(",")):
    _module, _path = _spec.split(":", 1)
    _AFTER.setdefault(_module, []).append(lambda m, _p=_path: _span(m, _p))
sys.argv = ["agentdex"] + sys.argv[1:]
import agentdex.cli
agentdex.cli.main()
"""

#: the steps in order: (row, from mark, to mark)
STEPS = [
    ("interpreter start (site incl.)", "exec", "interpreter"),
    ("until the search command is imported", "interpreter", "search command imported"),
    ("command until api.search is imported", "search command imported", "search modules imported"),
    ("(click imported, after the interpreter started)", "interpreter", "click imported"),
    ("api.search imported -> search begins", "search modules imported", "search begins"),
    ("answer (imports, engine, search)", "search begins", "answer found"),
    ("wait for the check's answer", "answer found", "check answered"),
    ("search to JSON", "check answered", "json begins"),
    ("write the JSON", "json begins", "json written"),
    ("until atexit", "json written", "atexit"),
    ("atexit -> gone (teardown)", "atexit", "gone"),
    ("whole process", "exec", "gone"),
    ("(check forked, after the interpreter started)", "interpreter", "check forked"),
    ("(check answered, after it was forked)", "check forked", "check answered"),
]


def _cpu_ms(pid: int | None) -> float:
    """User+system CPU of process ``pid`` so far (0 without one)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return 1000 * (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def once(
    args: list[str], env: dict[str, str], python: str = sys.executable, watch: int | None = None
) -> dict[str, Any]:
    before = _cpu_ms(watch)
    reader, writer = os.pipe()
    started = time.time()
    child = subprocess.Popen(
        [python, "-c", PROBE, *args],
        env=dict(env, STEPS_FD=str(writer)),
        pass_fds=(writer,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(writer)
    child.wait()
    gone = time.time()
    with os.fdopen(reader, "rb") as handle:
        marks: dict[str, Any] = json.loads(handle.read() or b"{}")
    marks.update(exec=started, gone=gone)
    if watch is not None:
        marks["watched_cpu"] = _cpu_ms(watch) - before
    return marks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--src", type=Path, default=SRC)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--python", default=sys.executable, help="the probe's interpreter")
    parser.add_argument("--mark", action="append", default=[], help="MODULE:ATTR to time")
    parser.add_argument(
        "--watch", type=int, help="PID of another process (a resident) whose CPU each run costs"
    )
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:cut])
    args = argv[cut + 1 :]  # the agentdex command line after --home HOME
    env = dict(os.environ, PYTHONPATH=str(opts.src.resolve()), STEPS_MARKS=",".join(opts.mark))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([opts.python, "-m", "compileall", "-q", str(opts.src)], check=True, env=env)
    runs = [
        once(["--home", opts.home, *args], env, opts.python, opts.watch) for _ in range(opts.runs)
    ]
    medians: dict[str, float | None] = {}
    for label, start, end in STEPS:
        spans = [1000 * (r[end] - r[start]) for r in runs if start in r and end in r]
        medians[label] = round(statistics.median(spans), 1) if spans else None
    marked = {mark: _marked(runs, mark) for mark in opts.mark}
    cpu = [r["cpu"] for r in runs if "cpu" in r]
    if opts.watch is not None:
        medians["watched process's CPU"] = round(
            statistics.median(r["watched_cpu"] for r in runs), 1
        )
    if cpu:  # this process (all threads) and its waited-for children, by atexit
        medians["process CPU (user+sys)"] = round(
            statistics.median(1000 * (c[0] + c[1]) for c in cpu), 1
        )
        medians["children's CPU (the check)"] = round(
            statistics.median(1000 * (c[2] + c[3]) for c in cpu), 1
        )
    if opts.json:
        report = {"runs": opts.runs, "python": opts.python, "args": args, "median_ms": medians}
        report["marks"] = marked
        print(json.dumps(report, indent=2))
        return
    print(f"median of {opts.runs} runs, ms ({opts.python}): {' '.join(args)}")
    for label, ms in medians.items():
        print(f"  {label:<34} {'-' if ms is None else f'{ms:7.1f}'}")
    if marked:
        print(
            "marked functions (median ms: summed time, its thread's CPU time, first start / last"
            " end after the search began; calls; threads)"
        )
    for mark, got in marked.items():
        if got is None:
            print(f"  {mark}: never called")
            continue
        print(
            f"  {mark}: {got['total_ms']:.1f}, cpu {got['thread_cpu_ms']:.1f}"
            f" ({got['from_ms']:.1f} -> {got['to_ms']:.1f});"
            f" {got['calls']} calls; {','.join(got['threads'])}"
        )


def _marked(runs: list[dict[str, Any]], mark: str) -> dict[str, Any] | None:
    """Medians over the runs that called ``mark``: summed time, first start, last end."""
    totals, cpus, starts, ends, calls, threads = [], [], [], [], [], set()
    for run in runs:
        spans = run.get("spans", {}).get(mark)
        if not spans or "search begins" not in run:
            continue
        zero = run["search begins"]
        totals.append(1000 * sum(end - begun for _, begun, end, _ in spans))
        cpus.append(1000 * sum(cpu for _, _, _, cpu in spans))
        starts.append(1000 * (min(begun for _, begun, _, _ in spans) - zero))
        ends.append(1000 * (max(end for _, _, end, _ in spans) - zero))
        calls.append(len(spans))
        threads.update(name for name, _, _, _ in spans)
    if not totals:
        return None
    return {
        "total_ms": round(statistics.median(totals), 1),
        "thread_cpu_ms": round(statistics.median(cpus), 1),
        "from_ms": round(statistics.median(starts), 1),
        "to_ms": round(statistics.median(ends), 1),
        "calls": int(statistics.median(calls)),
        "threads": sorted(threads),
    }


if __name__ == "__main__":
    main()
