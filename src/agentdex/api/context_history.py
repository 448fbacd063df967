"""Context history (library API): what a workspace told its agents at a given time.

Every resolve is recorded when its content changed (see
:mod:`agentdex.context.history` and ``docs/archive.md``). These functions
read that record: the snapshot in force at a time, the list of versions,
the difference between two times, and the context of a conversation's
workspace at its first message. When the workspace still exists they first
bring its history up to date (cheaply: a stat fingerprint skips the
resolve when nothing could have changed), so ``now`` is always right.

A workspace that no longer exists keeps its history: pass its old path.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from agentdex.context import recording
from agentdex.context import sources as _sources
from agentdex.context.caps import DEFAULT_LIMITS, Limits
from agentdex.context.diff import diff_versions
from agentdex.context.history import HistoryStore, Version, history_path
from agentdex.context.reading import is_within
from agentdex.errors import AgentdexError, NotFoundError, UsageError
from agentdex.paths import home_dir
from agentdex.records import iso_utc

_ORDINAL = re.compile(r"^v(\d+)$")


def history_workspace(directory: str | os.PathLike[str] | None) -> tuple[str, bool]:
    """(canonical path, exists): like ``workspace_path`` but a vanished directory is fine."""
    raw = os.fspath(directory) if directory is not None else os.getcwd()
    if not raw or "\0" in raw:
        raise UsageError("workspace path is empty or contains a NUL byte")
    path = os.path.realpath(os.path.expanduser(raw))
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{raw}: not a directory")
    return path, os.path.isdir(path)


def parse_when(value: str, *, now: float | None = None) -> float:
    """Epoch seconds of a time as ``search``'s ``since:`` takes it, or an ISO timestamp.

    A date alone is its 00:00 UTC; ``now`` and relative ages (``2h``,
    ``7d``) count back from now.
    """
    from agentdex.search.timeparse import parse_time

    return parse_time(value, end=False, now=now)


def _version_info(version: Version) -> dict[str, Any]:
    return {
        "version": version.ordinal,
        "version_id": version.id,
        "recorded_at": iso_utc(version.first_seen),
        "last_seen_at": iso_utc(version.last_seen),
        "recorded_by": version.recorded_by,
        "aggregate_hash": version.aggregate_hash,
        "resource_count": version.resource_count,
        "error": version.error,
    }


def _refresh(
    store: HistoryStore,
    workspace: str,
    exists: bool,
    *,
    home: str | None,
    limits: Limits,
    now: float | None,
    recorded_by: str,
) -> None:
    """Record the workspace's current context first, when it exists and recording is on."""
    if not exists or not recording.enabled():
        return
    roots = _sources.scan_roots(workspace, home=home, limits=limits)
    at = time.time() if now is None else now
    recording.observe(store, workspace, roots, limits, at=at, recorded_by=recorded_by)


def _open(workspace: str, exists: bool) -> HistoryStore:
    """A writable store when the workspace can be observed, else a read-only view."""
    return HistoryStore(create=exists and recording.enabled())


def _resolve_when(store: HistoryStore, workspace: str, value: str, now: float | None) -> Version:
    """The version named by ``value``: ``vN`` (the Nth recorded) or a time (in force then)."""
    match = _ORDINAL.match(value.strip().lower())
    if match:
        numbered = store.version_numbered(workspace, int(match.group(1)))
        if numbered is None:
            raise NotFoundError(f"{workspace}: no version v{match.group(1)} recorded")
        return numbered
    at = parse_when(value, now=now)
    found = store.version_at(workspace, at)
    if found is None:
        raise _nothing_before(store, workspace, at)
    return found


def _nothing_before(store: HistoryStore, workspace: str, at: float) -> NotFoundError:
    earliest = store.first_after(workspace, at)
    detail = (
        f"earliest record: {iso_utc(earliest.first_seen)}"
        if earliest is not None
        else "nothing is recorded for this workspace"
    )
    return NotFoundError(
        f"no context recorded for {workspace} at or before {iso_utc(at)} ({detail})",
        detail=detail,
    )


