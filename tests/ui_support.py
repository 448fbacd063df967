"""Helpers for the web explorer's tests and benchmark: real Claude Code transcripts, a
real ``agentdex ui`` process on a sample home, and a headless Debian chromium.

Transcripts are written in Claude Code's own JSONL shape (envelopes, ``tool_use`` /
``tool_result`` blocks, ``thinking``), so discovery, parsing, indexing and ``show``
run for real. The server is a subprocess with an explicit hermetic environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
CHROMIUM = os.environ.get("AGENTDEX_CHROMIUM", "/usr/bin/chromium")
UI_COMMAND = (sys.executable, "-m", "agentdex", "ui", "--no-open", "--port", "0", "--json")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def claude_line(
    session_id: str,
    index: int,
    *,
    role: str,
    ts: float,
    cwd: str,
    text: str | None = None,
    tool: tuple[str, dict[str, Any]] | None = None,
    result: str | None = None,
    thinking: str | None = None,
    branch: str = "main",
    model: str = "claude-sonnet-4-5",
) -> dict[str, Any]:
    """One Claude Code transcript line (the shape of ``~/.claude/projects/*/<id>.jsonl``)."""
    uid = f"{session_id[:8]}-{index:04d}-4000-8000-{index:012d}"
    envelope: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        "version": "2.1.40",
        "gitBranch": branch,
        "type": role,
        "uuid": uid,
        "timestamp": iso(ts),
    }
    if role == "user":
        content: Any = text
        if result is not None:
            content = [{"type": "tool_result", "tool_use_id": f"toolu_{index}", "content": result}]
        envelope["message"] = {"role": "user", "content": content}
        return envelope
    blocks: list[dict[str, Any]] = []
    if thinking is not None:
        blocks.append({"type": "thinking", "thinking": thinking, "signature": "sig"})
    if text is not None:
        blocks.append({"type": "text", "text": text})
    if tool is not None:
        blocks.append(
            {"type": "tool_use", "id": f"toolu_{index}", "name": tool[0], "input": tool[1]}
        )
    envelope["message"] = {
        "id": f"msg_{index}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }
    return envelope


def transcript_path(home: Path, cwd: str, session_id: str) -> Path:
    slug = cwd.replace("/", "-")
    folder = home / ".claude" / "projects" / slug
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{session_id}.jsonl"


def write_lines(path: Path, lines: Iterable[dict[str, Any]], mode: str = "w") -> None:
    with open(path, mode, encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line) + "\n")


def chat_lines(
    session_id: str, count: int, *, cwd: str, start: float, word: str = "zebra"
) -> Iterator[dict[str, Any]]:
    """``count`` alternating prompts and answers, every text unique and holding ``word``."""
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"{word} message {i} of {session_id[:8]}: " + ("lorem ipsum dolor " * (i % 7))
        if role == "assistant" and i % 10 == 1:
            text += f"\n\n```python\ndef step_{i}(x):\n    return x + {i}  # {word}\n```\n"
        yield claude_line(session_id, i, role=role, ts=start + i, cwd=cwd, text=text)


LONG_CHAT = "aaaaaaaa-0000-4000-8000-000000005000"
OTHER_CHAT = "bbbbbbbb-0000-4000-8000-000000007000"


def build_big_home(home: Path) -> Path:
    """5,000 + 7,000 messages holding "zebra": 12,000 results and one 5,000-message chat.

    Returns the project directory both conversations ran in.
    """
    cwd = home / "src" / "big"
    cwd.mkdir(parents=True)
    start = time.time() - 86_400
    for session, count in ((LONG_CHAT, 5000), (OTHER_CHAT, 7000)):
        path = transcript_path(home, str(cwd), session)
        write_lines(path, chat_lines(session, count, cwd=str(cwd), start=start))
    return cwd


def render_sample_home(dest: Path) -> Path:
    """``examples/sample_home.py`` into ``dest`` (real git repos included)."""
    subprocess.run(
        [sys.executable, str(REPO / "examples" / "sample_home.py"), str(dest)],
        check=True,
        capture_output=True,
    )
    return dest.resolve()


def server_env(home: Path, data: Path) -> dict[str, str]:
    """The process env pointed at ``home`` and ``data`` only (no real history reachable)."""
    from conftest import AGENT_ENV_VARS

    env = {k: v for k, v in os.environ.items() if k not in AGENT_ENV_VARS}
    env.update(
        HOME=str(home),
        USERPROFILE=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        AGENTDEX_DATA_DIR=str(data),
        AGENTDEX_CONFIG=str(data / "config.toml"),
        AGENTDEX_WSL="0",
        AGENTDEX_WSL_USERS_ROOT=str(data / "no-windows-mount"),
        GIT_CONFIG_NOSYSTEM="1",
        PYTHONPATH=str(SRC),
    )
    return env


@contextmanager
def ui_server(
    home: Path, data: Path, workspace: Path, extra_env: dict[str, str] | None = None
) -> Iterator[dict[str, Any]]:
    """Run ``agentdex ui --no-open --port 0 --json``; yields its JSON line plus ``token``."""
    data.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [*UI_COMMAND, "--workspace", str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**server_env(home, data), **(extra_env or {})},
        cwd=str(workspace),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(
                f"agentdex ui did not start: {proc.stderr.read() if proc.stderr else ''}"
            )
        info: dict[str, Any] = json.loads(line)
        info["token"] = Path(info["token_path"]).read_text(encoding="utf-8").strip()
        yield info
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def browser_available() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    return None


def launch_args() -> dict[str, Any]:
    path = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    return {"executable_path": path, "headless": True, "args": CHROMIUM_ARGS}


def browser_context(browser: Any, token: str | None, *, timeout: float = 60_000) -> Any:
    """A fresh browser context (1280x860) whose tabs hold ``token`` as if logged in."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(timeout)
    if token is not None:
        context.add_init_script(f"sessionStorage.setItem('agentdex.token', {token!r})")
    return context


def new_session_id() -> str:
    return str(uuid.uuid4())
