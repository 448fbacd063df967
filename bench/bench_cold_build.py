"""Cold builds: wall time, the floor, and where the CPU goes (per process and thread).

    python bench/bench_cold_build.py HOME --work DIR [--src A/src --src B/src] [--rounds N]
        [--workers 2 --workers 1] [--every 0.25]

Measures the read-and-decode floor (bench_search's: every store file read and each
JSON line decoded with orjson, one process) once to warm the page cache, then once
before each build and once after the last (at least three passes; the sitting's floor
is their median, each pass reported with its CPU, read and decode seconds, steal time
and load: the spread says how far the machine moved within the sitting; each build is
also divided by the mean of the passes just before and after it, ``vs_floor_beside``).
For each round, for
each source tree (``--src``, default this checkout's) and parse-worker count
(``--workers``, sets ``AGENTDEX_INDEX_WORKERS``; default the tool's own choice),
in that order (so trees alternate within a round): a fresh data dir and the
cold build ``bench_search.py`` times (``api.refresh(home=HOME)`` in a fresh,
byte-compiled process).

While a build runs, this process reads ``/proc`` of the build's process tree
every ``--every`` s and keeps each thread's CPU time (user + system), grouped
as: the writer's main thread, its other Python threads (text-block packing,
the archive's chunk packing; also by system name, ``other_python_threads_s``: the
packing thread is ``agentdex-pack``, unnamed ones ``python``), tantivy's indexing
threads, tantivy's merge threads, the parse workers (forked children), the term-list children, the
merge child (index/merging.py), other. Each build also reports its postings'
segments (``max_doc`` each, from meta.json) and the bytes of its data dir.
The build's own process also adds up the wall time spent inside the writer's
steps (``steps_s``: commits, the postings commit, the term list the writer
waits for, the record indexes, the last merges, and the writer waiting for a
parse worker's result). It also keeps the tree's CPU over time, to say how
many of the cores were busy (``busy_cores``: CPU seconds / wall seconds, and
per tenth of the build). The load
average before and after each build is noted (another job's CPU shows there).
Prints one JSON document (each build also goes to stderr as it ends).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import CHILD, FLOOR_RUNS, REFRESH, SRC, floor_pass, floor_summary

TICK = os.sysconf("SC_CLK_TCK")

#: runs in the build's process before it: wall time inside the writer's steps (nested: a
#: commit includes the archive's commit, the postings commit and a term list written there)
STEPS = r"""
import time as _time
import agentdex.archive.writer as _aw
import agentdex.index.postings as _po
import agentdex.index.writer as _iw
import agentdex.ingest.workers as _wk
_steps = {}

def _timed(owner, name, label):
    inner = getattr(owner, name)

    def wrapper(*args, **kwargs):
        started = _time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            _steps[label] = _steps.get(label, 0.0) + _time.perf_counter() - started

    setattr(owner, name, wrapper)

_timed(_iw.IndexWriter, "commit", "commit (all of it)")
_timed(_aw.ArchiveWriter, "commit", "archive commit")
_timed(_po.PostingsWriter, "commit", "postings commit")
_timed(_iw, "write_term_list", "term list (writer waits for its child)")
_timed(_iw.IndexWriter, "end_bulk_load", "record indexes")
_timed(_po.PostingsWriter, "close", "postings close (last merges)")
_timed(_iw.IndexWriter, "finish", "finish (all of it)")
if hasattr(_aw.ArchiveWriter, "derive"):  # a first build's entries made at its end
    _timed(_aw.ArchiveWriter, "derive", "archive entries made from the index's rows")
_timed(_aw.ArchiveWriter, "end_bulk_load", "archive's entry indexes")
if hasattr(_iw, "_Beside"):  # the term list and the hooks beside finish's own work (s15-tail)
    _timed(_iw._Beside, "join", "finish waits for its threads (term list, hooks)")
_timed(_wk.ParseWorkers, "next_result", "writer waits for a parse worker")
try:
    import agentdex.index.merging as _mg
except ImportError:  # a tree from before the merge into one segment
    pass
else:
    _timed(_mg, "wait", "merge into one segment (writer waits for its child)")
    _merge_wait = _mg.wait

    def _merge_report(*args, **kwargs):  # (proc) or (proc, db), as the tree's wait takes
        _steps["merge child"] = report = _merge_wait(*args, **kwargs)
        return report

    _mg.wait = _merge_report
