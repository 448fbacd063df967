"""``session run``: real child processes in the session's work dir, exit codes and signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdex.api import sessions as api
from conftest import SRC_DIR

CliRun = Callable[..., subprocess.CompletedProcess[str]]

_PROBE = (
    "import os, sys; print(os.getcwd()); print(os.environ['AGENTDEX_SESSION']); "
    "sys.stdout.flush(); sys.exit(int(sys.stdin.read().strip() or 0))"
)


def test_run_uses_the_session_workdir_env_and_exit_status(tmp_path: Path, run_cli: CliRun) -> None:
    session = api.new_session(workdir=str(tmp_path), agent=f'{sys.executable} -c "{_PROBE}"')
    elsewhere = tmp_path.parent
    result = run_cli("session", "run", session["id"], input="7\n", cwd=elsewhere)
    assert result.returncode == 7, result.stderr
    assert result.stdout.splitlines() == [str(tmp_path), session["id"]]  # stdin/stdout passed
    explicit = run_cli(
        "session",
        "run",
        session["id"][:8],
        "--",
        sys.executable,
        "-c",
        "import os; print(os.getcwd())",
    )
    assert explicit.returncode == 0 and explicit.stdout.strip() == str(tmp_path)
    events = api.show_session(session["id"])["events"]
    kinds = [e["type"] for e in events]
    assert kinds == ["start"] + ["process-started", "process-exited"] * 2
    assert events[2]["exit_code"] == 7 and events[2]["pid"] == events[1]["pid"]
    assert events[1]["working_directory"] == str(tmp_path)


def test_run_refusals(tmp_path: Path, run_cli: CliRun) -> None:
    no_dir = api.new_session(agent="true")
    result = run_cli("session", "run", no_dir["id"])
    assert result.returncode == 4 and "has no work directory" in result.stderr
    no_cmd = api.new_session(workdir=str(tmp_path))
    result = run_cli("session", "run", no_cmd["id"])
    assert result.returncode == 2 and "no command" in result.stderr
    result = run_cli("session", "run", no_cmd["id"], "--", "definitely-not-a-command-xyz")
    assert result.returncode == 3 and "cannot run" in result.stderr
    gone = tmp_path / "gone"
    gone.mkdir()
    moved = api.new_session(workdir=str(gone), agent="true")
    gone.rmdir()
    result = run_cli("session", "run", moved["id"])
    assert result.returncode == 3 and "no longer exists" in result.stderr


def test_child_killed_by_signal_reports_128_plus_n(tmp_path: Path, run_cli: CliRun) -> None:
    session = api.new_session(workdir=str(tmp_path))
    result = run_cli("session", "run", session["id"], "--", "sh", "-c", "kill -9 $$")
    assert result.returncode == 128 + 9
    last = api.show_session(session["id"])["events"][-1]
    assert last["type"] == "process-exited" and last["signal"] == 9 and last["exit_code"] is None


_TRAP = """
import signal, sys, time
from pathlib import Path
def handler(signum, frame):
    Path('got').write_text(str(signum))
    sys.exit(42)
signal.signal(signal.SIGTERM, handler)
signal.signal(signal.SIGINT, handler)
Path('ready').write_text('1')
time.sleep(30)
sys.exit(1)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signals_sent_to_agentdex_reach_the_child(tmp_path: Path, signum: int) -> None:
    session = api.new_session(workdir=str(tmp_path))
    env = dict(os.environ, PYTHONPATH=str(SRC_DIR))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentdex",
            "session",
            "run",
            session["id"],
            "--",
            sys.executable,
            "-c",
            _TRAP,
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while not (tmp_path / "ready").exists():
        assert time.monotonic() < deadline and proc.poll() is None, "child never started"
        time.sleep(0.02)
    proc.send_signal(signum)
    assert proc.wait(20) == 42
    assert (tmp_path / "got").read_text() == str(int(signum))
    last = api.show_session(session["id"])["events"][-1]
    assert last == {**last, "type": "process-exited", "exit_code": 42}
    shown = api.show_session(session["id"])
    assert shown["running_pids"] == [] and shown["last_exit_code"] == 42


def test_context_for_the_session_workdir(tmp_path: Path, run_cli: CliRun) -> None:
    session = api.new_session(workdir=str(tmp_path))
    result = run_cli("session", "context", session["id"])
    try:
        from agentdex.api.context import snapshot
    except ImportError:
        assert result.returncode == 1
        assert result.stderr.strip() == "agentdex: workspace context is not available in this build"
        return
    assert result.returncode == 0, result.stderr  # pragma: no cover - after the merge
    expected = snapshot(str(tmp_path))  # pragma: no cover
    if hasattr(expected, "to_json"):  # pragma: no cover
        expected = expected.to_json()
    assert json.loads(result.stdout) == json.loads(json.dumps(expected, default=str))


def test_context_needs_a_workdir(run_cli: CliRun) -> None:
    session = api.new_session()
    result = run_cli("session", "context", session["id"])
    assert result.returncode == 4 and "no work directory" in result.stderr


_COUNT_SIGINT = """
import signal, sys, time
from pathlib import Path
hits = []
signal.signal(signal.SIGINT, lambda s, f: hits.append(s))
Path('ready').write_text('1')
deadline = time.monotonic() + 20
while not hits and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.5)  # room for a duplicate to arrive
Path('count').write_text(str(len(hits)))
sys.exit(0)
"""


def test_ctrl_c_at_a_terminal_reaches_the_child_exactly_once(tmp_path: Path) -> None:
    """With a real pty: ^C goes to the foreground group; agentdex must not forward it again."""
    import pty

    session = api.new_session(workdir=str(tmp_path))
    argv = [
        sys.executable,
        "-m",
        "agentdex",
        "session",
        "run",
        session["id"],
        "--",
        sys.executable,
        "-c",
        _COUNT_SIGINT,
    ]
    env = dict(os.environ, PYTHONPATH=str(SRC_DIR))
    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child execs at once
        os.execve(sys.executable, argv, env)
    try:
        deadline = time.monotonic() + 20
        while not (tmp_path / "ready").exists():
            assert time.monotonic() < deadline, "child never started"
            time.sleep(0.02)
        os.write(master, b"\x03")  # the terminal's interrupt character
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(master)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (tmp_path / "count").read_text() == "1"