def snapshot_at(
    directory: str | None,
    at: str,
    *,
    payload: bool = False,
    home: str | None = None,
    fallback_after: bool = False,
    now: float | None = None,
    limits: Limits = DEFAULT_LIMITS,
    recorded_by: str = "context",
) -> dict[str, Any]:
    """The snapshot in force at ``at`` (a time, or ``vN``), with a ``history`` object.

    Without a version at or before ``at``: NotFoundError, or with
    ``fallback_after`` the earliest version after it, marked
    ``"match": "earliest_after"``.
    """
    workspace, exists = history_workspace(directory)
    with _open(workspace, exists) as store:
        _refresh(
            store, workspace, exists, home=home, limits=limits, now=now, recorded_by=recorded_by
        )
        try:
            version = _resolve_when(store, workspace, at, now)
            match = "in_force"
        except NotFoundError:
            when = _ORDINAL.match(at.strip().lower()) is None
            later = store.first_after(workspace, parse_when(at, now=now)) if when else None
            if not fallback_after or later is None:
                raise
            version, match = later, "earliest_after"
        data = store.snapshot_json(version, payload=payload)
    data["history"] = _history_object(version, at, match, now)
    return data


def _history_object(version: Version, at: str, match: str, now: float | None) -> dict[str, Any]:
    when = None if _ORDINAL.match(at.strip().lower()) else iso_utc(parse_when(at, now=now))
    note = None
    if match == "earliest_after":
        note = (
            f"no context was recorded for this workspace at or before {when}; this is the "
            f"earliest version recorded after it ({iso_utc(version.first_seen)})"
        )
    return {"at": when, "match": match, **_version_info(version), "note": note}


def versions(
    directory: str | None = None,
    *,
    limit: int | None = None,
    home: str | None = None,
    now: float | None = None,
    limits: Limits = DEFAULT_LIMITS,
    recorded_by: str = "context",
) -> dict[str, Any]:
    """Every recorded version of a workspace, oldest first, each with its change counts."""
    if limit is not None and limit < 1:
        raise UsageError("limit must be at least 1")
    workspace, exists = history_workspace(directory)
    with _open(workspace, exists) as store:
        _refresh(
            store, workspace, exists, home=home, limits=limits, now=now, recorded_by=recorded_by
        )
        found = store.versions(workspace)
        if not found and not store.has_workspace(workspace) and not exists:
            raise NotFoundError(f"{directory}: no such directory and no context history for it")
        shown = found[-limit:] if limit is not None else found
        previous = {v.id: found[i - 1] for i, v in enumerate(found) if i > 0}
        items = []
        for version in shown:
            info = _version_info(version)
            before = previous.get(version.id)
            if before is None:
                info["changes"] = None
            else:
                delta = diff_versions(store, before, version, ("", ""))
                info["changes"] = {k: len(delta[k]) for k in ("added", "removed", "changed")}
            items.append(info)
    return {
        "workspace": workspace,
        "recording": recording.enabled(),
        "total": len(found),
        "versions": items,
    }


def diff(
    directory: str | None,
    a: str,
    b: str = "now",
    *,
    home: str | None = None,
    now: float | None = None,
    limits: Limits = DEFAULT_LIMITS,
    recorded_by: str = "context",
) -> dict[str, Any]:
    """What changed in a workspace's context from ``a`` to ``b`` (times or ``vN``)."""
    workspace, exists = history_workspace(directory)
    with _open(workspace, exists) as store:
        _refresh(
            store, workspace, exists, home=home, limits=limits, now=now, recorded_by=recorded_by
        )
        older = _resolve_when(store, workspace, a, now)
        newer = _resolve_when(store, workspace, b, now)
        labels = (f"v{older.ordinal}", f"v{newer.ordinal}")
        delta = diff_versions(store, older, newer, labels)
    return {
        "workspace": workspace,
        "from": {"at": _at_label(a, now), **_version_info(older)},
        "to": {"at": _at_label(b, now), **_version_info(newer)},
        **delta,
    }


def _at_label(value: str, now: float | None) -> str | None:
    return None if _ORDINAL.match(value.strip().lower()) else iso_utc(parse_when(value, now=now))


