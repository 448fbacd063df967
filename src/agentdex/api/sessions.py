"""Sessions as the library API: new, list, show (with linked history), workdir, run, context.

Every function returns JSON-ready data (shapes in
``docs/worktrees-and-sessions.md``). The search index and workspace
context come from sibling API modules, imported lazily so this module
works before (and without) them.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

from agentdex.errors import AgentdexError, ConflictError, UsageError
from agentdex.sessions import store
from agentdex.sessions.events import SessionState

__all__ = [
    "linked_history",
    "list_sessions",
    "new_session",
    "run_session",
    "session_context",
    "set_workdir",
    "show_session",
]


#: What a session id (or a prefix of one) may contain.
SESSION_ID_PATTERN = store.ID_PATTERN


def snake_keys(event: dict[str, Any]) -> dict[str, Any]:
    """A log event with snake_case keys (the log file itself keeps its camelCase keys)."""
    return {_CAMEL.sub("_", key).lower(): value for key, value in event.items()}


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class ContextUnavailableError(AgentdexError):
    """``agentdex.api.context.snapshot`` is not part of this build."""

    code = "CONTEXT_UNAVAILABLE"


def new_session(
    *,
    workdir: str | None = None,
    worktree: str | None = None,
    label: str | None = None,
    agent: str | None = None,
    repo: str | None = None,
) -> dict[str, Any]:
    """Create a session; ``worktree`` (branch or path) sets both the work dir and the binding."""
    if workdir and worktree:
        raise UsageError("give --workdir or --worktree, not both")
    bound: str | None = None
    if worktree:
        from agentdex.api.worktrees import resolve_worktree

        bound = resolve_worktree(worktree, repo)
        workdir = bound
    state = store.create_session(
        working_directory=workdir, worktree=bound, label=label, agent=agent
    )
    return state.to_json()


def list_sessions(workdir: str | None = None) -> dict[str, Any]:
    """Sessions (oldest first), optionally only those whose work dir is ``workdir`` or inside it."""
    states, problems = store.list_sessions(workdir)
    return {"sessions": [s.to_json() for s in states], "unreadable": problems}


def _find_history_function() -> Callable[..., list[dict[str, Any]]] | None:
    try:
        module = importlib.import_module("agentdex.api.search")
    except ModuleNotFoundError as exc:
        if exc.name not in ("agentdex.api.search",):
            raise
        return None
    function = getattr(module, "conversations_for_workdir", None)
    return function if callable(function) else None


def linked_history(
    state: SessionState, home: str | None = None
) -> tuple[bool, list[dict[str, Any]]]:
    """Agent transcripts whose cwd is one of the session's work dirs while it was current.

    Each work-directory period of the session is asked about separately, so a
    transcript in an old work dir is linked only if it overlapped that period.
    """
    function = _find_history_function()
    if function is None:
        return False, []
    seen: set[tuple[Any, Any]] = set()
    found: list[dict[str, Any]] = []
    for period in state.periods:
        if not period.working_directory:
            continue
        rows = function(period.working_directory, period.since, period.until, home=home)
        for row in rows:
            key = (row.get("agent"), row.get("session_id"))
            if key not in seen:
                seen.add(key)
                found.append(row)
    found.sort(key=lambda r: str(r.get("first_activity") or ""))
    return True, found


def show_session(session_id: str, *, home: str | None = None) -> dict[str, Any]:
    """One session: derived state, its raw events and the linked agent history."""
    state, events = store.load(session_id)
    available, history = linked_history(state, home)
    data = state.to_json()
    data["events"] = [snake_keys(event) for event in events]
    data["history"] = history
    data["history_available"] = available
    return data


def set_workdir(session_id: str, directory: str | None) -> dict[str, Any]:
    """Change (or, with None, clear) this session's work directory; no other session changes."""
    return store.set_workdir(session_id, directory).to_json()


def run_session(session_id: str, command: Sequence[str] = ()) -> int:
    """Run the session's agent (or ``command``) in its work directory; returns the exit status."""
    from agentdex.sessions.runner import run_session as _run

    return _run(session_id, command)


def session_context(session_id: str) -> Any:
    """The workspace-context snapshot of the session's current work directory."""
    state, _ = store.load(session_id)
    if not state.working_directory:
        raise ConflictError(
            f"session {state.id} has no work directory; set one with"
            f" 'agentdex session workdir {state.id} DIR'"
        )
    try:
        module = importlib.import_module("agentdex.api.context")
    except ModuleNotFoundError as exc:
        if exc.name != "agentdex.api.context":
            raise
        module = None
    snapshot = getattr(module, "snapshot", None)
    if not callable(snapshot):
        raise ContextUnavailableError("workspace context is not available in this build")
    return snapshot(os.fspath(state.working_directory))
