"""Two built indexes, two source trees, the same searches: interleaved, fresh processes.

    python bench/bench_read_ab.py HOME --a SRC DATA_DIR --b SRC DATA_DIR [--runs 11]

What the read path of one tree costs against another's on indexes each
wrote (e.g. text blocks stored two ways): for each of ``bench_search.py``'s
query classes, ``agentdex search --json --limit 20 --no-refresh`` in a
fresh, byte-compiled process, A then B then A... (``--runs`` each), so both
see the same machine. Never builds or refreshes: DATA_DIR must hold a
complete index of HOME (``AGENTDEX_DATA_DIR`` of its build). Prints JSON:
p50/p95 wall per class and side, B/A of the p50s, and each side's
``stats.total`` and ``stats.blocks_scanned`` (the answers must agree).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import percentiles, pick_queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--a", nargs=2, type=Path, required=True, metavar=("SRC", "DATA"))
    parser.add_argument("--b", nargs=2, type=Path, required=True, metavar=("SRC", "DATA"))
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    sides = {"a": args.a, "b": args.b}
    envs: dict[str, dict[str, str]] = {}
    for name, (src, data) in sides.items():
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(
            PYTHONPATH=str(src.resolve()),
            AGENTDEX_DATA_DIR=str(data.resolve()),
            AGENTDEX_CONFIG=str(data.resolve().parent / "no-config.toml"),
            AGENTDEX_RESIDENT_EMBEDDER="0",
        )
        (data.resolve().parent / "no-config.toml").touch()
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=env)
        envs[name] = env
    report: dict[str, Any] = {"home": str(args.home), "a": [str(p) for p in args.a]}
    report["b"] = [str(p) for p in args.b]
    for cls, query in pick_queries(args.home).items():
        argv = [sys.executable, "-m", "agentdex", "--home", str(args.home), "search", "--json"]
        argv += ["--limit", "20", "--no-refresh", *query]
        walls: dict[str, list[float]] = {"a": [], "b": []}
        seen: dict[str, Any] = {}
        for _ in range(args.runs):
            for name in ("a", "b"):
                started = time.perf_counter()
                out = subprocess.run(argv, capture_output=True, env=envs[name], check=False)
                walls[name].append(time.perf_counter() - started)
                if out.returncode not in (0, 1):
                    raise RuntimeError(out.stderr.decode()[-2000:])
                stats = json.loads(out.stdout)["stats"]
                seen[name] = {k: stats.get(k) for k in ("total", "blocks_scanned")}
        result = {name: {**percentiles(walls[name]), **seen[name]} for name in ("a", "b")}
        result["b_over_a"] = round(result["b"]["p50_ms"] / result["a"]["p50_ms"], 3)
        report[cls] = result
        print(json.dumps({cls: result}), file=sys.stderr, flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
