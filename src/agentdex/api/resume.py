"""Resume API: the command that reopens a conversation in its own agent, and running it.

:func:`plan` finds the conversation (as ``show`` does), fills its agent's
resume template from the catalogue (:mod:`agentdex.catalogue.resume`) and
says where it would run; it never runs anything, so the HTTP API can offer
it. :func:`launch` runs a plan in the conversation's directory with the
terminal handed over to the agent (the process is replaced on POSIX).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from agentdex.api._order import record_place
from agentdex.api.history import _holds, show
from agentdex.catalogue import ResumeRow, resume_row
from agentdex.errors import AgentdexError, NotFoundError, UnsupportedError

#: A session id must look like an id before it goes into an argv: no leading
#: dash (it would read as a flag), no whitespace or control characters.
_SAFE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:@+=-]{0,199}")


@dataclass(slots=True)
class ResumePlan:
    """What ``agentdex resume`` would run, where, and whether it can (documented JSON)."""

    agent: str
    session_id: str
    supported: bool
    reason: str | None = None
    cwd: str | None = None
    cwd_exists: bool | None = None
    project: str | None = None
    branch: str | None = None
    worktree: str | None = None
    host: str | None = None
    argv: list[str] | None = None
    command: str | None = None
    executable: str | None = None
    note: str | None = None
    warnings: list[str] = field(default_factory=list)
    source: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def plan(ref: str, home: str | None = None) -> ResumePlan:
    """The resume command of conversation ``ref`` (a session id, prefix or ``SESSION@LOCATOR``)."""
    data = show(ref, home)
    records: list[dict[str, Any]] = data["records"]
    row = resume_row(data["agent"])
    result = ResumePlan(
        agent=data["agent"],
        session_id=data["session_id"],
        supported=False,
        cwd=record_place(records)[1] or _first(records, "cwd"),
        project=record_place(records)[0],
        branch=_first(records, "branch"),
        worktree=_first(records, "worktree"),
        host=_first(records, "host"),
        note=row.note or None,
        source=row.source or None,
    )
    if result.cwd is not None:
        result.cwd_exists = os.path.isdir(result.cwd)
    result.reason = _why_not(row, result, records)
    if result.reason is not None:
        return result
    resumable = [r for r in records if r["store"] in row.stores and not r.get("source_gone")]
    values = {"{session_id}": result.session_id, "{source_path}": resumable[0]["source_path"]}
    argv = [_fill(arg, values) for arg in row.argv]
    result.executable, argv[0] = _find_executable(row, argv[0])
    result.supported = True
    result.argv = argv
    result.command = _command_line(argv, result.cwd)
    result.warnings = _warnings(row, result, {r["store"] for r in resumable})
    return result


def check_launchable(resume: ResumePlan) -> list[str]:
    """Raise the reason ``resume`` cannot run here; else return the notes worth showing first."""
    if not resume.supported or resume.argv is None:
        raise UnsupportedError(resume.reason or f"{resume.agent} cannot resume a conversation")
    if resume.cwd is not None and not resume.cwd_exists:
        raise NotFoundError(
            f"the conversation's directory {resume.cwd} no longer exists (moved or deleted); "
            "`agentdex resume REF --print` shows the command to run elsewhere"
        )
    if resume.executable is None:
        raise NotFoundError(
            f"{resume.argv[0]} ({resume.agent}) is not on PATH; install it, or run: "
            f"{resume.command}"
        )
    return resume.warnings


def launch(resume: ResumePlan) -> int:
    """Run ``resume`` in its directory with this terminal; returns the agent's exit status.

    On POSIX the process is replaced by the agent (signals and the terminal
    go straight to it), so this returns only on Windows. Refuses, with a
    clear reason (:func:`check_launchable`), when the agent cannot resume,
    its directory is gone or its executable is not on PATH.
    """
    check_launchable(resume)
    assert resume.argv is not None and resume.executable is not None  # checked above
    try:
        if os.name == "posix":
            if resume.cwd is not None:
                os.chdir(resume.cwd)
            sys.stdout.flush()
            sys.stderr.flush()
            os.execv(resume.executable, resume.argv)
        return subprocess.run(resume.argv, cwd=resume.cwd, check=False).returncode
    except OSError as exc:
        raise AgentdexError(f"could not start {resume.executable}: {exc.strerror or exc}") from exc


def _first(records: list[dict[str, Any]], key: str) -> str | None:
    """The first value of ``key`` in conversation order: where the session started."""
    return next((r[key] for r in records if r.get(key)), None)


def _why_not(row: ResumeRow, result: ResumePlan, records: list[dict[str, Any]]) -> str | None:
    """Why this conversation cannot be resumed from here, or None when it can."""
    if not row.supported:
        return f"{row.agent} conversations cannot be resumed from a command line: {row.note}"
    if result.host is not None:
        return (
            f"this conversation was recorded on {result.host} (seen across the WSL bridge); "
            "resume it there"
        )
    found = sorted({r["store"] for r in records})
    if not set(found) & set(row.stores):
        known = ", ".join(f"{s} ({_holds(s)})" for s in found)
        return (
            f"agentdex knows this conversation only from {known}; {row.agent} resumes "
            f"conversations of {', '.join(row.stores)}"
        )
    if not _SAFE_ID.fullmatch(result.session_id):
        return f"the session id {result.session_id!r} is not safe to pass on a command line"
    if all(r.get("source_gone") for r in records if r["store"] in row.stores):
        return (
            f"{row.agent} no longer has this conversation (its files were deleted or rewritten);"
            " agentdex's archive keeps a copy: `agentdex show` or `agentdex export` it"
        )
    return None


def _fill(arg: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        arg = arg.replace(placeholder, value)
    return arg


def _find_executable(row: ResumeRow, name: str) -> tuple[str | None, str]:
    """The first of the agent's executable names found on PATH: (its path, the name to run)."""
    for candidate in dict.fromkeys((name, *row.executables)):
        found = shutil.which(candidate)
        if found is not None:
            return found, candidate
    return None, name


def _command_line(argv: list[str], cwd: str | None) -> str:
    """The command as one shell line, every part quoted (``cd DIR && ...``)."""
    line = shlex.join(argv)
    return f"cd {shlex.quote(cwd)} && {line}" if cwd else line


def _warnings(row: ResumeRow, result: ResumePlan, stores: set[str]) -> list[str]:
    warnings = []
    if result.cwd is None:
        warnings.append(
            "no directory was recorded for this conversation; it runs in the current one"
        )
    elif not result.cwd_exists:
        warnings.append(
            f"the conversation's directory {result.cwd} no longer exists (moved or deleted)"
        )
    if result.executable is None and result.argv:
        warnings.append(f"{result.argv[0]} is not on PATH")
    for store_id in sorted(stores):
        if store_id in row.store_notes:
            warnings.append(row.store_notes[store_id].replace("{session_id}", result.session_id))
    return warnings
