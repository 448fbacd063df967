"""Create, find, list and re-point sessions; one log file per session.

Logs live in ``<data dir>/sessions/<id>.jsonl``. Ids look like
``s-20261122-024530123-a1b2`` (UTC date, time to the millisecond, random
suffix): they sort by creation time, are unique (the
file is created exclusively) and any unique prefix names a session.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path
from typing import Any

from agentdex.errors import ConflictError, CorruptError, NotFoundError, UsageError
from agentdex.paths import data_dir, ensure_private_dir
from agentdex.sessions.events import START, WORKDIR_CHANGED, SessionState, fold
from agentdex.sessions.log import append_event, create_log, read_events

ID_PATTERN = r"^[A-Za-z0-9-]+(?![\s\S])"  # the end, even before a final newline
_ID_CHARS = re.compile(ID_PATTERN)
_SUFFIX = ".jsonl"


def sessions_dir() -> Path:
    return ensure_private_dir(data_dir() / "sessions")


def _new_id(now: float) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    millis = int(now * 1000) % 1000
    return f"s-{stamp}{millis:03d}-{secrets.token_hex(2)}"


class NoSuchDirectory(NotFoundError):
    """A work directory named in a request does not exist.

    Not found (exit 3) on the command line; over HTTP a 409, because the
    session the URL names exists: it is the state of the disk that refuses.
    """

    code = "NO_SUCH_DIRECTORY"
    http_status = 409


def normalize_dir(directory: str) -> str:
    """An existing directory, made absolute (symlinks kept as given)."""
    if not directory or "\0" in directory:
        raise UsageError("work directory is empty or contains a NUL byte")
    path = os.path.abspath(os.path.expanduser(directory))
    if not os.path.isdir(path):
        raise NoSuchDirectory(f"no such directory: {directory}")
    return path


def is_within(child: str, parent: str) -> bool:
    """``child`` is ``parent`` or inside it, compared by path components."""
    child_parts = Path(child).parts
    parent_parts = Path(parent).parts
    return child_parts[: len(parent_parts)] == parent_parts


def create_session(
    *,
    working_directory: str | None = None,
    worktree: str | None = None,
    label: str | None = None,
    agent: str | None = None,
) -> SessionState:
    """Start a new session; it has no work directory unless one is given."""
    workdir = normalize_dir(working_directory) if working_directory else None
    directory = sessions_dir()
    for _ in range(20):
        now = time.time()
        session_id = _new_id(now)
        start = {
            "type": START,
            "id": session_id,
            "created": now,
            "label": label,
            "agent": agent,
            "workingDirectory": workdir,
            "worktree": worktree,
        }
        try:
            create_log(directory / f"{session_id}{_SUFFIX}", start)
        except FileExistsError:
            continue
        return fold([start])
    raise UsageError("could not allocate a unique session id")  # pragma: no cover


def resolve_id(prefix: str) -> Path:
    """The log of the one session whose id starts with ``prefix``."""
    if not prefix or not _ID_CHARS.match(prefix):
        raise UsageError(f"invalid session id: {prefix!r}")
    matches = sorted(p for p in sessions_dir().glob(f"{prefix}*{_SUFFIX}") if p.is_file())
    exact = [p for p in matches if p.name == f"{prefix}{_SUFFIX}"]
    if exact:
        return exact[0]
    if not matches:
        raise NotFoundError(f"no session matches '{prefix}'")
    if len(matches) > 1:
        names = ", ".join(p.stem for p in matches[:5])
        raise ConflictError(f"session prefix '{prefix}' is ambiguous: {names}")
    return matches[0]


def load(prefix: str) -> tuple[SessionState, list[dict[str, Any]]]:
    """State and raw events of one session (CorruptError if its log is not ours)."""
    path = resolve_id(prefix)
    events, skipped = read_events(path)
    state = fold(events, skipped)
    if state.id != path.stem:
        raise CorruptError(f"session log {path.name} has start id {state.id!r}")
    return state, events


def list_sessions(within: str | None = None) -> tuple[list[SessionState], list[dict[str, str]]]:
    """Every readable session (oldest first) and the logs that could not be read."""
    parent = os.path.abspath(os.path.expanduser(within)) if within else None
    states: list[SessionState] = []
    problems: list[dict[str, str]] = []
    for path in sorted(sessions_dir().glob(f"*{_SUFFIX}")):
        try:
            events, skipped = read_events(path)
        except (CorruptError, NotFoundError) as exc:
            problems.append({"id": path.stem, "error": exc.code, "message": exc.message})
            continue
        state = fold(events, skipped)
        if parent is not None and not (
            state.working_directory and is_within(state.working_directory, parent)
        ):
            continue
        states.append(state)
    states.sort(key=lambda s: (s.created, s.id))  # ids tie within a millisecond; times do not
    return states, problems


def set_workdir(
    prefix: str, directory: str | None, *, worktree: str | None = None, reason: str | None = None
) -> SessionState:
    """Point one session (only that one) at ``directory``; None clears it."""
    path = resolve_id(prefix)
    events, _ = read_events(path)
    before = fold(events)
    workdir = normalize_dir(directory) if directory is not None else None
    if worktree is None and workdir and before.worktree and is_within(workdir, before.worktree):
        worktree = before.worktree  # still inside the bound worktree: stay bound
    event: dict[str, Any] = {
        "type": WORKDIR_CHANGED,
        "at": time.time(),
        "workingDirectory": workdir,
        "worktree": worktree,
    }
    if reason:
        event["reason"] = reason
    append_event(path, event)
    state, _ = load(path.stem)
    return state


def detach_worktree(worktree_path: str) -> list[str]:
    """After git removed ``worktree_path``: clear it from every session bound to it.

    Returns the ids of the sessions detached. Their logs keep the history;
    only a ``workdir-changed`` (reason ``worktree-removed``) is appended.
    """
    detached: list[str] = []
    states, _ = list_sessions()
    for state in states:
        bound = state.worktree == worktree_path
        inside = state.working_directory and is_within(state.working_directory, worktree_path)
        if bound or inside:
            path = sessions_dir() / f"{state.id}{_SUFFIX}"
            append_event(
                path,
                {
                    "type": WORKDIR_CHANGED,
                    "at": time.time(),
                    "workingDirectory": None,
                    "worktree": None,
                    "reason": "worktree-removed",
                    "removedWorktree": worktree_path,
                },
            )
            detached.append(state.id)
    return detached
