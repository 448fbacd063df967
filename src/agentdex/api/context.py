"""Workspace context: what every agent is told in a directory (library API).

The CLI, the HTTP API and the MCP server call only these functions. A
snapshot is a plain dict in the documented shape (``docs/context.md``);
payloads (instruction and skill text) are included only when asked for.
MCP configs never carry values, whatever is asked.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from agentdex.context import recording
from agentdex.context import sources as _sources
from agentdex.context.caps import DEFAULT_LIMITS, Limits
from agentdex.context.manager import ContextManager
from agentdex.context.model import Snapshot
from agentdex.context.resolver import Resolution, ScanRoot, resolve
from agentdex.errors import NotFoundError, UsageError

Warn = Callable[[str], None]


def workspace_path(directory: str | os.PathLike[str] | None = None) -> str:
    """The canonical workspace for ``directory`` (default: the current directory)."""
    raw = os.fspath(directory) if directory is not None else os.getcwd()
    if not raw or "\0" in raw:
        raise UsageError("workspace path is empty or contains a NUL byte")
    path = os.path.realpath(os.path.expanduser(raw))
    if not os.path.exists(path):
        raise NotFoundError(f"{raw}: no such directory")
    if not os.path.isdir(path):
        raise NotFoundError(f"{raw}: not a directory")
    return path


def _roots_factory(workspace: str, home: str | None, limits: Limits) -> Callable[[], list[Any]]:
    def roots() -> list[Any]:
        return _sources.scan_roots(workspace, home=home, limits=limits)

    return roots


def snapshot(
    directory: str | None = None,
    *,
    payload: bool = False,
    home: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    recorded_by: str = "context",
    now: float | None = None,
    warn: Warn | None = None,
) -> dict[str, Any]:
    """Resolve ``directory`` once and return the snapshot (``version`` 1).

    The resolve is recorded in the context history when its content
    changed (``docs/archive.md``); ``now`` overrides the recorded time and
    ``warn`` hears why recording failed (the snapshot is returned anyway).
    """
    workspace = workspace_path(directory)
    at = time.time() if now is None else now
    started_ns = time.time_ns()
    roots = _sources.scan_roots(workspace, home=home, limits=limits)
    result = resolve(roots, limits=limits)
    resolved = recording.Resolved(workspace, result, roots, limits, started_ns)
    observed = recording.record_safely(resolved, at=at, recorded_by=recorded_by)
    if observed.message and warn is not None:
        warn(observed.message)
    snap = Snapshot(workspace, result.resources, result.roots, result.error)
    return snap.to_json(payload=payload)


def add_source(
    path: str, workspace: str | None = None, *, home: str | None = None
) -> dict[str, Any]:
    """Add a user source; returns ``{"path", "added_at", "workspace", "created"}``."""
    ws = workspace_path(workspace) if workspace is not None else os.path.realpath(os.getcwd())
    entry, created = _sources.add_source(path, ws, home=home)
    return {**entry, "created": created}


def remove_source(path: str, *, home: str | None = None) -> None:
    """Forget a user source (NotFoundError when it was never added)."""
    _sources.remove_source(path, home=home)


def _describe(entry: dict[str, Any], workspace: str | None, home: str | None) -> dict[str, Any]:
    return {
        "path": entry["path"],
        "added_at": entry.get("added_at"),
        "workspace": entry.get("workspace"),
        "status": _sources.source_status(entry, workspace, home),
    }


def list_sources(workspace: str | None = None, *, home: str | None = None) -> list[dict[str, Any]]:
    """Every user source with its current status (``ok``, ``missing``, ``not_allowed``)."""
    ws = os.path.realpath(workspace) if workspace else os.path.realpath(os.getcwd())
    return [_describe(e, ws, home) for e in _sources.load_sources()]


def get_source(
    path: str, workspace: str | None = None, *, home: str | None = None
) -> dict[str, Any]:
    """One user source by path (NotFoundError when unknown)."""
    ws = os.path.realpath(workspace) if workspace else os.path.realpath(os.getcwd())
    return _describe(_sources.find_source(path, home=home), ws, home)


class ContextWatch:
    """A live, versioned view of one workspace (see :func:`watch`)."""

    def __init__(self, manager: ContextManager) -> None:
        self._manager = manager

    @property
    def workspace(self) -> str:
        return self._manager.workspace

    @property
    def version(self) -> int:
        return self._manager.version

    @property
    def subscriber_count(self) -> int:
        return self._manager.subscriber_count

    def snapshot(self, *, payload: bool = False) -> dict[str, Any]:
        return self._manager.current().to_json(payload=payload)

    def resync(self, *, payload: bool = False) -> dict[str, Any]:
        return self._manager.resync().to_json(payload=payload)

    def wait(
        self, after: int, timeout: float | None = None, *, payload: bool = False
    ) -> dict[str, Any] | None:
        """The next snapshot newer than version ``after``, or None on timeout."""
        snap = self._manager.wait_for_version(after, timeout)
        return snap.to_json(payload=payload) if snap is not None else None

    def subscribe(self, callback: Callable[[int], None]) -> Callable[[], None]:
        """Call ``callback(version)`` (from a worker thread) on each new version."""
        return self._manager.subscribe(lambda snap: callback(snap.version))

    def close(self) -> None:
        self._manager.close()

    def __enter__(self) -> ContextWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def watch(
    directory: str | None = None,
    *,
    home: str | None = None,
    debounce: float = 0.25,
    limits: Limits = DEFAULT_LIMITS,
    recorded_by: str = "watch",
    clock: Callable[[], float] = time.time,
) -> ContextWatch:
    """Start watching ``directory``; the first snapshot is resolved before returning.

    Every resolve is recorded in the context history (``clock`` gives the
    recorded time); recording failures never reach the live view.
    """
    workspace = workspace_path(directory)

    def on_resolved(result: Resolution, roots: list[ScanRoot], started_ns: int) -> None:
        resolved = recording.Resolved(workspace, result, roots, limits, started_ns)
        recording.record_safely(resolved, at=clock(), recorded_by=recorded_by)

    manager = ContextManager(
        workspace,
        _roots_factory(workspace, home, limits),
        limits=limits,
        watch=True,
        debounce=debounce,
        on_resolved=on_resolved,
    )
    manager.resync()
    return ContextWatch(manager)
