#!/usr/bin/env python3
"""Start-up cost of the CLI in a fresh process: median wall time over N runs.

Compares ``agentdex --help`` (and ``--version``) with the floor of starting
Python at all (``python -c pass``), and lists the slowest imports of the
``--help`` path from ``-X importtime``.

    python bench/bench_startup.py [--runs 20] [--src SRC] [--against OTHER/src ...] [--json]

``--against`` (repeatable) measures other checkouts' code too, interleaved
run by run with ``--src`` (default: this checkout), each byte-compiled first
(an installed tool runs byte-compiled modules): an A/B in one sitting.
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


def _env(src: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(src))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=env)
    return env


def measure(srcs: list[Path], runs: int) -> dict[str, dict[str, float]]:
    """Median ms per checkout and command (plus the floor), interleaved run by run."""
    py = sys.executable
    envs = {str(src): _env(src) for src in srcs}
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in envs}
    floor: list[float] = []
    for run in range(runs):
        floor.append(_once([py, "-c", "pass"], envs[str(srcs[0])]))
        names = list(envs)
        turn = run % len(names)
        for label, args in COMMANDS.items():
            for name in names[turn:] + names[:turn]:
                samples[name].setdefault(label, []).append(_once([py, *args], envs[name]))
    out: dict[str, dict[str, float]] = {"floor": {"python -c pass": _ms(floor)}}
    for name, got in samples.items():
        out[name] = {label: _ms(values) for label, values in got.items()}
    return out


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 1)


def slowest_imports(src: Path) -> list[tuple[int, str]]:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentdex", "--help"],
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
    args = parser.parse_args()
    srcs = [args.src.resolve(), *(p.resolve() for p in args.against)]
    result = measure(srcs, args.runs)
    if args.json:
        print(json.dumps({"runs": args.runs, "median_ms": result}, indent=2))
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
    for micros, name in slowest_imports(srcs[0]):
        print(f"  {micros:>8}  {name}")


if __name__ == "__main__":
    main()
