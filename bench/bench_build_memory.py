"""Cold build: wall time, the floor, and where the writer's peak RSS falls (one run per tree).

    python bench/bench_build_memory.py HOME --work DIR [--src A/src --src B/src] [--every 0.05]

A ``--src`` given twice is built twice (reported as ``SRC``, ``SRC#2``...).
Each build also reports what it stored (``sizes``: ``bench_sizes.py``'s
parts, total and ratio to HOME's bytes), read before the next build
deletes the data dir.

For each source tree (``--src``, repeatable; default this checkout's), in
this order: a fresh data dir, then the same cold build ``bench_search.py``
times (``api.refresh(home=HOME)`` in a fresh, byte-compiled process; peak
RSS from ``getrusage``: the writer, and its largest child, which for a child
that execs another program is at least the writer's own peak when it started,
so children are also sampled: highest ``VmRSS`` of the parse workers and of
the term-list child, each seen every ``--every`` s). Inside that
process a thread reads ``/proc/self/status`` every ``--every`` seconds
(VmRSS, RssAnon, RssFile, VmHWM) and notes which step of the writer runs
(``term list``: the whole term list read and written; ``postings commit``,
``commit``; ``records`` otherwise), so the report says the step, time and
split (anonymous / file-backed) of the highest sample and the highest
sample of each step. The read-and-decode floor (bench_search's) is measured
once, first. Prints one JSON document.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import CHILD, FLOOR, REFRESH, SRC
from bench_sizes import sizes

#: runs in the build's process before the build: the sampler and the step markers
SAMPLER = r"""
import threading, time
import agentdex.index.postings as _postings
import agentdex.index.writer as _writer
_step = ["records"]
_samples = []
_t0 = time.perf_counter()

def _read():
    out = {{}}
    with open("/proc/self/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) / 1024
    return out

_top = [0.0, None]

def _smaps():
    # resident MB by what is mapped: anonymous, each postings file type, other files
    out = {{}}
    name = "anon"
    with open("/proc/self/smaps") as handle:
        for line in handle:
            first = line.split(None, 1)[0]
            if "-" in first and not first.endswith(":"):
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) > 5 else ""
                if "/postings/" in path:
                    name = "postings ." + path.rsplit(".", 1)[-1]
                elif path.startswith("/"):
                    name = "other files"
                else:
                    name = "anon"
            elif first == "Rss:":
                out[name] = out.get(name, 0) + int(line.split()[1]) / 1024
    return {{k: round(v, 1) for k, v in sorted(out.items()) if v >= 0.5}}

_children = {{}}  # kind -> highest VmRSS (MB) of the build's child processes of that kind

def _sample_children():
    import glob
    for listing in glob.glob("/proc/self/task/*/children"):
        try:
            pids = open(listing).read().split()
        except OSError:
            continue
        for pid in pids:
            try:
                command = open(f"/proc/{{pid}}/cmdline", "rb").read()
                status = open(f"/proc/{{pid}}/status").read()
            except OSError:
                continue
            argv = command.split(b"\0")
            kind = "term list child" if argv[1:3] == [b"-m", b"agentdex.index.termlist"] else (
                "parse worker")
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) / 1024
                    _children[kind] = max(_children.get(kind, 0.0), rss)

def _sample_loop():
    while True:
        values = _read()
        _sample_children()
        _samples.append((time.perf_counter() - _t0, _step[0], values))
        if values["VmRSS"] > _top[0] + 1:
            _top[0] = values["VmRSS"]
            _top[1] = {{"at_s": round(time.perf_counter() - _t0, 1), "step": _step[0],
                       "VmRSS": values["VmRSS"], "mapped": _smaps()}}
        time.sleep({every})

def _marked(owner, name, step, generator=False):
    inner = getattr(owner, name, None)
    if inner is None:
        return
    if generator:
        def wrapper(*args, **kwargs):
            before = _step[0]
            _step[0] = step
            try:
                yield from inner(*args, **kwargs)
            finally:
                _step[0] = before
    else:
        def wrapper(*args, **kwargs):
            before = _step[0]
            _step[0] = step
            try:
                return inner(*args, **kwargs)
            finally:
                _step[0] = before
    setattr(owner, name, wrapper)

_marked(_postings, "all_terms", "term list", generator=True)
_marked(_postings, "write_vocabulary", "term list")
_marked(_writer, "write_term_list", "term list")  # the writer waits for its child
_marked(_postings.PostingsWriter, "commit", "postings commit")
_marked(_postings.PostingsWriter, "close", "merge wait")
_marked(_writer.IndexWriter, "end_bulk_load", "record indexes")
threading.Thread(target=_sample_loop, daemon=True).start()
"""

REPORT = r"""
_samples.append((time.perf_counter() - _t0, _step[0], _read()))
top = max(_samples, key=lambda s: s[2]["VmRSS"])
steps = {{}}
for at, step, values in _samples:
    if step not in steps or values["VmRSS"] > steps[step]["VmRSS"]:
        steps[step] = {{"at_s": round(at, 1), **values}}
result["memory"] = {{
    "samples": len(_samples),
    "vm_hwm_mb": _samples[-1][2]["VmHWM"],
    "peak_sample": {{"at_s": round(top[0], 1), "step": top[1], **top[2]}},
    "max_rss_anon_mb": max(s[2]["RssAnon"] for s in _samples),
    "by_step": steps,
    "highest_breakdown": _top[1],
    "children_vm_rss_mb": {{k: round(v, 1) for k, v in _children.items()}},
}}
"""


def cold_build(home: Path, work: Path, src: Path, every: float) -> dict[str, Any]:
    data = work / "agentdex-data"
    shutil.rmtree(data, ignore_errors=True)
    env = dict(os.environ)
    env["AGENTDEX_DATA_DIR"] = str(data)
    env["AGENTDEX_CONFIG"] = str(work / "no-config.toml")
    env["PYTHONPATH"] = str(src)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=env)
    body = SAMPLER.format(every=every) + REFRESH.format(home=str(home)) + REPORT.format()
    code = CHILD.format(src=str(src), body=body)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    report = dict(json.loads(out.stdout.strip().splitlines()[-1]))
    refresh = report.pop("refresh")
    report["records"] = refresh.get("records_added")
    report["files"] = refresh.get("files_seen")
    [index] = (data / "homes").glob("*/index")
    report["sizes"] = sizes(index, home)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--src", type=Path, action="append")
    parser.add_argument("--every", type=float, default=0.05)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "no-config.toml").write_text("")  # default settings (a missing file warns)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    floor = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD.format(
                src=str(SRC), body=FLOOR.format(home=str(args.home), loads="orjson.loads")
            ),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    floor_s = json.loads(floor.stdout.strip().splitlines()[-1])["seconds"]
    report: dict[str, Any] = {"home": str(args.home), "floor_orjson_s": round(floor_s, 2)}
    for src in args.src or [SRC]:
        build = cold_build(args.home, args.work, src.resolve(), args.every)
        build["vs_floor"] = round(build["seconds"] / floor_s, 1)
        name, again = str(src), 2
        while name in report:
            name, again = f"{src}#{again}", again + 1
        report[name] = build
        print(json.dumps({name: build}), file=sys.stderr, flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
