"""Search benchmark: one run reports the floor, parsing, indexing, refresh and query latency.

    python bench/generate_corpus.py /tmp/adx-corpus --size-mb 250 --files 10000
    python bench/bench_search.py /tmp/adx-corpus [--work /tmp/adx-bench] [--agrep]

Measures (each agentdex step in a fresh subprocess, peak RSS from getrusage):
the floor (read + JSON-decode every store file with orjson and with the
stdlib), parse-only throughput and peak RSS, cold ``agentdex index`` time,
MB/s and peak RSS, no-change refresh, refresh after appending to 100 files,
query latency p50/p95 in-process and as a fresh ``agentdex search`` process,
and the index size. With ``--agrep`` (and agrep installed) the peer runs side
by side on the same home. Prints one JSON document; docs/performance.md
records a run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"
QUERIES: dict[str, Any] = {
    "selective": "",  # filled by pick_queries(): a rare token present in the corpus
    "common": "function",
    "phrase": "",  # filled by pick_queries(): two adjacent words of a real prompt
    "regex": ["-E", r"zq1234\d+"],
    "filtered": "agent:codex since:30d timeout",
}


def pick_queries(home: Path) -> None:
    """Pick a selective token and a phrase that exist in the corpus (deterministically)."""
    import re

    import orjson

    for path in sorted((home / ".claude" / "projects").rglob("*.jsonl")):
        data = path.read_text()
        token = re.search(r"zq\d{4,}", data)
        if token and not QUERIES["selective"]:
            QUERIES["selective"] = token.group(0)
        if not QUERIES["phrase"]:
            first = orjson.loads(data.splitlines()[0])
            words = str(first["message"]["content"]).split()
            if len(words) >= 4:
                QUERIES["phrase"] = f'"{words[1]} {words[2]}"'
        if QUERIES["selective"] and QUERIES["phrase"]:
            return


CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {src!r})
started = time.perf_counter()
{body}
print(json.dumps({{"seconds": time.perf_counter() - started,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "peak_rss_workers_mb":
                      resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  **result}}))
"""

FLOOR = r"""
import json, os, orjson
from agentdex.discovery import discover
found = discover({home!r})
loads = {loads}
total = 0
for source in found.sources:
    if source.row.parser is None:
        continue
    with open(source.path, "rb") as handle:
        data = handle.read()
    total += len(data)
    if source.path.suffix == ".jsonl":
        for line in data.splitlines():
            if line.strip():
                loads(line)
    elif source.path.suffix == ".json":
        loads(data)
result = {{"bytes": total}}
"""

PARSE = r"""
from agentdex.discovery import discover
from agentdex.parsers import ParseCursor, run
from agentdex.readers import Diagnostics
found = discover({home!r})
records = size = 0
for source in found.sources:
    if source.row.parser is None:
        continue
    size += source.size
    for _ in run(source, ParseCursor(), Diagnostics()):
        records += 1
result = {{"records": records, "bytes": size, "files": len(found.sources)}}
"""

REFRESH = r"""
from agentdex.api import search as api
stats = api.refresh(home={home!r}, full={full!r})
result = {{"refresh": stats.to_json()}}
"""

FRESH_SEARCH = r"""
from agentdex.cli import main
try:
    main(["--home", {home!r}, "search", "--no-refresh", "--json", *{args!r}])
except SystemExit:
    pass
result = {{}}
"""


def child(body: str, env: dict[str, str]) -> dict[str, Any]:
    code = CHILD.format(src=str(SRC), body=body)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def append_to_files(home: Path, count: int) -> int:
    """Append one real-format user+assistant exchange to ``count`` Claude transcripts."""
    import orjson

    files = sorted((home / ".claude" / "projects").rglob("*.jsonl"))[:count]
    for path in files:
        with open(path, "rb") as handle:
            last = orjson.loads(handle.read().splitlines()[-1])
        for kind, text in (
            ("user", "appended zqappend question"),
            ("assistant", "appended answer"),
        ):
            line = dict(
                last,
                type=kind,
                uuid=os.urandom(8).hex(),
                timestamp=time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                message={"role": kind, "content": text},
            )
            with open(path, "ab") as handle:
                handle.write(orjson.dumps(line) + b"\n")
    return len(files)