def conversation_context(
    conversation: dict[str, Any],
    *,
    home: str | None = None,
    payload: bool = False,
    now: float | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """The context of a conversation's workspace (cwd, else project) at its first message.

    ``match`` says how honest the answer is: ``in_force`` (recorded at or
    before the first message), ``earliest_after`` (nothing was recorded
    before; the earliest later version, never presented as "then") or
    ``none`` (no workspace, no time, or no history at all).
    """
    from datetime import datetime

    records = conversation.get("records") or []
    stamps = [r["timestamp"] for r in records if r.get("timestamp")]
    first = min(stamps) if stamps else None
    candidates = [r.get("cwd") for r in records] + [conversation.get("project")]
    places = list(dict.fromkeys(c for c in candidates if isinstance(c, str) and os.path.isabs(c)))
    out: dict[str, Any] = {
        "workspace": places[0] if places else None,
        "at": first,
        "match": "none",
        "note": None,
        "snapshot": None,
    }
    if not places:
        out["note"] = "the conversation names no working directory"
        return out
    if first is None:
        out["note"] = "the conversation has no timestamps, so no point in time to look up"
        return out
    at = datetime.fromisoformat(first.replace("Z", "+00:00")).timestamp()
    found = _version_for(places, at, home=home, limits=limits, now=now)
    if found is None:
        out["note"] = f"no context history for {', '.join(places)}"
        return out
    store_path, workspace, version, match = found
    with HistoryStore(store_path, create=False) as store:
        snap = store.snapshot_json(version, payload=payload)
    snap["history"] = _history_object(version, first, match, now)
    out.update(workspace=workspace, match=match, snapshot=snap, note=snap["history"]["note"])
    return out


def _version_for(
    places: list[str], at: float, *, home: str | None, limits: Limits, now: float | None
) -> tuple[Path, str, Version, str] | None:
    """The best version for ``at`` among ``places``: any in force, else the earliest after.

    A place with no version after ``at`` that still exists is recorded now,
    so there is at least that (marked ``earliest_after``, never "then").
    """
    usable: list[tuple[str, bool]] = []
    for place in places:
        try:
            usable.append(history_workspace(place))
        except UsageError:
            continue  # a cwd that is now a file: nothing to look up there
    with HistoryStore(create=False) as store:
        for workspace, _exists in usable:
            version = store.version_at(workspace, at)
            if version is not None:
                return store.path, workspace, version, "in_force"
    for workspace, exists in usable:
        with _open(workspace, exists) as store:
            _refresh(
                store, workspace, exists, home=home, limits=limits, now=now, recorded_by="show"
            )
            later = store.first_after(workspace, at)
            if later is not None:
                return store.path, workspace, later, "earliest_after"
    return None


def record_indexed_workspaces(
    root: str | os.PathLike[str] | None = None,
    *,
    home: str | None = None,
    now: float | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """Observe the context of every workspace the index has conversations in.

    Run by ``agentdex index``. Cheap when nothing changed: a workspace
    whose stat fingerprint still matches costs stats, not a resolve. The
    home directory (and anything above it) is skipped: walking a whole home
    is not a workspace's context. Returns counts for ``index --json``.
    """
    started = time.perf_counter()
    stats: dict[str, Any] = {"enabled": recording.enabled()}
    if not stats["enabled"]:
        return stats
    from agentdex.api.index import reader

    with reader(root, home) as engine:
        rows = _indexed_places(engine.db) if engine is not None else []
    home_real = os.path.realpath(home_dir(home))
    places = sorted(
        {os.path.realpath(p) for (p,) in rows if isinstance(p, str) and os.path.isabs(p)}
    )
    counts = {"workspaces": 0, "resolved": 0, "recorded": 0, "unchanged": 0, "skipped": 0}
    failures: list[str] = []
    at = time.time() if now is None else now
    try:
        with HistoryStore() as store:
            for place in places:
                if not os.path.isdir(place) or is_within(home_real, place):
                    counts["skipped"] += 1
                    continue
                counts["workspaces"] += 1
                try:
                    roots = _sources.scan_roots(place, home=home, limits=limits)
                    seen = recording.observe(
                        store, place, roots, limits, at=at, recorded_by="index"
                    )
                except AgentdexError as exc:
                    failures.append(f"{place}: {exc.message}")
                    continue
                counts["resolved"] += seen.resolved
                counts[seen.status] += 1
    except AgentdexError as exc:  # the history DB itself: report it, the index is fine
        failures.append(exc.message)
    stats.update(counts, failed=failures[:20], seconds=round(time.perf_counter() - started, 3))
    return stats


def _indexed_places(db: Any) -> list[tuple[Any]]:
    """Distinct cwd (else project) of indexed conversations.

    An index that keeps each conversation's paths once (a ``contexts``
    table) is read there: one row per conversation instead of a scan of
    every record through the ``records`` view.
    """
    has_contexts = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'contexts'"
    ).fetchone()
    source = "contexts" if has_contexts else "records"
    rows: list[tuple[Any]] = db.execute(
        f"SELECT DISTINCT coalesce(cwd, project) FROM {source}"
        " WHERE coalesce(cwd, project) IS NOT NULL"
    ).fetchall()
    return rows


def history_info() -> dict[str, Any]:
    """Where the history lives and how big it is (``docs/archive.md``)."""
    with HistoryStore(create=False) as store:
        info = store.stats()
    info["recording"] = recording.enabled()
    info["default_path"] = str(history_path())
    return info
