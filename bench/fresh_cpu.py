#!/usr/bin/env python3
"""Wall time and CPU time of fresh ``agentdex`` processes by several trees, interleaved.

    python bench/fresh_cpu.py HOME --runs 21 --src A/src --src B/src [--python PATH]
        [--label NAME ...] -- search --json -n 20 -E 'word (other|zzq)'

Each run starts ``PYTHON -m agentdex --home HOME ARGS`` once per tree (the
order turns every run), with ``PYTHONPATH=SRC``, byte-compiled first. CPU is
user + system time from ``wait4`` (the process and its reaped children: the
forked refresh check counts). Medians and minima per tree, plus the p50
ratios to the first tree, as one JSON document. ``AGENTDEX_DATA_DIR`` /
``AGENTDEX_CONFIG`` come from the environment (the index to search).
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


def once(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    started = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--src", type=Path, action="append", required=True)
    parser.add_argument("--label", action="append", help="a name per --src (default its path)")
    parser.add_argument("--python", default=sys.executable)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:cut])
    args = argv[cut + 1 :]
    labels = opts.label or [str(src) for src in opts.src]
    if len(labels) != len(opts.src):
        parser.error("one --label per --src")
    envs = {}
    for label, src in zip(labels, opts.src, strict=True):
        env = dict(os.environ, PYTHONPATH=str(src.resolve()))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([opts.python, "-m", "compileall", "-q", str(src)], check=True, env=env)
        envs[label] = env
    command = [opts.python, "-m", "agentdex", "--home", opts.home, *args]
    samples: dict[str, list[tuple[float, float, int]]] = {label: [] for label in labels}
    for run in range(opts.runs):
        turn = run % len(labels)
        for label in labels[turn:] + labels[:turn]:
            samples[label].append(once(command, envs[label]))
    out: dict[str, object] = {"python": opts.python, "args": args, "runs": opts.runs}
    first = labels[0]
    for label, got in samples.items():
        walls, cpus, codes = zip(*got, strict=True)
        out[label] = {
            "wall_p50_ms": round(statistics.median(walls), 1),
            "wall_min_ms": round(min(walls), 1),
            "cpu_p50_ms": round(statistics.median(cpus), 1),
            "cpu_min_ms": round(min(cpus), 1),
            "exit_codes": sorted(set(codes)),
        }
    for label in labels[1:]:
        mine, base = out[label], out[first]
        assert isinstance(mine, dict) and isinstance(base, dict)
        out[f"{label}_over_{first}"] = {
            "wall_p50": round(mine["wall_p50_ms"] / base["wall_p50_ms"], 3),
            "cpu_p50": round(mine["cpu_p50_ms"] / base["cpu_p50_ms"], 3),
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