def bench_agentdex(home: Path, work: Path, runs: int) -> dict[str, Any]:
    env = dict(os.environ)
    env["AGENTDEX_DATA_DIR"] = str(work / "agentdex-data")
    env["AGENTDEX_CONFIG"] = str(work / "no-config.toml")
    env["PYTHONPATH"] = str(SRC)
    # measure an installed tool: byte-compiled modules, not a compile on every start
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC)], check=True, env=env)
    shutil.rmtree(work / "agentdex-data", ignore_errors=True)
    report: dict[str, Any] = {}
    report["floor_orjson"] = child(FLOOR.format(home=str(home), loads="orjson.loads"), env)
    report["floor_stdlib"] = child(FLOOR.format(home=str(home), loads="json.loads"), env)
    report["parse_only"] = child(PARSE.format(home=str(home)), env)
    cold = child(REFRESH.format(home=str(home), full=False), env)
    report["cold_index"] = cold
    size_mb = report["parse_only"]["bytes"] / 1e6
    cold["mb_per_s"] = round(size_mb / cold["seconds"], 1)
    report["index_bytes"] = dir_size(work / "agentdex-data" / "index")
    noop = [child(REFRESH.format(home=str(home), full=False), env) for _ in range(3)]
    report["no_change_refresh"] = {
        "median_s": round(statistics.median(r["refresh"]["seconds"] for r in noop), 3),
        "process_median_s": round(statistics.median(r["seconds"] for r in noop), 3),
        "files": noop[0]["refresh"]["files_seen"],
    }
    appended = append_to_files(home, 100)
    after = child(REFRESH.format(home=str(home), full=False), env)
    report["refresh_after_append"] = {
        "files_appended": appended,
        **after["refresh"],
        "process_seconds": after["seconds"],
    }

    sys.path.insert(0, str(SRC))
    os.environ.update({k: env[k] for k in ("AGENTDEX_DATA_DIR", "AGENTDEX_CONFIG")})
    from agentdex.api import search as api

    latency: dict[str, Any] = {}
    for name, query in QUERIES.items():
        args = query if isinstance(query, list) else [query]
        regex = args[0] == "-E"
        text = " ".join(args[1:] if regex else args)
        samples, total = [], 0
        for _ in range(runs):
            started = time.perf_counter()
            result = api.search(text, home=str(home), refresh_first=False, regex=regex)
            samples.append(time.perf_counter() - started)
            total = result.stats["total"]
        fresh = []
        for _ in range(max(3, runs // 4)):
            started = time.perf_counter()
            child(FRESH_SEARCH.format(home=str(home), args=args), env)
            fresh.append(time.perf_counter() - started)
        latency[name] = {
            "query": " ".join(args),
            "matches": total,
            "in_process": percentiles(samples),
            "fresh_process": percentiles(fresh),
        }
    report["query_latency"] = latency
    return report


def bench_agrep(home: Path, work: Path) -> dict[str, Any]:
    if shutil.which("agrep") is None:
        return {"status": "not installed"}
    base = work / "agrep-env"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    env = dict(
        os.environ,
        HOME=str(home),
        XDG_DATA_HOME=str(base / "data"),
        XDG_CACHE_HOME=str(base / "cache"),
        XDG_STATE_HOME=str(base / "state"),
        XDG_CONFIG_HOME=str(base / "config"),
    )

    def timed(args: list[str]) -> dict[str, Any]:
        wrapper = (
            "import resource, subprocess, sys, time, json; t = time.perf_counter();"
            "p = subprocess.run(sys.argv[1:], capture_output=True);"
            "print(json.dumps({'seconds': time.perf_counter() - t, 'rc': p.returncode,"
            " 'peak_rss_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))"
        )
        out = subprocess.run(
            [sys.executable, "-c", wrapper, *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        return dict(json.loads(out.stdout))

    report: dict[str, Any] = {"cold_index": timed(["agrep", "index", "--full"])}
    report["no_change_refresh"] = timed(["agrep", "index"])
    report["index_bytes"] = dir_size(base)
    report["fresh_search"] = {
        name: percentiles(
            [
                timed(
                    ["agrep", "search", "--no-auto", "--json", *(q if isinstance(q, list) else [q])]
                )["seconds"]
                for _ in range(5)
            ]
        )
        for name, q in QUERIES.items()
        if name != "regex"
    }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, default=Path("/tmp/adx-bench"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--agrep", action="store_true", help="run agrep side by side")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    pick_queries(args.home)
    report: dict[str, Any] = {
        "home": str(args.home),
        "agentdex": bench_agentdex(args.home, args.work, args.runs),
    }
    ad = report["agentdex"]
    ad["ratios"] = {
        "cold_index_vs_orjson_floor": round(
            ad["cold_index"]["seconds"] / ad["floor_orjson"]["seconds"], 1
        ),
        "cold_index_vs_parse_only": round(
            ad["cold_index"]["seconds"] / ad["parse_only"]["seconds"], 2
        ),
        "index_vs_corpus_size": round(ad["index_bytes"] / ad["parse_only"]["bytes"], 2),
    }
    if args.agrep:
        report["agrep"] = bench_agrep(args.home, args.work)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
