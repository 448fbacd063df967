#!/usr/bin/env python3
"""Start-up cost of the CLI in a fresh process: median wall time over N runs.

Compares ``agentdex --help`` (and ``--version``) with the floor of starting
Python at all (``python -c pass``), and lists the slowest imports of the
``--help`` path from ``-X importtime``.

    python bench/bench_startup.py [--runs 20] [--src SRC] [--against OTHER/src ...] [--json]
        [--python PATH ...]

``--against`` (repeatable) measures other checkouts' code too, interleaved
run by run with ``--src`` (default: this checkout), each byte-compiled first
(an installed tool runs byte-compiled modules): an A/B in one sitting.
``--python`` (repeatable; default this interpreter) runs every command with
each interpreter given, interleaved too (e.g. this machine's shared
interpreter against a clean venv from ``bench/make_venv.py``): rows are
named ``SRC`` for the first interpreter, ``SRC @ PYTHON`` for the others.
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

COMMANDS = {
    "agentdex --version": ["-m", "agentdex", "--version"],
    "agentdex --help": ["-m", "agentdex", "--help"],
    "agentdex search --help": ["-m", "agentdex", "search", "--help"],
}


def _once(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def _env(src: Path, python: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(src))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([python, "-m", "compileall", "-q", str(src)], check=True, env=env)
    return env


def measure(
    srcs: list[Path], runs: int, pythons: list[str] | None = None
) -> dict[str, dict[str, float]]:
    """Median ms per checkout, interpreter and command (plus each interpreter's floor),
    interleaved run by run."""
    pythons = pythons or [sys.executable]
    envs: dict[str, tuple[str, dict[str, str]]] = {}
    for i, py in enumerate(pythons):
        for src in srcs:
            envs[str(src) if i == 0 else f"{src} @ {py}"] = (py, _env(src, py))
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in envs}
    floor: dict[str, list[float]] = {py: [] for py in pythons}
    for run in range(runs):
        for py in pythons:
            floor[py].append(_once([py, "-c", "pass"], envs[next(iter(envs))][1]))
        names = list(envs)
        turn = run % len(names)
        for label, args in COMMANDS.items():
            for name in names[turn:] + names[:turn]:
                py, env = envs[name]
                samples[name].setdefault(label, []).append(_once([py, *args], env))
    out: dict[str, dict[str, float]] = {
        "floor": {
            "python -c pass" if i == 0 else f"{py} -c pass": _ms(floor[py])
            for i, py in enumerate(pythons)
        }
    }
    for name, got in samples.items():
        out[name] = {label: _ms(values) for label, values in got.items()}
    return out


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 1)


def slowest_imports(src: Path, python: str = sys.executable) -> list[tuple[int, str]]:
    out = subprocess.run(
        [python, "-X", "importtime", "-m", "agentdex", "--help"],
        env=dict(os.environ, PYTHONPATH=str(src)),
        capture_output=True,
        text=True,
        check=False,
    ).stderr
    costs = []
    for line in out.splitlines():
        if line.startswith("import time:") and "|" in line:
            parts = [p.strip() for p in line.split("|")]
            try:
                costs.append((int(parts[1]), parts[2]))
            except ValueError:
                continue
    return sorted(costs, reverse=True)[:8]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--src", type=Path, default=SRC)
    parser.add_argument("--against", type=Path, action="append", default=[])
    parser.add_argument("--json", action="store_true", help="one JSON document")
    parser.add_argument(
        "--python", action="append", default=[], help="an interpreter to run them with"
    )
    args = parser.parse_args()
    srcs = [args.src.resolve(), *(p.resolve() for p in args.against)]
    pythons = args.python or [sys.executable]
    result = measure(srcs, args.runs, pythons)
    if args.json:
        print(json.dumps({"runs": args.runs, "python": pythons, "median_ms": result}, indent=2))
        return
    floor = result["floor"]["python -c pass"]
    print(f"median of {args.runs} runs (ms); python -c pass (floor): {floor:.1f}")
    for name, rows in result.items():
        if name == "floor":
            continue
        print(name)
        for label, ms in rows.items():
            print(f"  {label:<28} {ms:7.1f} ms   {ms / floor:4.1f}x floor")
    print("slowest imports on the --help path (cumulative us):")
    for micros, name in slowest_imports(srcs[0], pythons[0]):
        print(f"  {micros:>8}  {name}")


if __name__ == "__main__":
    main()
