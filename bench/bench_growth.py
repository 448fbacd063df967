"""The fresh searches' growth from one corpus to a larger one, measured so a run can be trusted.

    python bench/bench_growth.py SMALL_HOME LARGE_HOME --small-work W1 --large-work W2 \
        [--runs 41] [--warm-up 3] [--classes rare,phrase,regex,function,the] \
        [--src SRC] [--python PATH]

Issue 21's target: growth <= 1.5x, the fresh p50 at 1 GB over the fresh p50 at
250 MB of ``agentdex search QUERY --json --limit 20`` (a new process, answered by
the resident searcher), for the classes of ``bench_search.py`` (the same queries,
:func:`bench_search.pick_queries`). Two runs of ``bench_search.py`` a few minutes
apart measured it until session 17, and the rare class read 1.06, 1.55 or 1.64 by the
pair: the p50 of a fresh rare search is ~85% the client's own start (its interpreter,
its imports: ~35-90 ms of CPU by the machine's pace of the minute, the same work at
both sizes), and the resident's answer only ~5-15 ms. So here:

* **the sizes interleaved run by run** (the order turning every run): a p50 taken
  minutes apart compares two paces of the machine, not two corpora;
* **each size's resident started and warmed first** (``--warm-up`` runs of every class,
  not counted, reported apart): in ``bench_search.py`` the first class measured (rare)
  also carries the resident's start (its first run searches in its own process and
  starts the resident, its next two wait for the resident's imports and first checks);
* **each run's parts beside its wall**: the client's CPU (user + system, ``wait4``),
  the answer's own search seconds (``stats.seconds``) and its no-change check's
  (``stats.refresh.seconds``); the wall less the client's CPU (the resident's answer,
  the round trip, any wait); the machine's steal time over the whole measure. The
  growth of the answer's seconds is what the corpus changes; the client's CPU should
  not grow (it reads nothing of the home).

Reported per class: each size's p50 and p95 of the wall, the p50 of each part, the
growth of the walls' p50s (the target), the same growth over the first and the second
half of the runs (a steady measure agrees with itself), and the growth of the
answers' own seconds. The residents are stopped before and after. Works (``--*-work``)
holding no index are built first. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench_search import REFRESH, SRC, child, pick_queries, work_env
from fresh_runs import fresh_run, fresh_summary, ms_p50

STOP = r"""
from agentdex.api import search_resident
result = {"stopped": search_resident.stop()}
"""


def steal_seconds() -> float:
    """The machine's steal time so far (another guest's use of these cores), seconds."""
    try:
        with open("/proc/stat") as handle:
            return int(handle.readline().split()[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def growth(small: list[dict[str, Any]], large: list[dict[str, Any]], key: str) -> float | None:
    a, b = ms_p50([r[key] for r in small]), ms_p50([r[key] for r in large])
    return None if not a or b is None else round(b / a, 3)


def measure(
    homes: dict[str, Path],
    envs: dict[str, dict[str, str]],
    python: str,
    queries: dict[str, dict[str, list[str]]],
    runs: int,
    warm_up: int,
) -> dict[str, Any]:
    """Every class's fresh searches at each size, the sizes interleaved run by run."""

    def argv(size: str, name: str) -> list[str]:
        args = queries[size][name]
        agentdex = [python, "-m", "agentdex", "--home", str(homes[size])]
        return [*agentdex, "search", "--json", "--limit", "20", *args]

    classes = list(next(iter(queries.values())))
    warm: dict[str, dict[str, list[float]]] = {size: {} for size in homes}
    for size in homes:  # the first run starts the resident; the next ones wait for its load
        for name in classes:
            for _ in range(warm_up):
                got = fresh_run(argv(size, name), envs[size])
                warm[size].setdefault(name, []).append(round(float(got["wall"] or 0) * 1000, 1))
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {size: {} for size in homes}
    for run in range(runs):
        order = list(homes) if run % 2 == 0 else list(homes)[::-1]
        for name in classes:
            for size in order:
                samples[size].setdefault(name, []).append(fresh_run(argv(size, name), envs[size]))
    small, large = list(homes)
    half = runs // 2
    out: dict[str, Any] = {"warm_up_ms": warm}
    for name in classes:
        a, b = samples[small][name], samples[large][name]
        out[name] = {
            small: fresh_summary(a),
            large: fresh_summary(b),
            "growth": growth(a, b, "wall"),
            "growth_halves": [
                growth(a[:half], b[:half], "wall"),
                growth(a[half:], b[half:], "wall"),
            ],
            "growth_of_search": growth(a, b, "search"),
            "growth_of_cpu": growth(a, b, "cpu"),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("small", type=Path, help="the smaller corpus (250 MB)")
    parser.add_argument("large", type=Path, help="the larger corpus (1 GB)")
    parser.add_argument("--small-work", type=Path, required=True)
    parser.add_argument("--large-work", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--warm-up", type=int, default=3, help="uncounted runs a class a size")
    parser.add_argument("--classes", default="rare,phrase,regex,function,the")
    parser.add_argument("--src", type=Path, default=SRC)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    homes = {"small": args.small, "large": args.large}
    works = {"small": args.small_work, "large": args.large_work}
    classes = args.classes.split(",")
    queries = {
        size: {name: q for name, q in pick_queries(home).items() if name in classes}
        for size, home in homes.items()
    }
    envs: dict[str, dict[str, str]] = {}
    for size, work in works.items():
        work.mkdir(parents=True, exist_ok=True)
        envs[size] = work_env(work, args.src.resolve(), args.python)
        child(STOP, envs[size], args.python)  # no resident of an earlier run answers
        child(REFRESH.format(home=str(homes[size])), envs[size], args.python)  # built, current
    report: dict[str, Any] = {
        "homes": {size: str(home) for size, home in homes.items()},
        "queries": queries,
        "src": str(args.src.resolve()),
        "python": args.python,
        "runs": args.runs,
        "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    steal = steal_seconds()
    try:
        report["classes"] = measure(homes, envs, args.python, queries, args.runs, args.warm_up)
    finally:
        for env in envs.values():
            child(STOP, env, args.python)
    report["steal_s"] = round(steal_seconds() - steal, 2)
    report["ended_utc"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    report["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
