"""Search benchmark: one run gives every figure docs/performance.md reports, for one corpus.

    python bench/generate_corpus.py /tmp/adx-1g --size-mb 1000
    python bench/bench_search.py /tmp/adx-1g --work /tmp/adx-bench [--runs 11] [--agrep PATH]
        [--src OTHER_CHECKOUT/src] [--no-append]

Each agentdex step runs in a fresh subprocess (byte-compiled modules), peak
RSS from ``getrusage`` (the main process, and the largest parse worker):

* the floor: read + JSON-decode every store file (orjson: the median of three passes
  after a warm-up pass, each reported with its CPU, read and decode seconds; stdlib json once);
* parse only (the real parsers, no index);
* cold ``index``: seconds, ratio to the orjson floor, peak RSS, index size;
* no-change refresh: in-process seconds and a whole ``agentdex index`` process;
* fresh-process ``agentdex search QUERY --json --limit 20`` in default mode
  (its refresh check included), p50/p95 over ``--runs`` after ``WARM_UP`` uncounted
  runs (the resident searcher started and loaded: else the first class measured
  carries its start), each with the p50 of its parts (the client's CPU, the rest of
  the wall, the answer's own search and check seconds: ``fresh_runs.py``), and in-process p50,
  for: a rare word (one record), a 3-word phrase of generated words,
  ``function``, ``the`` (first page), a regex with literals
  (``word1 (word2|zzq)``), and a filtered query;
* appending to one transcript, then a fresh search for the new text.

The growth of the fresh searches from 250 MB to 1 GB is ``bench_growth.py``'s (the
two sizes interleaved run by run), not two runs of this script minutes apart.

``--src`` measures another checkout's code with this script (a before/after
pair in one sitting); ``--no-append`` leaves the corpus untouched (the
append step writes into HOME: skip it on a shared, read-only corpus).

``--reuse`` keeps an index already built in ``--work`` (a copy of one) and
measures only the searches: no floor, parse or cold build (a refresh first,
so the index is current). ``--against SRC --against-work DIR`` (repeatable)
measures only the same fresh and in-process searches, by this code and by
other checkouts each on its own work dir, interleaved run by run (an A/B in
one sitting; a work dir holding no index is built first).

``--python PATH`` runs every agentdex process with that interpreter (e.g. a
clean venv from ``bench/make_venv.py``: this machine's shared interpreter
pays ~45 ms at every start that a user's install does not);
``--against-python PATH`` (one per ``--against``) gives another checkout its
own, so ``--against SRC --against-work W --against-python OTHER`` with the
same SRC and W is an A/B of two interpreters.

``--agrep PATH`` runs agrep (its own venv's executable, lexical, embeddings
off) on the same home: cold index until its search database is ready,
no-change index, and the same fresh searches. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fresh_runs import fresh_run, fresh_summary, percentiles

SRC = Path(__file__).resolve().parent.parent / "src"
PYTHON = sys.executable  # the interpreter of every agentdex process (--python)

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
import json, orjson, os
from agentdex.discovery import discover
loads = {loads}
cpu0 = os.times()
total = 0
read_s = decode_s = 0.0
for source in discover({home!r}).sources:
    if source.row.parser is None:
        continue
    t0 = time.perf_counter()
    with open(source.path, "rb") as handle:
        data = handle.read()
    t1 = time.perf_counter()
    total += len(data)
    for line in data.splitlines():
        if line.strip():
            loads(line)
    read_s += t1 - t0
    decode_s += time.perf_counter() - t1
cpu1 = os.times()
result = {{"bytes": total, "read_s": round(read_s, 3), "decode_s": round(decode_s, 3),
          "cpu_s": round(cpu1.user + cpu1.system - cpu0.user - cpu0.system, 3)}}
"""

#: fresh searches run before the measured ones, not counted (see :func:`searches`)
WARM_UP = 3

#: how many passes of the floor count (their median); one more pass before them warms the
#: page cache and is reported apart (the builds read a corpus the floor just read)
FLOOR_RUNS = 3


def floor_pass(home: Path, env: dict[str, str], python: str | None = None) -> dict[str, Any]:
    """One pass of the orjson floor in a fresh process: wall, CPU, read and decode seconds,
    and the machine's steal time during it (another guest's use of this core)."""
    steal = _steal_ticks()
    load = os.getloadavg()[0]
    run = child(FLOOR.format(home=str(home), loads="orjson.loads"), env, python)
    run["steal_s"] = round((_steal_ticks() - steal) / os.sysconf("SC_CLK_TCK"), 2)
    run["load_1min"] = round(load, 2)
    run["seconds"] = round(run["seconds"], 3)
    run.pop("peak_rss_workers_mb", None)
    return run


