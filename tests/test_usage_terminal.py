"""`usage`'s table on a terminal is written without Rich (its import was ~30 ms of a fresh
process): the same bytes Rich wrote for the same lines, colour only where it is on, and
text from the index (model names) made terminal-safe and never read as markup."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentdex.cli._output import UNWRAPPED, _console_class
from agentdex.cli._table import Column, layout, render, sgr_line
from conftest import SRC_DIR
from corpus_support import drain
from test_usage_index import _claude, _transcript

pytestmark = pytest.mark.deferred_postings

STYLES = ("", "bold", "dim", "bold dim")
_pieces = st.lists(
    st.tuples(st.text(alphabet="ab …$,1 ", max_size=6), st.sampled_from(STYLES)), max_size=8
)


def _rich(lines: list[object]) -> str:
    """What usage wrote through Rich before: the lines in one print, no wrapping."""
    from rich.text import Text

    out = io.StringIO()
    console = _console_class()(
        file=out,
        force_terminal=True,
        color_system="standard",
        width=UNWRAPPED,
        highlight=False,
        soft_wrap=False,
        emoji=False,
    )
    console.print(Text("\n").join(lines), no_wrap=True, overflow="ignore", crop=False)
    return out.getvalue()


@given(st.lists(st.tuples(_pieces, st.sampled_from(("", "dim", "bold"))), min_size=1))
def test_a_line_is_written_as_rich_wrote_it(lines: list[tuple[list[tuple[str, str]], str]]) -> None:
    from rich.text import Text

    texts = []
    for pieces, style in lines:
        text = Text(style=style)
        for piece, piece_style in pieces:
            text.append(piece, style=piece_style)
        texts.append(text)
    ours = "\n".join(sgr_line(pieces, style, color=True) for pieces, style in lines) + "\n"
    assert ours == _rich(texts)
    plain = [sgr_line(pieces, style, color=False) for pieces, style in lines]
    assert plain == ["".join(piece for piece, _ in pieces) for pieces, _ in lines]


def test_a_table_is_written_as_rich_wrote_it() -> None:
    columns = (Column("name", flex=True, floor=4), Column("n", right=True, style="bold"))
    rows = [["first \x1b]52;c;x\x07", "1"], ["second, a longer one", "22"], ["total", "23"]]
    for width in (None, 30, 12):
        lines = render(columns, rows, width)
        lines[-1].stylize("bold")
        pieces = layout(columns, rows, width)
        styles = ["dim", "", "", "bold"]
        ours = [sgr_line(p, s, color=True) for p, s in zip(pieces, styles, strict=True)]
        assert "\n".join(ours) + "\n" == _rich(lines), width
        assert "\x1b]" not in "".join(ours)
    assert "^[]52;c;x^G" in sgr_line(layout(columns, rows, None)[1], color=True)


def _on_pty(env: dict[str, str], *args: str) -> tuple[str, str]:
    """``python ARGS`` with stdout on a 120-column pty: (what the terminal got, stderr)."""
    main, replica = pty.openpty()
    fcntl.ioctl(replica, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, *args], stdin=replica, stdout=replica, stderr=subprocess.PIPE, env=env
    )
    os.close(replica)
    out = drain(main, proc)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    os.close(main)
    return out.decode("utf-8", "replace"), err


def test_the_terminal_table_needs_no_rich_and_keeps_index_text_inert(home: Path) -> None:
    odd = "odd-\x1b[31m[bold]model"  # an escape and Rich markup in a model name
    _transcript(home, "s1", [
        _claude("s1", "m1", "2026-03-01T10:00:00Z", (10, 0, 0, 5)),
        _claude("s1", "m2", "2026-03-01T11:00:00Z", (3, 0, 0, 1), model=odd),
    ])  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(PYTHONPATH=str(SRC_DIR), TERM="xterm-256color", AGENTDEX_PAGER="cat")
    screen, err = _on_pty(env, "-X", "importtime", "-m", "agentdex", "usage", "--by", "model")
    imported = {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if "|" in line}
    assert "agentdex.cli._table" in imported  # the table was laid out in this process
    assert not {name for name in imported if name.split(".")[0] == "rich"}
    lines = screen.splitlines()
    assert lines[0].startswith("\x1b[2mmodel ") and lines[0].endswith("\x1b[0m")
    assert lines[-3].startswith("\x1b[1mtotal ")
    assert "\x1b[1m" in lines[1] and "claude-opus-4-6" in lines[1]  # the cost, bold
    # the model name is shown, never acted on: its ESC is ^[, its [bold] is text
    assert "odd-^[[31m[bold]model" in screen and "\x1b[31m" not in screen
    assert lines[-2] == (
        "\x1b[2m* unpriced: 1 calls of odd-^[[31m[bold]model (no price known; cost shown is"
        " the priced part)\x1b[0m"
    )
    assert lines[-1].startswith("\x1b[2mprices: shipped table of ")
    no_colour, _ = _on_pty({**env, "NO_COLOR": "1"}, "-m", "agentdex", "usage", "--by", "model")
    assert "\x1b" not in no_colour and "odd-^[[31m[bold]model" in no_colour
