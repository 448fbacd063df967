"""In-process memory trace of a build (imported by ``bench/trace_build_memory.py``'s child).

:func:`start` wraps the writer's steps with markers (begin/end events) and starts a
daemon thread that reads ``/proc/self/status`` (VmRSS, RssAnon, RssFile, RssShmem,
VmHWM), glibc's ``mallinfo2`` (bytes in use and free-but-kept by malloc, Rust's and
Python's big blocks alike), Python's allocated block count, the postings folder's
segment files and the children's ``VmRSS`` by kind, every ``every`` seconds. At each
new high of ``VmRSS`` it also reads ``smaps`` (resident MB by mapping: anonymous, heap,
postings files by type, other files). :func:`report` sums it up; the raw samples and
events go to a JSON-lines file.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

_t0 = time.perf_counter()
_samples: list[dict[str, Any]] = []
_events: list[tuple[float, str, str]] = []
_stack: list[str] = []
_top: dict[str, Any] = {"rss": 0.0, "at": None}
_postings: list[Path] = []


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


try:
    _libc: Any = ctypes.CDLL(None)
    _mallinfo2: Any = _libc.mallinfo2
    _mallinfo2.restype = _Mallinfo2
except (OSError, AttributeError):
    _mallinfo2 = None
try:
    _sqlite_used: Any = ctypes.CDLL("libsqlite3.so.0").sqlite3_memory_used
    _sqlite_used.restype = ctypes.c_int64
except (OSError, AttributeError):
    _sqlite_used = None


def _now() -> float:
    return round(time.perf_counter() - _t0, 3)


def _status() -> dict[str, float]:
    out: dict[str, float] = {}
    with open("/proc/self/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
                out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


def _malloc() -> dict[str, float]:
    if _mallinfo2 is None:
        return {}
    info = _mallinfo2()
    mb = 1 / (1 << 20)
    # in use: small/medium chunks in use + mmapped chunks; kept: free chunks malloc holds
    return {
        "malloc_used": round((info.uordblks + info.hblkhd) * mb, 1),
        "malloc_free": round(info.fordblks * mb, 1),
        "malloc_mmapped": round(info.hblkhd * mb, 1),
        "sqlite": round(_sqlite_used() * mb, 1) if _sqlite_used is not None else None,
    }


def _smaps() -> dict[str, float]:
    out: dict[str, float] = {}
    name = "anon"
    with open("/proc/self/smaps") as handle:
        for line in handle:
            first = line.split(None, 1)[0]
            if "-" in first and not first.endswith(":"):
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) > 5 else ""
                if "/postings/" in path:
                    name = "postings ." + path.rsplit(".", 1)[-1]
                elif path == "[heap]":
                    name = "heap (brk)"
                elif path.startswith("/"):
                    name = "other files"
                elif path.startswith("["):
                    name = path
                else:
                    name = "anon (mmap)"
            elif first == "Rss:":
                out[name] = out.get(name, 0) + int(line.split()[1]) / 1024
    return {k: round(v, 1) for k, v in sorted(out.items()) if v >= 0.5}


def _child_kind(argv: list[bytes]) -> str:
    if b"agentdex.index.termlist" in argv:
        return "termlist"
    if b"agentdex.index.merging" in argv:
        return "merge"
    return "worker"


def _children() -> dict[str, float]:
    out: dict[str, float] = {}
    for listing in glob.glob("/proc/self/task/*/children"):
        try:
            pids = Path(listing).read_text().split()
        except OSError:
            continue
        for pid in pids:
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    kind = _child_kind(argv)
                    rss = round(int(line.split()[1]) / 1024, 1)
                    out[kind] = max(out.get(kind, 0.0), rss)
    return out


def _segments() -> int | None:
    if not _postings:
        found = glob.glob(os.path.join(_data, "homes", "*", "index", "gen-*", "postings"))
        if not found:
            return None
        _postings.append(Path(found[-1]))
    try:
        return sum(1 for name in os.listdir(_postings[0]) if name.endswith(".idx"))
    except OSError:
        return None


def _sample() -> dict[str, Any]:
    values: dict[str, Any] = {"t": _now(), "step": "/".join(_stack) or "records"}
    values.update(_status())
    values.update(_malloc())
    values["py_blocks_k"] = sys.getallocatedblocks() // 1000
    values["segments"] = _segments()
    values["children"] = _children()
    return values


def _loop(every: float) -> None:
    while True:
        values = _sample()
        _samples.append(values)
        if values["VmRSS"] > _top["rss"] + 1:
            _top["rss"] = values["VmRSS"]
            _top["at"] = {**values, "mapped": _smaps()}
        time.sleep(every)


def _mark(owner: Any, name: str, step: str) -> None:
    inner = getattr(owner, name, None)
    if inner is None:
        return

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _stack.append(step)
        _events.append((_now(), step, "begin"))
        try:
            return inner(*args, **kwargs)
        finally:
            _events.append((_now(), step, "end"))
            _stack.pop()

    setattr(owner, name, wrapper)


_data = ""


def start(every: float, data_dir: str) -> None:
    """Mark the writer's steps and start sampling."""
    global _data
    _data = data_dir
    import agentdex.archive.writer as archive_writer
    import agentdex.index.merging as merging
    import agentdex.index.postings as postings
    import agentdex.index.writer as writer

    _mark(writer.IndexWriter, "commit", "commit")
    _mark(postings.PostingsWriter, "commit", "postings commit")
    _mark(postings.PostingsWriter, "close", "postings close")
    _mark(writer, "release_free_memory", "trim")
    _mark(writer.IndexWriter, "end_bulk_load", "record indexes")
    _mark(writer.IndexWriter, "finish", "finish")
    _mark(writer, "write_term_list", "term list")
    _mark(merging, "start", "merge start")
    _mark(merging, "wait", "merge wait")
    _mark(archive_writer.ArchiveWriter, "commit", "archive commit")
    _mark(archive_writer.ArchiveWriter, "_flush", "archive flush")
    import agentdex.index.memory as memory

    inner = memory.release_free_memory

    def counted() -> None:  # the memory keeper's trims (another thread: no step marker)
        started = time.perf_counter()
        inner()
        _keeper[0] += 1
        _keeper[1] += time.perf_counter() - started

    memory.release_free_memory = counted
    threading.Thread(target=_loop, args=(every,), daemon=True).start()


