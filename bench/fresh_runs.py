"""Fresh ``agentdex search`` processes measured run by run: the wall and its parts.

Used by ``bench_search.py`` (its fresh classes) and ``bench_growth.py`` (the growth
from 250 MB to 1 GB). A fresh search answered by the resident searcher is mostly the
client's own start (its interpreter and imports: its CPU), then the resident's answer;
keeping both beside the wall tells a slower machine from a slower search.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from typing import Any


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def fresh_run(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One fresh search: its wall, the client's CPU (user + system, ``wait4``) and what
    its JSON says of the answer (``stats.seconds``, ``stats.refresh.seconds``)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout is not None else b""
    _, _status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = 0  # reaped here: keep Popen from waiting again
    if proc.stdout is not None:
        proc.stdout.close()
    search = check = None
    try:
        stats = json.loads(out)["stats"]
        search = float(stats["seconds"])
        refresh = stats.get("refresh")
        if isinstance(refresh, dict):
            check = float(refresh["seconds"])
    except (ValueError, KeyError, TypeError):
        pass
    cpu = usage.ru_utime + usage.ru_stime
    # pages the client read from disk: this workplace pages out what was not used for ~60 s
    faults = usage.ru_majflt
    return {"wall": wall, "cpu": cpu, "search": search, "check": check, "faults": faults}


def ms_p50(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return round(statistics.median(got) * 1000, 1) if got else None


def fresh_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`percentiles` of the walls, and the p50 of each part of them: the client's CPU,
    the rest (the wall less that CPU: the resident's answer, the round trip, any wait),
    the answer's own search and check seconds; every wall as measured."""
    walls = [r["wall"] for r in runs]
    return {
        **percentiles(walls),
        "cpu_p50_ms": ms_p50([r["cpu"] for r in runs]),
        "rest_p50_ms": ms_p50([r["wall"] - r["cpu"] for r in runs]),
        "search_p50_ms": ms_p50([r["search"] for r in runs]),
        "check_p50_ms": ms_p50([r["check"] for r in runs]),
        "client_major_faults": sum(r["faults"] for r in runs),
        "wall_ms": [round(w * 1000, 1) for w in walls],
    }
