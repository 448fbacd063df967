"""Run git with a timeout and turn its failures into one-line agentdex errors."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agentdex.errors import AgentdexError, NotFoundError

GIT_TIMEOUT_SECONDS = 30.0


class GitError(AgentdexError):
    """git itself failed (exit 1); the message carries git's own first line."""

    code = "GIT"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # Never block on a credential or editor prompt; keep messages parseable.
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_EDITOR"] = "true"
    env["LC_ALL"] = "C"
    return env


def run_git(
    cwd: Path | str, *args: str, check: bool = True, timeout: float = GIT_TIMEOUT_SECONDS
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C cwd args`` and return the completed process (bytes output)."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            env=_env(),
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} timed out after {timeout:g}s in {cwd}") from exc
    if check and proc.returncode != 0:
        raise GitError(f"git {args[0]} failed: {first_line(proc.stderr)}")
    return proc


def first_line(stream: bytes, limit: int = 300) -> str:
    """git's message on one line (continuation lines joined), decoded leniently."""
    parts = [line.strip() for line in stream.decode("utf-8", "replace").splitlines()]
    text = " ".join(p for p in parts if p)
    text = text.removeprefix("fatal: ").removeprefix("error: ")
    return (text[: limit - 3] + "...") if len(text) > limit else (text or "no message")


def toplevel(directory: Path | str) -> Path:
    """The worktree containing ``directory``; NotFoundError when it is not in a git repo."""
    path = Path(directory)
    if not path.is_dir():
        raise NotFoundError(f"no such directory: {directory}")
    proc = run_git(path, "rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0:
        raise NotFoundError(f"not inside a git repository: {directory}")
    return Path(proc.stdout.decode("utf-8", "surrogateescape").strip())