"""


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(x) for x in handle.read().split()]
    except OSError:
        pass
    return found


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Sampler:
    """CPU time of every thread of a process tree, read from ``/proc`` until it ends."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.kinds: dict[int, str] = {root: "writer"}
        #: (pid, tid) -> (group, CPU seconds at the last look)
        self.threads: dict[tuple[int, int], tuple[str, float]] = {}
        #: the writer's other Python threads: (pid, tid) -> (system name, CPU seconds)
        self.named: dict[tuple[int, int], tuple[str, float]] = {}
        self.timeline: list[tuple[float, dict[str, float]]] = []
        self.started = time.monotonic()
        #: how often a child's command line was read; past ten it is not read again
        self.looked: dict[int, int] = {}
        self.settled: set[int] = set()

    def _kind(self, pid: int, parent: int) -> str:
        kind = self.kinds.get(pid)
        # a child started by subprocess shows its parent's command line until it execs:
        # one seen in that window looked like a parse worker, and its CPU went there (the
        # merge child's ~6 CPU-s was missing from one build of session 16), so a "parse
        # worker" is looked at again until it is old enough to have exec'd
        if kind is None or (kind == "parse worker" and pid not in self.settled):
            line = _cmdline(pid)
            self.looked[pid] = self.looked.get(pid, 0) + 1
            if self.looked[pid] >= 10:
                self.settled.add(pid)
            if self.kinds.get(parent) == "writer" and line == _cmdline(parent):
                kind = "parse worker"  # forked: the writer's own command line
            elif "agentdex.index.termlist" in line:
                kind = "term-list child"
            elif "agentdex.index.merging" in line:
                kind = "merge child"
            else:
                kind = "other"
            self.kinds[pid] = kind
        return kind

    def look(self) -> None:
        stack = [(self.root, 0)]
        while stack:
            pid, parent = stack.pop()
            kind = self._kind(pid, parent) if parent else "writer"
            stack += [(child, pid) for child in _children(pid)]
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task}/stat") as handle:
                        stat = handle.read()
                except OSError:
                    continue
                comm = stat[stat.index("(") + 1 : stat.rindex(")")]
                fields = stat[stat.rindex(")") + 2 :].split()
                cpu = (int(fields[11]) + int(fields[12])) / TICK
                tid = int(task)
                group = kind
                if kind == "writer":
                    if tid == pid:
                        group = "writer main thread"
                    elif comm.startswith("thrd-tantivy-in"):
                        group = "tantivy indexing threads"
                    elif comm.startswith("merge_thread"):
                        group = "tantivy merge threads"
                    elif comm == "python" or comm.startswith("agentdex-"):
                        # agentdex names some of its threads for the system (the packing
                        # thread: index/segments.name_os_thread); the others show as python
                        group = "writer's other Python threads"
                        self.named[(pid, tid)] = (comm, cpu)
                    else:
                        group = "writer's other threads"
                self.threads[(pid, tid)] = (group, cpu)
        self.timeline.append((time.monotonic() - self.started, self.groups()))

    def groups(self) -> dict[str, float]:
        """CPU seconds so far per group (threads that ended keep their last reading)."""
        groups: dict[str, float] = {}
        for group, cpu in self.threads.values():
            groups[group] = groups.get(group, 0.0) + cpu
        return groups

    def by_name(self) -> dict[str, float]:
        """The writer's other Python threads' CPU by their system name (``python``: not
        named)."""
        names: dict[str, float] = {}
        for comm, cpu in self.named.values():
            names[comm] = names.get(comm, 0.0) + cpu
        return {k: round(v, 1) for k, v in sorted(names.items(), key=lambda kv: -kv[1])}

    def report(self, wall: float) -> dict[str, Any]:
        groups = self.groups()
        tenth = wall / 10
        busy: list[float] = []
        by_tenth: list[dict[str, float]] = []
        edge, last_at, last = tenth, 0.0, dict[str, float]()
        # the last tenth ends at the build's end: looks after it are its final reading
        # (until session 16 it ended a tenth later, which halved the last tenth's cores)
        looks = [(at, now) for at, now in self.timeline if at < wall]
        for at, now in [*looks, (wall, groups)]:
            if at >= edge or at == wall:
                span = max(at - last_at, 1e-9)
                cores = {k: (v - last.get(k, 0.0)) / span for k, v in now.items()}
                busy.append(round(sum(cores.values()), 2))
                by_tenth.append({k: round(v, 2) for k, v in cores.items() if v >= 0.05})
                last_at, last, edge = at, now, edge + tenth
        return {
            "cpu_s": {k: round(v, 1) for k, v in sorted(groups.items(), key=lambda kv: -kv[1])},
            "cpu_total_s": round(sum(groups.values()), 1),
            "other_python_threads_s": self.by_name(),
            "busy_cores": round(sum(groups.values()) / wall, 2),
            "busy_cores_by_tenth": busy,
            "cores_by_tenth": by_tenth,
        }


