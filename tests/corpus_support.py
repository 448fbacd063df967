"""A real-shaped home (``examples/corpus_home.py``) and a CLI run on a real terminal (a pty).

The shared corpus's real Claude Code and Aider transcripts, peers' fixtures of
other agents and a generated 600-message conversation: what issue 26's
findings were seen on. Tests using it skip when ``../shared/corpus`` is absent.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from types import ModuleType

import pytest

from conftest import CORPUS_DIR, REPO_DIR, SRC_DIR

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def corpus_home_module() -> ModuleType:
    path = REPO_DIR / "examples" / "corpus_home.py"
    spec = importlib.util.spec_from_file_location("corpus_home", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render_corpus_home(dest: Path, messages: int = 600) -> tuple[Path, dict[str, str]]:
    """The home (skips without the corpus) and the environment that sees it as home."""
    if not (CORPUS_DIR / "MANIFEST.md").is_file():
        pytest.skip("shared corpus not present beside this clone")
    module = corpus_home_module()
    home = module.render(dest, CORPUS_DIR, messages)
    env = module.environment(home)
    env["PYTHONPATH"] = str(SRC_DIR)
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    return home, env


def cli(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m agentdex ARGS`` in a pipe."""
    return subprocess.run(
        [sys.executable, "-m", "agentdex", *args],
        capture_output=True,
        stdin=subprocess.DEVNULL,  # never a terminal: nothing can ask
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def on_terminal(
    env: dict[str, str], *args: str, columns: int = 80, rows: int = 200, cwd: Path | None = None
) -> tuple[int, str]:
    """``python -m agentdex ARGS`` on a pty of ``columns`` x ``rows``: (status, screen text)."""
    main, replica = pty.openpty()
    fcntl.ioctl(replica, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    # the pty's size decides the width: a COLUMNS/LINES the runner set (xdist workers
    # can carry one) would win over it in the program
    term_env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    term_env.update(TERM="xterm-256color", AGENTDEX_PAGER="cat", NO_COLOR="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentdex", *args],
        stdin=replica,
        stdout=replica,
        stderr=replica,
        env=term_env,
        cwd=cwd,
    )
    os.close(replica)
    out = drain(main, proc)
    code = proc.wait(timeout=60)
    os.close(main)
    return code, ANSI.sub("", out.decode("utf-8", "replace"))


def drain(main: int, proc: subprocess.Popen[bytes], seconds: float = 120) -> bytes:
    """Everything a child writes to the pty whose main end is ``main``, until it closes its
    end or exits (at most ``seconds``)."""
    out = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    return out