_keeper = [0, 0.0]  # the keeper's trims and their seconds


def report(trace: str | None) -> dict[str, Any]:
    """The peak and each step's highest sample; the raw trace to ``trace`` (JSON lines)."""
    _samples.append(_sample())
    top = max(_samples, key=lambda s: s["VmRSS"])
    steps: dict[str, dict[str, Any]] = {}
    for sample in _samples:
        step = sample["step"]
        if step not in steps or sample["VmRSS"] > steps[step]["VmRSS"]:
            steps[step] = {k: v for k, v in sample.items() if k != "step"}
    # what ran around the peak: events within 3 s before it
    near = [e for e in _events if top["t"] - 3 <= e[0] <= top["t"] + 0.5]
    if trace:
        with open(trace, "w") as handle:
            for sample in _samples:
                handle.write(json.dumps({"sample": sample}) + "\n")
            for event in _events:
                handle.write(json.dumps({"event": event}) + "\n")
    return {
        "samples": len(_samples),
        "vm_hwm_mb": _samples[-1]["VmHWM"],
        "peak_sample": top,
        "highest_breakdown": _top["at"],
        "max_rss_anon_mb": max(s["RssAnon"] for s in _samples),
        "max_rss_file_mb": max(s["RssFile"] for s in _samples),
        "events_near_peak": near,
        "by_step": steps,
        "keeper_trims": {"count": _keeper[0], "seconds": round(_keeper[1], 3)},
        "children_max_mb": {
            kind: max((s["children"].get(kind, 0.0) for s in _samples), default=0.0)
            for kind in ("worker", "termlist", "merge")
        },
    }