def cold_build(home: Path, work: Path, src: Path, workers: str | None, every: float) -> Any:
    env = dict(os.environ)
    data = work / "agentdex-data"
    env.update(
        AGENTDEX_DATA_DIR=str(data),
        AGENTDEX_CONFIG=str(work / "no-config.toml"),
        PYTHONPATH=str(src),
        AGENTDEX_RESIDENT_EMBEDDER="0",
        AGENTDEX_BACKGROUND_EMBED="0",
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tool runs byte-compiled modules
    if workers is not None:
        env["AGENTDEX_INDEX_WORKERS"] = workers
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=env)
    shutil.rmtree(data, ignore_errors=True)
    body = (
        STEPS
        + REFRESH.format(home=str(home))
        + (
            'result["steps"] = {k: v if isinstance(v, dict) else round(v, 2)'
            " for k, v in _steps.items()}\n"
        )
    )
    code = CHILD.format(src=str(src), body=body)
    load_before = os.getloadavg()
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    sampler = Sampler(proc.pid)
    while proc.poll() is None:
        sampler.look()
        time.sleep(every)
    wall = time.monotonic() - started
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(err.decode()[-2000:])
    result = json.loads(out.decode().strip().splitlines()[-1])
    refresh = result.pop("refresh")
    segments = [
        sorted((s["max_doc"] for s in json.loads(meta.read_text())["segments"]), reverse=True)
        for meta in sorted(data.glob("**/postings/meta.json"))
    ]
    stored = sum(f.stat().st_size for f in data.rglob("*") if f.is_file())
    return {
        "seconds": round(result["seconds"], 2),
        "postings_segments": segments,
        "data_dir_bytes": stored,
        "peak_rss_mb": round(result["peak_rss_mb"], 1),
        "records": refresh["records_added"],
        "files": refresh["files_parsed"],
        "workers": refresh["workers"],
        "steps_s": result.get("steps"),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        **sampler.report(wall),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--src", type=Path, action="append")
    parser.add_argument("--workers", action="append")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--every", type=float, default=0.25)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "no-config.toml").write_text("")  # default settings (a missing file warns)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    plan = [
        (round_, src, workers)
        for round_ in range(args.rounds)
        for src in args.src or [SRC]
        for workers in args.workers or [None]
    ]
    # the floor's passes are spread over the sitting: one before each build and one after
    # the last (at least FLOOR_RUNS, the extra ones first), after a warm-up pass that may
    # read the corpus from disk (no build does: each follows a floor pass)
    warm_up = floor_pass(args.home, env)
    floors = [floor_pass(args.home, env) for _ in range(max(0, FLOOR_RUNS - len(plan) - 1))]
    report: dict[str, Any] = {
        "home": str(args.home),
        "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "builds": [],
    }
    for round_, src, workers in plan:
        floors.append(floor_pass(args.home, env))
        build = cold_build(args.home, args.work, src.resolve(), workers, args.every)
        build = {"src": str(src), "round": round_, "setting": workers, **build}
        report["builds"].append(build)
        print(json.dumps(build), file=sys.stderr, flush=True)
    floors.append(floor_pass(args.home, env))
    floor = floor_summary(floors, warm_up)
    first = len(floors) - len(plan) - 1  # the pass before the first build
    for i, build in enumerate(report["builds"]):
        build["vs_floor"] = round(build["seconds"] / floor["seconds"], 1)
        # the machine's speed drifts within a sitting: the passes just before and after
        # this build give a second ratio (docs/performance.md, s9-build)
        beside = (floors[first + i]["seconds"] + floors[first + i + 1]["seconds"]) / 2
        build["floor_beside_s"] = round(beside, 3)
        build["vs_floor_beside"] = round(build["seconds"] / beside, 1)
    report["floor_orjson_s"] = floor["seconds"]
    report["floor"] = floor
    report["ended_utc"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
