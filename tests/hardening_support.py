"""Helpers for the hardening tests: a home holding a runaway-regex transcript, a real server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp_support import server_env, write_claude_session

#: ``(a+)+$`` backtracks ~2^40 steps on this text before failing (hours).
RUNAWAY_TEXT = "a" * 40 + "!"
RUNAWAY_REGEX = "(a+)+$"


def runaway_home(home: Path) -> Path:
    """A Claude Code transcript: three prompts with "hello", two of them ordinary."""
    turns = [
        ("user", "hello retry"),
        ("user", RUNAWAY_TEXT),
        ("user", "hello " + RUNAWAY_TEXT),
        ("user", "hello again"),
    ]
    return write_claude_session(home, "bad0bad0-0001", home / "proj", turns)


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The hermetic environment plus PYTHONPATH, for agentdex subprocesses."""
    return server_env(extra)


@contextmanager
def served(*args: str, cwd: Path | None = None) -> Iterator[dict[str, Any]]:
    """A real ``agentdex serve --port 0 --json`` process; yields its JSON line (+ ``proc``)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentdex", "serve", "--port", "0", "--json", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=cwd,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        info: dict[str, Any] = json.loads(line)
        info["proc"] = proc
        yield info
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (Linux ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    pending = [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def _cpu_seconds(pid: int) -> float:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def burning_descendants(pid: int, window: float = 1.0) -> set[int]:
    """Descendants of ``pid`` that used over a tenth of a CPU during ``window`` seconds.

    (A runaway regex uses a whole one; the machine may be shared, so the bar is low.)
    """
    before = {child: _cpu_seconds(child) for child in descendants(pid)}
    time.sleep(window)
    return {child for child, used in before.items() if _cpu_seconds(child) - used > window / 10}
