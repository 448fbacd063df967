"""Trace the writer's memory through a cold build: where and when its peak RSS falls.

    python bench/trace_build_memory.py HOME --work DIR [--src A/src --src B/src]
        [--every 0.2] [--traces DIR] [--python PY] [--env NAME=VALUE ...]

For each ``--src`` (repeatable, built in this order; default this checkout's): a fresh
data dir under ``--work``, then the cold build ``bench_search.py`` times
(``api.refresh(home=HOME)`` in a fresh, byte-compiled process), with
``bench/_memtrace.py`` sampling the writer every ``--every`` s: VmRSS, RssAnon,
RssFile, RssShmem, VmHWM, glibc malloc's bytes in use and free-but-kept, Python's block
count, the postings' segment files, the children's VmRSS (parse workers, term-list and
merge children), with begin/end markers of the writer's steps (commits, postings
commits, malloc trims, the archive's flushes and commits, the record indexes, the term
list, the merge child's start and wait, ``finish``). Prints one JSON report: per build
the wall time, ``ru_maxrss`` (``peak_rss_mb``, what bench_search reports), the highest
sample with its smaps breakdown, the steps that ran in the 3 s before it and the
highest sample of each step; the raw samples and events of each build go to
``--traces`` (JSON lines, one file per build). ``--env`` sets a variable in the builds
(e.g. a setting under test), per build when given as ``--env-for INDEX NAME=VALUE``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_search import CHILD, REFRESH, SRC  # noqa: E402

BODY = """
sys.path.insert(0, {bench!r})
import _memtrace
_memtrace.start({every!r}, {data!r})
{refresh}
result["memory"] = _memtrace.report({trace!r})
"""


def cold_build(
    home: Path,
    work: Path,
    src: Path,
    every: float,
    trace: Path | None,
    python: str,
    extra: dict[str, str],
) -> dict[str, Any]:
    data = work / "agentdex-data"
    shutil.rmtree(data, ignore_errors=True)
    env = dict(os.environ)
    env.update(extra)
    env["AGENTDEX_DATA_DIR"] = str(data)
    env["AGENTDEX_CONFIG"] = str(work / "no-config.toml")
    env["AGENTDEX_RESIDENT_EMBEDDER"] = "0"
    env["PYTHONPATH"] = str(src)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([python, "-m", "compileall", "-q", str(src)], check=True, env=env)
    body = BODY.format(
        bench=str(BENCH),
        every=every,
        data=str(data),
        refresh=REFRESH.format(home=str(home)),
        trace=str(trace) if trace else None,
    )
    code = CHILD.format(src=str(src), body=body)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    report = dict(json.loads(out.stdout.strip().splitlines()[-1]))
    refresh = report.pop("refresh")
    report["records"] = refresh.get("records_added")
    report["bytes_parsed"] = refresh.get("bytes_parsed")
    report.pop("peak_rss_workers_mb", None)  # a child that execs inherits the writer's high
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--src", type=Path, action="append")
    parser.add_argument("--every", type=float, default=0.2)
    parser.add_argument("--traces", type=Path)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument(
        "--env-for", action="append", nargs=2, default=[], metavar=("INDEX", "NAME=VALUE")
    )
    parser.add_argument("--keep", action="store_true", help="leave the last build's data dir")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "no-config.toml").write_text("")  # default settings (a missing file warns)
    if args.traces:
        args.traces.mkdir(parents=True, exist_ok=True)
    common = dict(item.split("=", 1) for item in args.env)
    report: dict[str, Any] = {"home": str(args.home), "builds": []}
    for number, src in enumerate(args.src or [SRC]):
        extra = dict(common)
        extra.update(value.split("=", 1) for index, value in args.env_for if int(index) == number)
        trace = args.traces / f"build-{number}.jsonl" if args.traces else None
        build = cold_build(
            args.home, args.work, src.resolve(), args.every, trace, args.python, extra
        )
        build = {"src": str(src), "env": extra, **build}
        report["builds"].append(build)
        memory = build["memory"]
        print(
            json.dumps(
                {
                    "src": str(src),
                    "env": extra,
                    "seconds": round(build["seconds"], 1),
                    "peak_rss_mb": round(build["peak_rss_mb"], 1),
                    "peak_sample": memory["peak_sample"],
                }
            ),
            file=sys.stderr,
            flush=True,
        )
    if not args.keep:
        shutil.rmtree(args.work / "agentdex-data", ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
