#!/usr/bin/env python3
"""Where a fresh ``agentdex search`` process spends its wall time, step by step.

Each run starts ``python -c <probe> ARGS`` (the probe runs the CLI as
``python -m agentdex`` would, byte-compiled) and marks, on the wall clock
shared with this process, when the interpreter reached the probe, when the
CLI and the search modules were imported, when the search began and ended,
when the forked refresh check was started and answered, when the JSON was
written, when ``atexit`` ran, and when the process was gone (this side).
Medians over ``--runs`` of each step's length:

    python bench/fresh_steps.py HOME [--runs 11] [--src SRC] [--python PATH] \
        -- search --json -n 20 QUERY

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

SRC = Path(__file__).resolve().parent.parent / "src"

PROBE = r"""
import time as _time
_T = {"interpreter": _time.time()}
import atexit, importlib, json, os, sys

def _mark(name):
    _T.setdefault(name, _time.time())

def _done():
    _mark("atexit")
    os.write(int(os.environ["STEPS_FD"]), json.dumps(_T).encode())

atexit.register(_done)

def _wrap(module, path, before, after):
    owner = importlib.import_module(module)
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    real = getattr(owner, name)

    def wrapped(*args, **kwargs):
        _mark(before)
        try:
            return real(*args, **kwargs)
        finally:
            _mark(after)

    setattr(owner, name, wrapped)

import agentdex.cli
_mark("cli imported")
import agentdex.api.search, agentdex.api.check_ahead, agentdex.cli.search
_mark("search modules imported")
_wrap("agentdex.api.search", "search", "search begins", "search ends")
_wrap("agentdex.api.check_ahead", "_start_check", "fork begins", "check forked")
_wrap("agentdex.api.check_ahead", "PendingCheck.result", "answer found", "check answered")
_wrap("agentdex.cli.search", "emit_json", "json begins", "json written")
sys.argv = ["agentdex"] + sys.argv[1:]
agentdex.cli.main()
"""

#: the steps in order: (row, from mark, to mark)
STEPS = [
    ("interpreter start (site incl.)", "exec", "interpreter"),
    ("import the CLI (click)", "interpreter", "cli imported"),
    ("import the search modules", "cli imported", "search modules imported"),
    ("CLI until the search", "search modules imported", "search begins"),
    ("search until the check is forked", "search begins", "check forked"),
    ("answer (imports, engine, search)", "check forked", "answer found"),
    ("wait for the check's answer", "answer found", "check answered"),
    ("search to JSON", "check answered", "json begins"),
    ("write the JSON", "json begins", "json written"),
    ("until atexit", "json written", "atexit"),
    ("atexit -> gone (teardown)", "atexit", "gone"),
    ("whole process", "exec", "gone"),
]


def once(args: list[str], env: dict[str, str], python: str = sys.executable) -> dict[str, float]:
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
        marks: dict[str, float] = json.loads(handle.read() or b"{}")
    marks.update(exec=started, gone=gone)
    return marks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--src", type=Path, default=SRC)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--python", default=sys.executable, help="the probe's interpreter")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:cut])
    args = argv[cut + 1 :]  # the agentdex command line after --home HOME
    env = dict(os.environ, PYTHONPATH=str(opts.src.resolve()))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([opts.python, "-m", "compileall", "-q", str(opts.src)], check=True, env=env)
    runs = [once(["--home", opts.home, *args], env, opts.python) for _ in range(opts.runs)]
    medians: dict[str, float | None] = {}
    for label, start, end in STEPS:
        spans = [1000 * (r[end] - r[start]) for r in runs if start in r and end in r]
        medians[label] = round(statistics.median(spans), 1) if spans else None
    if opts.json:
        report = {"runs": opts.runs, "python": opts.python, "args": args, "median_ms": medians}
        print(json.dumps(report, indent=2))
        return
    print(f"median of {opts.runs} runs, ms ({opts.python}): {' '.join(args)}")
    for label, ms in medians.items():
        print(f"  {label:<34} {'-' if ms is None else f'{ms:7.1f}'}")


if __name__ == "__main__":
    main()
