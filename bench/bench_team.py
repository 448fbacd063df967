"""Team benchmark: push a generated corpus to a real PostgreSQL, search it, measure its size.

    python bench/bench_team.py /work/bench-data/c1000 --work /work/bench-data/i25 [--runs 11]

Uses the local index under ``WORK/data`` (built first if missing, not timed), starts
Debian's PostgreSQL with its default durability (fsync and synchronous commits on,
256 MB shared buffers; ``tests/pg_server.py``) in ``WORK``, runs ``team init`` and
creates a writer and a reader role, then measures:

* ``agentdex team push`` (a fresh process): seconds, text MB sent, MB/s, records,
  peak RSS; then a second push with nothing changed;
* the database: total size, and the records table's heap, TOAST and each index;
* team search p50/p95 for each query class of ``bench/bench_search.py`` (the same
  queries, picked the same way): in-process (``agentdex.api.team.search``, a
  connection per search) and as a fresh ``agentdex search --team --json --limit 20``
  process, answered by the resident team searcher (``api/team_resident.py``, started
  by the first search: that start is timed apart, ``resident_start``) and with it off
  (``AGENTDEX_RESIDENT_TEAM=0``: the process imports psycopg and connects itself).

Prints one JSON document. The server is stopped and its files removed at the end.

``--reuse URLS.json`` measures a database this script's push already filled, on a
server left running (``{"admin": ..., "reader": ...}``: an owner's and a reader's
URL): no index, push or server start; ``team init`` upgrades its schema first, then
``VACUUM ANALYZE``, sizes and searches as above.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests"), str(HERE)]

from bench_search import percentiles, pick_queries  # noqa: E402

from pg_server import start_server  # noqa: E402


def run(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--reuse", type=Path, help="URLs of a pushed database (see above)")
    args = parser.parse_args()
    work = args.work.absolute()
    work.mkdir(parents=True, exist_ok=True)
    (work / "empty.toml").touch()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "AGENTDEX_DATA_DIR": str(work / "data"),
        "AGENTDEX_CONFIG": str(work / "empty.toml"),
        "AGENTDEX_MACHINE": "bench-box",
    }
    # an installed tool runs byte-compiled modules (as bench_search.py measures it)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True, env=env
    )
    os.environ.update({k: env[k] for k in ("AGENTDEX_DATA_DIR", "AGENTDEX_CONFIG")})
    agentdex = [sys.executable, "-m", "agentdex", "--home", str(args.home)]
    out: dict[str, Any] = {"home": str(args.home)}
    if args.reuse is None:
        _, indexed = run([*agentdex, "index", "--json"], env)
        assert indexed.returncode == 0, indexed.stderr
        out["index"] = json.loads(indexed.stdout)["index"]
    out["load_start"] = os.getloadavg()
    # the floor of a fresh process: the interpreter alone, and with the PostgreSQL driver
    floor = {}
    for name, code in (("python", "pass"), ("import_psycopg", "import psycopg")):
        floor[name] = percentiles([run([sys.executable, "-c", code], env)[0] for _ in range(7)])
    out["fresh_floor"] = floor

    if args.reuse is not None:
        urls = json.loads(args.reuse.read_text())
        measure(args, out, agentdex, env, urls["admin"], urls["reader"])
        print(json.dumps(out, indent=1))
        return
    server = start_server(durable=True, base_dir=work)
    try:
        import psycopg

        from agentdex.api import team as api

        db = "agentdex_bench"
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {db}")
        admin = server.url(db=db)
        api.init(admin)
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("CREATE ROLE bench_writer LOGIN PASSWORD 'w' IN ROLE agentdex_writer")
            conn.execute("CREATE ROLE bench_reader LOGIN PASSWORD 'r' IN ROLE agentdex_reader")
        writer = server.url("bench_writer", "w", db)
        reader = server.url("bench_reader", "r", db)

        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        seconds, pushed = run(
            [*agentdex, "team", "push", "--no-refresh", "--json", "--url", writer], env
        )
        assert pushed.returncode == 0, pushed.stderr
        push = json.loads(pushed.stdout)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        out["push"] = {
            "wall_seconds": round(seconds, 1),
            "seconds": push["seconds"],
            "records": push["records_added"],
            "conversations": push["conversations_sent"],
            "text_mb": round(push["bytes_sent"] / 1e6, 1),
            "mb_per_second": round(push["bytes_sent"] / 1e6 / push["seconds"], 2),
            "batches": push["batches"],
            "redactions": push["redactions"],
            "peak_rss_mb": round(max(rss, before) / 1024, 1),
        }
        unchanged = []
        for _ in range(3):
            seconds, again = run(
                [*agentdex, "team", "push", "--no-refresh", "--json", "--url", writer], env
            )
            assert again.returncode == 0, again.stderr
            assert json.loads(again.stdout)["records_added"] == 0
            unchanged.append(seconds)
        # the first of these computes every digest once more (the memo is written by the
        # first push already, so all three should read no record)
        out["push_unchanged"] = {"wall_seconds": [round(s, 2) for s in unchanged]}
        seconds, stat = run([*agentdex, "team", "status", "--json", "--url", writer], env)
        assert stat.returncode == 0, stat.stderr
        out["status_seconds"] = round(seconds, 2)
        measure(args, out, agentdex, env, admin, reader)
    finally:
        server.stop()
    print(json.dumps(out, indent=1))


def measure(
    args: argparse.Namespace,
    out: dict[str, Any],
    agentdex: list[str],
    env: dict[str, str],
    admin: str,
    reader: str,
) -> None:
    """``VACUUM ANALYZE``, the database's sizes, and team search per query class."""
    import psycopg

    from agentdex.api import team as api

    if args.reuse is not None:
        out["init"] = api.init(admin)["applied"]
    with psycopg.connect(admin, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute("VACUUM ANALYZE agentdex.records")
        out["vacuum_analyze_seconds"] = round(time.perf_counter() - started, 1)
        sizes = conn.execute(
            "SELECT pg_database_size(current_database()),"
            " pg_relation_size('agentdex.records'),"
            " pg_total_relation_size('agentdex.records') - pg_indexes_size('agentdex.records')"
            " - pg_relation_size('agentdex.records')"
        ).fetchone()
        indexes = conn.execute(
            "SELECT indexname, pg_relation_size(format('agentdex.%I', indexname)::regclass)"
            " FROM pg_indexes WHERE schemaname = 'agentdex' AND tablename = 'records'"
            " ORDER BY 2 DESC"
        ).fetchall()
    out["size_mb"] = {
        **{n: round(v / 1e6, 1) for n, v in zip(("database", "heap", "toast"), sizes, strict=True)},
        **{name: round(size / 1e6, 1) for name, size in indexes},
    }
    print(json.dumps(out), file=sys.stderr, flush=True)  # kept if a later step fails

    from agentdex.api import team_resident

    queries = pick_queries(args.home)
    out["queries"] = queries
    searches: dict[str, Any] = {}

    def fresh(words: list[str], environ: dict[str, str]) -> tuple[float, int]:
        argv = [*agentdex, "search", *words, "--team", "--json", "--limit", "20"]
        seconds, done = run([*argv, "--url", reader], environ)
        assert done.returncode in (0, 1, 7), done.stderr
        return seconds, done.returncode

    off = {**env, "AGENTDEX_RESIDENT_TEAM": "0"}
    on = {**env, "AGENTDEX_RESIDENT_TEAM": "1"}
    team_resident.stop()
    first = next(iter(queries.values()))
    out["resident_start"] = {
        "search_off_seconds": round(fresh(first, off)[0], 3),
        "search_starting_it_seconds": round(fresh(first, on)[0], 3),
    }
    for name, words in queries.items():
        regex = words[0] == "-E"
        text = " ".join(words[1:] if regex else words)
        samples = []
        found = None
        for _ in range(args.runs):
            started = time.perf_counter()
            found = api.search(text, url=reader, regex=regex, limit=20)
            samples.append(time.perf_counter() - started)
        assert found is not None
        cli: dict[str, list[float]] = {"on": [], "off": []}
        partial = 0
        for _ in range(args.cli_runs):
            for mode, environ in (("on", on), ("off", off)):  # interleaved: same conditions
                seconds, code = fresh(words, environ)
                cli[mode].append(seconds)
                partial += code == 7
        searches[name] = {
            "in_process": percentiles(samples),
            "fresh_process": percentiles(cli["on"]),
            "fresh_process_no_resident": percentiles(cli["off"]),
            "mode": found.stats["mode"],
            "total": found.stats["total"],
            "total_exact": found.stats["total_exact"],
            "records_read": found.stats["records_read"],
            "status": found.status,
            "fresh_process_partial": partial,
        }
        print(json.dumps({name: searches[name]}), file=sys.stderr, flush=True)
    out["search"] = searches
    # every search with it on was answered by it (a refused one would have searched itself)
    out["resident_requests"] = team_resident.status().get("requests")
    out["resident_stopped"] = team_resident.stop()
    out["load_end"] = os.getloadavg()


if __name__ == "__main__":
    main()
