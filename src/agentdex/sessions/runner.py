"""Run a session's agent command in the session's own work directory.

The terminal is passed through (stdin/stdout/stderr inherited). SIGTERM
and SIGINT sent to agentdex are forwarded to the child; a SIGINT typed at
the terminal already reaches the child through the foreground process
group, so it is not sent a second time. The child's exit status is
returned (128 + N when it died of signal N).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType

from agentdex.errors import ConflictError, NotFoundError, UsageError
from agentdex.sessions.events import PROCESS_EXITED, PROCESS_STARTED
from agentdex.sessions.log import append_event
from agentdex.sessions.store import load, resolve_id

SESSION_ENV = "AGENTDEX_SESSION"
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _terminal_delivers_sigint() -> bool:
    """True when we share the terminal's foreground group (so the child got ^C too)."""
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        try:
            fd = stream.fileno()
            if os.isatty(fd):
                return os.tcgetpgrp(fd) == os.getpgrp()
        except (OSError, ValueError, AttributeError):
            continue
    return False


def command_for(agent: str | None, command: Sequence[str]) -> list[str]:
    """The explicit command, else the session's agent command split like a shell."""
    if command:
        return list(command)
    if agent:
        try:
            parts = shlex.split(agent)
        except ValueError as exc:
            raise UsageError(f"session agent command cannot be parsed: {exc}") from exc
        if parts:
            return parts
    raise UsageError("no command: give one after '--' or create the session with --agent")


def run_session(prefix: str, command: Sequence[str] = ()) -> int:
    """Run and wait; records ``process-started`` / ``process-exited`` in the log."""
    path = resolve_id(prefix)
    state, _ = load(path.stem)
    argv = command_for(state.agent, command)
    workdir = state.working_directory
    if workdir is None:  # the session's state, not the usage, is what is wrong
        raise ConflictError(
            f"session {state.id} has no work directory; set one with"
            f" 'agentdex session workdir {state.id} DIR'"
        )
    if not os.path.isdir(workdir):
        raise NotFoundError(f"session work directory no longer exists: {workdir}")
    env = dict(os.environ)
    env[SESSION_ENV] = state.id
    try:
        child = subprocess.Popen(argv, cwd=workdir, env=env)
    except (FileNotFoundError, PermissionError) as exc:
        raise NotFoundError(f"cannot run {argv[0]!r}: {exc.strerror or exc}") from exc
    append_event(
        path,
        {
            "type": PROCESS_STARTED,
            "at": time.time(),
            "pid": child.pid,
            "command": argv,
            "workingDirectory": workdir,
        },
    )

    def forward(signum: int, _frame: FrameType | None) -> None:
        if signum == signal.SIGINT and _terminal_delivers_sigint():
            return
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED_SIGNALS}
    try:
        while True:
            try:
                returncode = child.wait()
                break
            except KeyboardInterrupt:  # pragma: no cover - handler replaces default
                continue
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    died_of = -returncode if returncode < 0 else None
    append_event(
        path,
        {
            "type": PROCESS_EXITED,
            "at": time.time(),
            "pid": child.pid,
            "exitCode": returncode if returncode >= 0 else None,
            "signal": died_of,
        },
    )
    return 128 + died_of if died_of else returncode
