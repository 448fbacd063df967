"""Shared helpers for the context tests (not a test module)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentdex.api import context as api

SRC = Path(__file__).resolve().parent.parent / "src"


def eventually(condition: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02) -> Any:
    """Poll ``condition`` until truthy; fail with a clear message at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


def snap(directory: Path, **kwargs: Any) -> dict[str, Any]:
    return api.snapshot(str(directory), **kwargs)


def res(snapshot: dict[str, Any], path: Path | str) -> dict[str, Any]:
    """The resource discovered at ``path`` (fails when absent)."""
    for item in snapshot["resources"]:
        if item["source"] == str(path):
            return item
    raise AssertionError(f"{path} not in {[r['source'] for r in snapshot['resources']]}")


def sources_of(snapshot: dict[str, Any]) -> set[str]:
    return {r["source"] for r in snapshot["resources"]}


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def skill(root: Path, folder: str, front: str, body: str = "Do the thing.\n") -> Path:
    return write(root / ".claude" / "skills" / folder / "SKILL.md", f"---\n{front}\n---\n{body}")


def unprivileged_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str] | None:
    """Run ``code`` where file permissions bind: as-is for non-root, else in a user namespace.

    Returns None when neither is possible (the caller skips).
    """
    cmd = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        unshare = shutil.which("unshare")
        if unshare is None:
            return None
        probe = subprocess.run([unshare, "-U", "true"], capture_output=True, check=False)
        if probe.returncode != 0:
            return None
        cmd = [unshare, "-U", *cmd]
    full_env = {**os.environ, **env, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        cmd, capture_output=True, text=True, env=full_env, timeout=60, check=False
    )


def ts(text: str) -> float:
    """Epoch seconds of a naive ISO time taken as UTC (for injected clocks)."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()
