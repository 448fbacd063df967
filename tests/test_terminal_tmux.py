"""agentdex in a real terminal, driven as a person would: tmux send-keys, capture-pane.

An 80x24 tmux pane runs bash with the hermetic environment. These tests check
what the pipe tests cannot: tables fitted to 80 columns, colour on a
terminal (and none with NO_COLOR or in a pipe), and long output opening a
pager (``less -FRX``) that ``--no-pager`` turns off. Skipped without tmux.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import SRC_DIR
from test_cli_conventions import claude_session

pytestmark = [
    pytest.mark.serial,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

DONE = "__AGENTDEX_DONE__"


class Pane:
    """One tmux server (own socket) with one 80x24 pane running bash."""

    def __init__(self, socket: str, env: dict[str, str], cwd: Path) -> None:
        self.socket = socket
        self.env = env
        self.runs = 0
        self._tmux(
            "new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "bash --noprofile --norc"
        )
        self._tmux("set-option", "-g", "status", "off")
        self.run(f"cd {cwd} && clear")

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
            check=True,
        )
        return done.stdout

    def type(self, text: str, enter: bool = True) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)
        if enter:
            self._tmux("send-keys", "-t", "t", "Enter")

    def key(self, name: str) -> None:
        self._tmux("send-keys", "-t", "t", name)

    def screen(self, escapes: bool = False) -> str:
        args = ["capture-pane", "-p", "-t", "t"] + (["-e"] if escapes else [])
        return self._tmux(*args)

    def command(self) -> str:
        return self._tmux("display-message", "-p", "-t", "t", "#{pane_current_command}").strip()

    def wait(self, predicate: object, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if callable(predicate) and predicate():
                return
            time.sleep(0.1)
        raise AssertionError(f"timed out; screen:\n{self.screen()}")

    def run(self, line: str, clear: bool = True) -> str:
        """Type ``line`` (after clearing the screen) and wait for it to finish; the screen."""
        if clear:
            self._tmux("send-keys", "-t", "t", "clear", "Enter")
            self._tmux("clear-history", "-t", "t")
        # a fresh marker per run (a stale screen cannot match), split in the typed line so
        # only the echo's output matches it
        self.runs += 1
        marker = f"{DONE}{self.runs}"
        half = len(marker) // 2
        self.type(f"{line}; echo {marker[:half]}''{marker[half:]}")
        self.wait(lambda: any(row.strip() == marker for row in self.screen().splitlines()))
        return self.screen()

    def close(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.socket, "kill-server"],
            env=self.env,
            capture_output=True,
            check=False,
        )


def pane_env(tmp_path: Path) -> dict[str, str]:
    """The hermetic environment for a pane: ``agentdex`` on PATH (this checkout), a plain
    xterm, no colour or pager overrides."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "agentdex").write_text(f'#!/bin/sh\nexec {sys.executable} -m agentdex "$@"\n')
    (bin_dir / "agentdex").chmod(0o755)
    env = dict(os.environ)
    for var in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "PAGER", "AGENTDEX_PAGER", "TMUX"):
        env.pop(var, None)
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(SRC_DIR),
        PS1="$ ",
        TERM="xterm-256color",
        LESSHISTFILE="-",
    )
    return env


@pytest.fixture
def pane(home: Path, tmp_path: Path) -> Iterator[Pane]:
    for n in range(12):
        claude_session(
            home,
            f"{n:04d}aaaa-0000-4000-8000-{n:012d}",
            f"/work/projects/a-fairly-long-project-name-{n}",
            [f"Conversation {n}: a long descriptive title about retry and backoff in tests", "ok"],
            day=1 + n,
        )
    env = pane_env(tmp_path)
    env["AGENTDEX_NOW"] = "2026-12-01T12:00:00Z"
    found = Pane(f"agentdex-test-{os.getpid()}-{tmp_path.name}", env, tmp_path)
    try:
        found.run("agentdex index >/dev/null")
        yield found
    finally:
        found.close()


def _rows(screen: str) -> list[str]:
    return [row for row in screen.splitlines() if row.strip()]


def test_conversations_table_keeps_title_and_time_at_80_columns(pane: Pane) -> None:
    screen = pane.run("agentdex conversations -n 8")
    rows = _rows(screen)
    header = next(row for row in rows if row.startswith("agent"))
    assert header.split() == ["agent", "id", "last", "messages", "project", "title"]
    table = [row for row in rows if row.startswith("claude-code")]
    assert len(table) == 8
    title_at = header.index("title")
    for row in table:
        assert len(row) <= 80
        assert "ago" in row  # the time column
        title = row[title_at:]
        assert title.startswith("Conversation ") and len(title) >= 22  # readable
    assert "…" in table[0]  # the project column gave way, cut with an ellipsis


def test_colour_on_a_terminal_and_none_when_asked_or_piped(pane: Pane) -> None:
    pane.run("agentdex search retry -n 2")
    screen = pane.screen(True)
    assert "\x1b[" in screen
    assert screen.index("claude-code") < screen.index("(2 of 12 results")  # note after results
    pane.run("NO_COLOR=1 agentdex search retry -n 2")
    coloured = [row for row in pane.screen(True).splitlines() if "claude-code" in row]
    assert coloured and not any("\x1b[" in row for row in coloured)
    pane.run("agentdex search retry -n 2 | cat")
    piped = [row for row in pane.screen(True).splitlines() if "claude-code" in row]
    assert piped and not any("\x1b[" in row for row in piped)
    assert all("\t" not in row for row in piped)  # tmux renders tabs as spaces
    forced = pane.run("agentdex search retry -n 2 --color always | cat", clear=True)
    assert "claude-code" in forced and "\x1b[" in pane.screen(True)


def test_long_output_opens_the_pager_and_no_pager_does_not(pane: Pane) -> None:
    pane.run("true")
    pane.type("agentdex sources")
    # less's prompt says how to go on and out (a bare ":" leaves a newcomer stuck)
    pane.wait(lambda: _rows(pane.screen())[-1:] == ["agentdex: space for more, q to quit"])
    first_page = pane.screen()
    assert "claude-code" in first_page and DONE not in first_page
    assert "jsonl" in first_page and "0009aaaa" not in first_page  # one screenful (0009 is last)
    pane.key("q")
    after = pane.run("true", clear=False)
    assert _rows(after)[-1].endswith("$") or _rows(after)[-1].endswith("#")
    flat = pane.run("agentdex sources --no-pager")
    assert "0009aaaa" in flat and "q to quit" not in flat
    piped = pane.run("agentdex sources | wc -l")
    counts = [row.strip() for row in _rows(piped) if row.strip().isdigit()]
    assert counts and int(counts[0]) >= 13  # every file and its agent, straight to the pipe
    custom = pane.run("PAGER='head -3' agentdex sources")
    assert len([row for row in _rows(custom) if "projects" in row or "claude" in row]) <= 3


def test_short_output_is_printed_without_a_pager(pane: Pane) -> None:
    screen = pane.run("agentdex search 'Conversation 3:' -n 1")  # returns: no pager waits
    assert "Conversation 3" in screen and ":" not in _rows(screen)