def floor_summary(runs: list[dict[str, Any]], warm_up: dict[str, Any] | None) -> dict[str, Any]:
    """The floor of a sitting: the median of its passes, each pass, and their spread
    (slowest / fastest - 1)."""
    seconds = [r["seconds"] for r in runs]
    return {
        "seconds": round(statistics.median(seconds), 3),
        "spread": round(max(seconds) / min(seconds) - 1, 3),
        "runs": runs,
        "warm_up": warm_up,
    }


def _steal_ticks() -> int:
    try:
        with open("/proc/stat") as handle:
            return int(handle.readline().split()[8])
    except (OSError, IndexError, ValueError):
        return 0


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
stats = api.refresh(home={home!r})
result = {{"refresh": stats.to_json()}}
"""

IN_PROCESS = r"""
import statistics, time
from agentdex.api import search as api
out = {{}}
for name, (text, regex) in {queries!r}.items():
    samples = []
    for _ in range({runs}):
        t = time.perf_counter()
        found = api.search(text, home={home!r}, refresh_first=False, regex=regex, limit=20)
        samples.append(time.perf_counter() - t)
    out[name] = {{"p50_ms": round(statistics.median(samples) * 1000, 1),
                  "total": found.stats["total"], "total_exact": found.stats["total_exact"],
                  "matched_records": found.stats.get("matched_records"),
                  "mode": found.stats["mode"]}}
