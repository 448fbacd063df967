"""Record resolves into the context history, and skip resolves that cannot differ.

Recording never breaks the resolve it follows: a busy or corrupt history
database turns into an :class:`Observation` with status ``failed`` and a
message, and the caller's snapshot is returned as usual. ``[context]
history = false`` in the config turns recording off (status ``off``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentdex.context import fingerprint
from agentdex.context.caps import Limits
from agentdex.context.history import HistoryStore
from agentdex.context.model import Snapshot
from agentdex.context.resolver import Resolution, ScanRoot, resolve
from agentdex.errors import AgentdexError

Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Observation:
    """What an observation did: ``recorded``, ``unchanged``, ``off`` or ``failed``."""

    status: str
    version_id: int | None = None
    resolved: bool = True
    message: str | None = None


def enabled() -> bool:
    """False when ``[context] history = false``; an invalid config raises ConfigError."""
    from agentdex.config import load_config

    return load_config().context_history


@dataclass(frozen=True, slots=True)
class Resolved:
    """A finished resolve and what it was made from: everything recording needs."""

    workspace: str
    result: Resolution
    roots: Sequence[ScanRoot]
    limits: Limits
    started_ns: int  # wall clock when the resolve started (for the racy-stat rule)


def record(store: HistoryStore, resolved: Resolved, *, at: float, recorded_by: str) -> Observation:
    """Record one finished resolve (and its stat fingerprint) in ``store``."""
    result = resolved.result
    snap = Snapshot(resolved.workspace, result.resources, result.roots, result.error)
    fp = fingerprint.take(result.plan, resolved.roots, resolved.limits, resolved.started_ns)
    done = store.record(snap, at=at, recorded_by=recorded_by, fingerprint=fp)
    return Observation(done.status, done.version_id)


def record_safely(
    resolved: Resolved, *, at: float, recorded_by: str, path: Path | None = None
) -> Observation:
    """:func:`record` in its own connection; failures become ``failed`` observations."""
    try:
        if not enabled():
            return Observation("off")
        with HistoryStore(path) as store:
            return record(store, resolved, at=at, recorded_by=recorded_by)
    except (AgentdexError, OSError) as exc:
        message = exc.message if isinstance(exc, AgentdexError) else str(exc)
        return Observation("failed", message=f"context history not recorded: {message}")


def observe(
    store: HistoryStore,
    workspace: str,
    roots: Sequence[ScanRoot],
    limits: Limits,
    *,
    at: float,
    recorded_by: str,
    resolver: Callable[..., Resolution] = resolve,
) -> Observation:
    """Bring ``workspace``'s history up to date, resolving only when something could differ.

    When the stored fingerprint still matches the filesystem, the latest
    version is confirmed (its ``last_seen`` moves to ``at``) without reading
    a single file; otherwise the workspace is resolved and recorded.
    """
    stored = store.fingerprint(workspace)
    if stored is not None and fingerprint.unchanged(stored, roots, limits):
        version_id = store.confirm(workspace, stored, at=at)
        if version_id is not None:
            return Observation("unchanged", version_id, resolved=False)
    started_ns = time.time_ns()
    result = resolver(roots, limits=limits)
    resolved = Resolved(workspace, result, roots, limits, started_ns)
    return record(store, resolved, at=at, recorded_by=recorded_by)
