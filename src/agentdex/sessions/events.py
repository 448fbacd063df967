"""Session event types and the state derived from a session's events.

Events (one JSON object per line, ``type`` first):

* ``start``: ``id``, ``created`` (epoch seconds), ``label``, ``agent``,
  ``workingDirectory``, ``worktree`` (always the first line);
* ``workdir-changed``: ``at``, ``workingDirectory`` (null = cleared),
  ``worktree`` (the worktree the new directory is bound to, or null),
  optional ``reason`` (``"worktree-removed"``);
* ``process-started``: ``at``, ``pid``, ``command``, ``workingDirectory``;
* ``process-exited``: ``at``, ``pid``, ``exitCode``, ``signal``.

Unknown event types are kept in the log and ignored by derivation, so an
older agentdex can read a newer log. The log file keeps these camelCase keys
(it is a file format, read back by every version); everything agentdex
prints or serves uses snake_case (``SessionState.to_json``, and
``session show`` converts each event's keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

START = "start"
WORKDIR_CHANGED = "workdir-changed"
PROCESS_STARTED = "process-started"
PROCESS_EXITED = "process-exited"
EVENT_TYPES = (START, WORKDIR_CHANGED, PROCESS_STARTED, PROCESS_EXITED)


@dataclass(slots=True)
class WorkdirPeriod:
    """A span of time during which the session had one work directory."""

    working_directory: str | None
    since: float
    until: float | None  # None: still current


@dataclass(slots=True)
class SessionState:
    """What a session *is* right now, folded from its events."""

    id: str
    created: float
    label: str | None
    agent: str | None
    working_directory: str | None
    worktree: str | None
    last_activity: float
    event_count: int
    skipped_lines: int
    running_pids: list[int] = field(default_factory=list)
    last_exit_code: int | None = None
    periods: list[WorkdirPeriod] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        from agentdex.records import iso_utc

        return {
            "id": self.id,
            "created": iso_utc(self.created),
            "label": self.label,
            "agent": self.agent,
            "working_directory": self.working_directory,
            "worktree": self.worktree,
            "last_activity": iso_utc(self.last_activity),
            "event_count": self.event_count,
            "skipped_lines": self.skipped_lines,
            "running_pids": self.running_pids,
            "last_exit_code": self.last_exit_code,
        }


def _num(value: Any, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value)


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def fold(events: list[dict[str, Any]], skipped_lines: int = 0) -> SessionState:
    """Derive the state; ``events[0]`` must be a ``start`` event (checked by the reader)."""
    start = events[0]
    created = _num(start.get("created"), 0.0)
    state = SessionState(
        id=str(start.get("id")),
        created=created,
        label=_str_or_none(start.get("label")),
        agent=_str_or_none(start.get("agent")),
        working_directory=_str_or_none(start.get("workingDirectory")),
        worktree=_str_or_none(start.get("worktree")),
        last_activity=created,
        event_count=len(events),
        skipped_lines=skipped_lines,
    )
    state.periods.append(WorkdirPeriod(state.working_directory, created, None))
    running: dict[int, bool] = {}
    for event in events[1:]:
        at = _num(event.get("at"), state.last_activity)
        state.last_activity = max(state.last_activity, at)
        kind = event.get("type")
        if kind == WORKDIR_CHANGED:
            state.working_directory = _str_or_none(event.get("workingDirectory"))
            state.worktree = _str_or_none(event.get("worktree"))
            state.periods[-1].until = at
            state.periods.append(WorkdirPeriod(state.working_directory, at, None))
        elif kind == PROCESS_STARTED and isinstance(event.get("pid"), int):
            running[event["pid"]] = True
        elif kind == PROCESS_EXITED:
            running.pop(event.get("pid"), None)  # type: ignore[arg-type]
            code = event.get("exitCode")
            state.last_exit_code = code if isinstance(code, int) else None
    state.running_pids = sorted(running)
    return state