result = {{"queries": out}}
"""


def child(body: str, env: dict[str, str], python: str | None = None) -> dict[str, Any]:
    code = CHILD.format(src=env.get("PYTHONPATH", str(SRC)), body=body)
    out = subprocess.run(
        [python or PYTHON, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def wall(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, capture_output=True, env=env, check=False)
    return time.perf_counter() - started


def dir_size(path: Path) -> int:
    """Bytes on disk under ``path``, each file once (the archive hard-links the index's
    text blocks: the same bytes under two names)."""
    sizes: dict[tuple[int, int], int] = {}
    if path.exists():
        for p in path.rglob("*"):
            if p.is_file():
                st = p.stat()
                sizes[(st.st_dev, st.st_ino)] = st.st_size
    return sum(sizes.values())


def pick_queries(home: Path) -> dict[str, list[str]]:
    """The query of each class, chosen from the corpus deterministically."""
    counts: dict[str, int] = {}
    phrase = None
    for path in sorted(home.rglob("*.jsonl")):
        data = path.read_bytes()
        for token in re.findall(rb"zq\d{7}\b", data):
            counts[token.decode()] = counts.get(token.decode(), 0) + 1
        if phrase is None and "/.claude/" in str(path):
            import orjson

            first = orjson.loads(data.splitlines()[0])
            words = str(first["message"]["content"]).split()
            for i in range(1, len(words) - 2):
                if all(re.fullmatch(r"[a-z]{6,}", w) for w in words[i : i + 3]):
                    phrase = words[i : i + 3]  # three adjacent generated words
                    break
    rare = sorted(token for token, n in counts.items() if n == 1)[0]
    assert phrase is not None
    return {
        "rare": [rare],
        "phrase": [f'"{" ".join(phrase)}"'],
        "function": ["function"],
        "the": ["the"],
        "regex": ["-E", f"{phrase[0]} ({phrase[1]}|zzq)"],
        "filtered": ["agent:codex", "since:2026-10-01", "timeout"],
    }


def append_one(home: Path) -> tuple[Path, str]:
    """Append a real-format exchange with a new word to one Claude transcript."""
    import orjson

    path = sorted((home / ".claude" / "projects").rglob("*.jsonl"))[0]
    last = orjson.loads(path.read_bytes().splitlines()[-1])
    token = "zqappended" + os.urandom(4).hex()
    for kind, text in (("user", f"appended {token} question"), ("assistant", "appended answer")):
        line = dict(
            last,
            type=kind,
            uuid=os.urandom(8).hex(),
            timestamp=time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            message={"role": kind, "content": text},
        )
        with open(path, "ab") as handle:
            handle.write(orjson.dumps(line) + b"\n")
    return path, token


def work_env(work: Path, src: Path, python: str | None = None) -> dict[str, str]:
    """The environment of a fresh agentdex process on ``work`` running ``src``'s code
    (byte-compiled by ``python``, the interpreter that will run it)."""
    env = dict(os.environ)
    env["AGENTDEX_DATA_DIR"] = str(work / "agentdex-data")
    env["AGENTDEX_CONFIG"] = str(work / "no-config.toml")
    (work / "no-config.toml").write_text("")  # default settings (a missing file warns)
    env["PYTHONPATH"] = str(src)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tool runs byte-compiled modules
    subprocess.run([python or PYTHON, "-m", "compileall", "-q", str(src)], check=True, env=env)
    return env


def in_process_queries(queries: dict[str, list[str]]) -> dict[str, tuple[str, bool]]:
    return {
        name: (" ".join(args[1:]) if args[0] == "-E" else " ".join(args), args[0] == "-E")
        for name, args in queries.items()
    }


def bench_agentdex(
    home: Path,
    work: Path,
    runs: int,
    queries: dict[str, list[str]],
    *,
    append: bool = True,
    reuse: bool = False,
) -> Any:
    env = work_env(work, SRC)
    report: dict[str, Any] = {}
    if reuse and (work / "agentdex-data" / "homes").is_dir():
        report["reused"] = child(REFRESH.format(home=str(home)), env)
        return searches(home, env, runs, queries, report, append=append)
    shutil.rmtree(work / "agentdex-data", ignore_errors=True)
    warm_up = floor_pass(home, env)
    report["floor_orjson"] = floor_summary(
        [floor_pass(home, env) for _ in range(FLOOR_RUNS)], warm_up
    )
    report["floor_stdlib"] = child(FLOOR.format(home=str(home), loads="json.loads"), env)
    report["parse_only"] = child(PARSE.format(home=str(home)), env)
    cold = child(REFRESH.format(home=str(home)), env)
    report["cold_index"] = cold
    # one index per home: <data dir>/homes/<home key>/index (archive beside it)
    report["index_bytes"] = dir_size(work / "agentdex-data" / "homes")
    agentdex = [PYTHON, "-m", "agentdex", "--home", str(home)]
    noop = [child(REFRESH.format(home=str(home)), env) for _ in range(5)]
    report["no_change_refresh"] = {
        "in_process_ms": round(statistics.median(r["refresh"]["seconds"] for r in noop) * 1000, 1),
        "fast_path": all(r["refresh"]["fast_path"] for r in noop),
        "files": noop[0]["refresh"]["files_seen"],
        "index_process": percentiles([wall([*agentdex, "index", "--json"], env) for _ in range(5)]),
    }
    return searches(home, env, runs, queries, report, append=append)


def searches(
    home: Path,
    env: dict[str, str],
    runs: int,
    queries: dict[str, list[str]],
    report: dict[str, Any],
    *,
    append: bool,
) -> Any:
    agentdex = [PYTHON, "-m", "agentdex", "--home", str(home)]
    inproc = in_process_queries(queries)
    report["in_process"] = child(IN_PROCESS.format(home=str(home), queries=inproc, runs=runs), env)[
        "queries"
    ]
    fresh: dict[str, Any] = {}
    argvs = {
        name: [*agentdex, "search", "--json", "--limit", "20", *args]
        for name, args in queries.items()
    }
    # the resident started and warmed first: else the first class measured carries its start
    # (its first run searches in its own process and starts one, the next wait for its load)
    first = next(iter(argvs.values()))
    report["fresh_warm_up_ms"] = [
        round(fresh_run(first, env)["wall"] * 1000, 1) for _ in range(WARM_UP)
    ]
    for name, argv in argvs.items():
        fresh[name] = fresh_summary([fresh_run(argv, env) for _ in range(runs)])
    report["fresh_search"] = fresh
    if not append:
        return report
    _path, token = append_one(home)
    report["append_then_search_s"] = round(
        wall([*agentdex, "search", "--json", "--limit", "20", token], env), 3
    )
    out = subprocess.run(
        [*agentdex, "search", "--json", token], capture_output=True, text=True, env=env
    )
    report["appended_found"] = json.loads(out.stdout)["stats"]["total"]
    return report


def against(
    home: Path,
    this: tuple[Path, Path, str],
    others: list[tuple[Path, Path, str]],
    runs: int,
) -> dict[str, Any]:
    """Fresh and in-process searches by several (work dir, checkout, interpreter)s,
    interleaved run by run (the order turns every run); a work dir without an index is
    built first. Names: ``this``, ``against``, ``against2``..."""
    queries = pick_queries(home)
    envs: dict[str, dict[str, str]] = {}
    named = [("this", this)] + [
        ("against" if i == 0 else f"against{i + 1}", other) for i, other in enumerate(others)
    ]
    pythons = {name: python for name, (_, _, python) in named}
    for name, (work, src, python) in named:
        work.mkdir(parents=True, exist_ok=True)
        envs[name] = work_env(work, src, python)
        child(REFRESH.format(home=str(home)), envs[name], python)  # builds, or updates it
    fresh: dict[str, dict[str, list[float]]] = {name: {} for name in envs}
    inproc = in_process_queries(queries)
    out: dict[str, Any] = {
        "src": {name: str(src) for name, (_, src, _) in named},
        "python": pythons,
        "runs": runs,
    }
    for name, env in envs.items():
        body = IN_PROCESS.format(home=str(home), queries=inproc, runs=runs)
        out.setdefault(name, {})["in_process"] = child(body, env, pythons[name])["queries"]
    for run in range(runs):
        turn = run % len(envs)
        order = list(envs)[turn:] + list(envs)[:turn]
        for query, args in queries.items():
            for name in order:
                agentdex = [pythons[name], "-m", "agentdex", "--home", str(home)]
                argv = [*agentdex, "search", "--json", "--limit", "20", *args]
                fresh[name].setdefault(query, []).append(wall(argv, envs[name]))
    for name, got in fresh.items():
        out[name]["fresh_search"] = {query: percentiles(s) for query, s in got.items()}
    for name in list(envs)[1:]:
        out[f"fresh_p50_this_over_{name}"] = {
            query: round(
                out["this"]["fresh_search"][query]["p50_ms"]
                / out[name]["fresh_search"][query]["p50_ms"],
                3,
            )
            for query in queries
        }
    return out


def bench_agrep(agrep: str, home: Path, work: Path, runs: int, queries: dict[str, Any]) -> Any:
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
    subprocess.run([agrep, "set", "embeddings", "off"], env=env, capture_output=True, check=True)
    started = time.perf_counter()
    subprocess.run([agrep, "index", "--full"], env=env, capture_output=True, check=False)
    indexed = time.perf_counter() - started
    while time.perf_counter() - started < 3600:
        status = subprocess.run(
            [agrep, "status", "--json"], env=env, capture_output=True, text=True, check=False
        )
        if json.loads(status.stdout or "{}").get("search_index_ready") is True:
            break
        time.sleep(0.5)
    ready = time.perf_counter() - started
    report: dict[str, Any] = {
        "index_returned_s": round(indexed, 2),
        "search_ready_s": round(ready, 2),
        "no_change_index": percentiles([wall([agrep, "index"], env) for _ in range(5)]),
        "index_bytes": dir_size(base),
    }
    fresh = {}
    for name, args in queries.items():
        argv = [agrep, "search", "--lexical", "--no-auto", "--json", "-n", "20"]
        if args[0] == "-E":
            argv += ["-E", " ".join(args[1:])]
        elif name == "filtered":
            argv += ["--agent", "codex", "--since", "2026-10-01", "timeout"]
        else:
            argv += [a.strip('"') for a in args]
        fresh[name] = percentiles([wall(argv, env) for _ in range(runs)])
    report["fresh_search"] = fresh
    subprocess.run(["pkill", "-f", f"{base}"], check=False)  # its background daemon
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, default=Path("/tmp/adx-bench"))
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--agrep", help="path to an agrep 0.4.6 executable (its own venv)")
    parser.add_argument("--src", type=Path, help="measure this agentdex source tree instead")
    parser.add_argument("--no-append", action="store_true", help="never write into HOME")
    parser.add_argument("--reuse", action="store_true", help="search the index --work holds")
    parser.add_argument(
        "--against", type=Path, action="append", help="another checkout's src, interleaved"
    )
    parser.add_argument("--against-work", type=Path, action="append", help="its own work dir")
    parser.add_argument("--python", help="the interpreter of every agentdex process")
    parser.add_argument(
        "--against-python", action="append", help="an --against's interpreter (default --python)"
    )
    args = parser.parse_args()
    if (args.against is None) != (args.against_work is None):
        parser.error("--against and --against-work go together")
    global PYTHON, SRC
    if args.python is not None:
        PYTHON = args.python
    if args.src is not None:
        SRC = args.src.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    queries = pick_queries(args.home)
    report: dict[str, Any] = {"home": str(args.home), "queries": queries}
    if args.agrep:
        report["agrep"] = bench_agrep(args.agrep, args.home, args.work, args.runs, queries)
    if args.against is not None:
        if len(args.against) != len(args.against_work):
            parser.error("one --against-work per --against")
        pythons = args.against_python or [PYTHON] * len(args.against)
        if len(pythons) != len(args.against):
            parser.error("one --against-python per --against")
        others = [
            (w, s.resolve(), p)
            for s, w, p in zip(args.against, args.against_work, pythons, strict=True)
        ]
        report["against"] = against(args.home, (args.work, SRC, PYTHON), others, args.runs)
        report["src"] = str(SRC)
        report["python"] = PYTHON
        print(json.dumps(report, indent=2))
        return
    ad = bench_agentdex(
        args.home, args.work, args.runs, queries, append=not args.no_append, reuse=args.reuse
    )
    report["agentdex"] = ad
    if "cold_index" not in ad:
        report["src"] = str(SRC)
        report["python"] = PYTHON
        print(json.dumps(report, indent=2))
        return
    ad["ratios"] = {
        "cold_index_vs_orjson_floor": round(
            ad["cold_index"]["seconds"] / ad["floor_orjson"]["seconds"], 2
        ),
        "index_vs_corpus_size": round(ad["index_bytes"] / ad["parse_only"]["bytes"], 2),
    }
    report["src"] = str(SRC)
    report["python"] = PYTHON
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
