"""Hostile escape sequences in a transcript cannot drive the terminal (issue 22).

A Claude Code conversation carries, in its prompt, reply, title and cwd, an
OSC 52 clipboard write, OSC 0 / OSC 2 window titles, an OSC 8 hyperlink, a
cursor-moving CSI, a C1 CSI (U+009B) and a bidi override. Shown in a real
tmux pane (which honours OSC 52 with ``set-clipboard on`` and titles with
``set-titles``) by every human output (``show``, ``search``,
``conversations``, ``resume --print``, a Markdown export to the terminal):
no paste buffer appears, the pane title stays, and ESC is shown as ``^[``.
``--json`` escapes every control character, C1 included.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import CliResult
from test_cli_conventions import claude_session
from test_terminal_tmux import Pane, pane_env

pytestmark = [
    pytest.mark.serial,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

SESSION = "e5c0e5c0-0000-4000-8000-000000000052"
ESC, BEL = "\x1b", "\x07"
CLIPBOARD = f"{ESC}]52;c;cm0gLXJmIH4K{BEL}"  # "rm -rf ~" into the clipboard
TITLE = f"{ESC}]0;pwned-title{BEL}{ESC}]2;pwned-title{ESC}\\"
LINK = f"{ESC}]8;;https://evil.example/{ESC}\\click here{ESC}]8;;{ESC}\\"
HOSTILE = f"look {CLIPBOARD}{TITLE}{LINK} {ESC}[2A{ESC}[2Kredrawn \x9b31m c1 \u202eevil"


@pytest.fixture
def hostile_pane(home: Path, tmp_path: Path) -> Iterator[Pane]:
    path = claude_session(home, SESSION, f"/work/app{ESC}]0;cwd-title{BEL}", [HOSTILE, HOSTILE])
    title = {"type": "ai-title", "sessionId": SESSION, "aiTitle": f"t {TITLE}{CLIPBOARD}"}
    with path.open("a") as stream:
        stream.write(json.dumps(title) + "\n")
    pane = Pane(f"agentdex-esc-{os.getpid()}-{tmp_path.name}", pane_env(tmp_path), tmp_path)
    try:
        pane._tmux("set-option", "-g", "set-clipboard", "on")  # honour OSC 52
        pane._tmux("set-option", "-g", "allow-rename", "on")
        pane._tmux("select-pane", "-t", "t", "-T", "safe-title")
        pane.run("agentdex index >/dev/null")
        yield pane
    finally:
        pane.close()


def _state(pane: Pane) -> tuple[str, str]:
    buffers = pane._tmux("list-buffers")
    title = pane._tmux("display-message", "-p", "-t", "t", "#{pane_title}").strip()
    return buffers, title


@pytest.mark.parametrize(
    "command",
    [
        f"agentdex show {SESSION} --no-pager",
        "agentdex search look --no-pager",
        "agentdex search look | cat",
        "agentdex conversations",
        "agentdex conversations | cat",
        f"agentdex export {SESSION} --format md -o -",
        f"agentdex resume {SESSION} --print",
    ],
)
def test_human_output_shows_escapes_and_never_acts_on_them(
    hostile_pane: Pane, command: str
) -> None:
    screen = hostile_pane.run(command)
    buffers, title = _state(hostile_pane)
    assert buffers == "", f"OSC 52 wrote a paste buffer: {buffers!r}"
    assert title == "safe-title"
    assert "^[" in screen  # ESC made visible
    if "conversations" in command:
        assert "pwned-title^G" in screen  # the title, shown
    elif "resume" not in command:
        assert "redrawn" in screen and "look" in screen


def test_json_escapes_every_control_character(
    home: Path, run_cli: Callable[..., CliResult]
) -> None:
    claude_session(home, SESSION, "/work/app", [HOSTILE, "ok"])
    for args in (("show", SESSION, "--json"), ("search", "look", "--json")):
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        raw = result.stdout
        assert not any(ord(c) < 0x20 and c not in "\n" for c in raw)
        assert not any(0x7F <= ord(c) <= 0x9F for c in raw)
        assert "\\u001b]52;c;" in raw and "\\u009b31m" in raw
        text = json.dumps(json.loads(raw))
        assert "\\u001b]52" in text  # the value itself is kept, escaped
