"""The first search on a new machine: how soon it answers, and the coverage over time.

    python bench/bench_first_answer.py HOME --work DIR [--word function] [--src SRC]

With an empty data dir, runs one fresh ``agentdex --home HOME search --json
WORD`` in default mode (it builds the index first) and reports its wall
time, exit status, ``coverage`` and result count. Then, while the detached
build it started goes on, a fresh ``search --no-refresh --json WORD`` every
``--every`` seconds records the coverage (fraction, files, results; the
search's seconds, ``stopped`` and ``notes``) until
the index is complete, and the time that took. ``--src`` measures another
checkout's code (before this change the first search built everything:
its wall time is the whole build). Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"


def search(env: dict[str, str], home: Path, word: str, *extra: str) -> tuple[float, int, Any]:
    argv = [sys.executable, "-m", "agentdex", "--home", str(home), "search", "--json", *extra]
    started = time.perf_counter()
    done = subprocess.run([*argv, word], capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        data = {"error": done.stderr[-500:]}
    return seconds, done.returncode, data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--word", default="function")
    parser.add_argument("--every", type=float, default=3.0)
    parser.add_argument("--src", type=Path, default=SRC)
    args = parser.parse_args()
    data_dir = args.work / "data"
    shutil.rmtree(data_dir, ignore_errors=True)
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "no-config.toml").write_text("")
    env = dict(os.environ)
    env["AGENTDEX_DATA_DIR"] = str(data_dir)
    env["AGENTDEX_CONFIG"] = str(args.work / "no-config.toml")
    env["PYTHONPATH"] = str(args.src.resolve())
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(args.src)], check=True)
    started = time.perf_counter()
    seconds, code, data = search(env, args.home, args.word)
    first = {
        "seconds": round(seconds, 2),
        "exit": code,
        "status": data.get("status"),
        "results": len(data.get("results", [])),
        "total": data.get("stats", {}).get("total"),
        "coverage": data.get("coverage"),
        "refresh": data.get("stats", {}).get("refresh"),
    }
    timeline = []
    pid = (
        (first["refresh"] or {}).get("background_pid")
        if isinstance(first["refresh"], dict)
        else None
    )
    while first["coverage"] is not None and time.perf_counter() - started < 1800:
        time.sleep(args.every)
        took, code, data = search(env, args.home, args.word, "--no-refresh")
        coverage = data.get("coverage")
        stats = data.get("stats", {})
        point = {
            "t": round(time.perf_counter() - started, 1),
            "fraction": coverage["fraction"] if coverage else 1.0,
            "files": coverage["files"] if coverage else None,
            "total": stats.get("total"),
            "exit": code,
            # the search's own wall time, whether it stopped at its budget, and why
            "seconds": round(took, 2),
            "stopped": stats.get("stopped"),
            "notes": stats.get("notes"),
        }
        if not point["total"]:  # an empty answer mid-build: keep why (status, stats, errors)
            point["answer"] = {k: v for k, v in data.items() if k != "results"}
        timeline.append(point)
        if coverage is None:
            break
    if pid:
        while Path(f"/proc/{pid}").exists():
            time.sleep(0.2)
    report = {
        "home": str(args.home),
        "src": str(args.src),
        "first_search": first,
        "timeline": timeline,
        "complete_after_s": timeline[-1]["t"] if timeline else round(seconds, 2),
        "index_bytes": sum(p.stat().st_size for p in data_dir.rglob("*") if p.is_file()),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
