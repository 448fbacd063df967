"""Where human output goes decides how it looks: terminal or pipe, colour, width, pager.

The conventions are ripgrep's and fd's:

* **terminal** (stdout is a TTY): laid out for the window's width, coloured
  (``--color auto``), and output longer than the window goes through a pager
  (``$AGENTDEX_PAGER``, else ``$PAGER``, else ``less -FRX``; ``--no-pager``
  or an empty/``cat`` pager turns it off);
* **pipe or file**: no colour, no wrapping, no truncation and no pager, so
  every line is whole for ``grep``/``awk``/``cut``.

``--color always|never`` overrides the colour choice either way; in ``auto``
mode ``NO_COLOR`` (any non-empty value) turns colour off and ``FORCE_COLOR``
/ ``CLICOLOR_FORCE`` turn it on. JSON output is never coloured or paged.
Rich is imported only when a console is asked for, so ``--json`` runs stay light.
"""

from __future__ import annotations

import functools
import io
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

COLOR_MODES = ("auto", "always", "never")
#: Width given to Rich off a terminal: wide enough that nothing ever wraps.
UNWRAPPED = 1_000_000
#: ``less``: quit at once when the output fits, keep colours, leave the screen as it is,
#: and a prompt that says how to get out (``:`` alone leaves a newcomer stuck).
DEFAULT_PAGER = ["less", "-FRX", "-Psagentdex\\: space for more, q to quit"]


class Output:
    """How this run prints: decided once, from the real stdout, before any capture.

    A plain class, not a dataclass: creating one costs every fresh process ~0.5-1 ms."""

    __slots__ = ("color", "height", "pager", "stderr_color", "terminal", "width")

    def __init__(
        self,
        *,
        terminal: bool,
        color: bool,
        stderr_color: bool,
        width: int | None,
        height: int | None,
        pager: bool,
    ) -> None:
        self.terminal = terminal
        self.color = color
        self.stderr_color = stderr_color
        self.width = width  #: the terminal's columns; None off a terminal (never wrap)
        self.height = height
        self.pager = pager


_current: Output | None = None


def _color_wanted(mode: str, is_tty: bool) -> bool:
    if mode == "always":
        return True
    if mode == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR") or os.environ.get("CLICOLOR_FORCE", "0") != "0":
        return True
    return is_tty and os.environ.get("TERM") != "dumb"


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def configure(color: str = "auto", pager: bool = True) -> Output:
    """Decide this run's output settings (called by the top-level command)."""
    global _current
    terminal = _isatty(sys.stdout)
    width = height = None
    if terminal:
        import shutil

        size = shutil.get_terminal_size((80, 24))
        width, height = max(size.columns, 20), max(size.lines, 2)
    _current = Output(
        terminal=terminal,
        color=_color_wanted(color, terminal),
        stderr_color=_color_wanted(color, _isatty(sys.stderr)),
        width=width,
        height=height,
        pager=pager and terminal,
    )
    return _current


def current() -> Output:
    """This run's settings (defaults when no top-level command configured them)."""
    return _current if _current is not None else configure()


def is_terminal() -> bool:
    """Lay output out for a person at a terminal (even while it is captured for the pager)."""
    return current().terminal


def console(stderr: bool = False) -> Any:
    """A Rich console that follows :func:`current`: width, colour, no wrapping in pipes."""
    settings = current()
    color = settings.stderr_color if stderr else settings.color
    terminal = _isatty(sys.stderr) if stderr else settings.terminal
    import shutil

    width = (shutil.get_terminal_size((80, 24)).columns if stderr else settings.width) or None
    return _console_class()(
        stderr=stderr,
        force_terminal=color or terminal,
        force_interactive=False if not terminal else None,
        color_system="auto" if color else None,
        no_color=False if color else None,
        width=width if terminal else UNWRAPPED,
        highlight=False,
        soft_wrap=False,
        emoji=False,
    )


#: what a terminal acts on: C0 controls but tab and newline, DEL, the C1 controls
#: (U+0080-U+009F: 0x9B is CSI, 0x9D is OSC), and the bidirectional overrides and
#: isolates that reorder how a line reads (U+202A-U+202E, U+2066-U+2069)
_CONTROLS = re.compile("\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r\n":
        return "\n"
    code = ord(char)
    if code < 0x20:
        return "^" + chr(code + 0x40)  # ESC -> ^[, BEL -> ^G, a lone CR -> ^M
    if code == 0x7F:
        return "^?"
    return f"<U+{code:04X}>"


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on shown visibly instead.

    The one sanitizer of human output (tables, ``show``, ``search``, ``resume
    --print``, an export written to a terminal, pipe rows): an OSC 52 sequence
    from a transcript cannot write the clipboard, set the window title, draw a
    fake link, or move the cursor to redraw a line. ``ESC`` is shown ``^[``;
    tabs and newlines stay (``\r\n`` becomes ``\n``).
    """
    if _CONTROLS.search(text) is None:
        return text
    return _CONTROLS.sub(_visible, text)


@functools.cache
def _console_class() -> Any:
    from rich.console import Console
    from rich.segment import Segment

    class PipeAwareConsole(Console):
        """Rich exits 1 on a closed pipe; agentdex reports it like other tools (quietly).

        Every piece of text is passed through :func:`terminal_safe` before Rich adds
        its own styling codes, so only agentdex's escape sequences reach the terminal.
        """

        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

        def _render_buffer(self, buffer: Any) -> str:
            safe = (
                segment
                if segment.control or not segment.text
                else Segment(terminal_safe(segment.text), segment.style, segment.control)
                for segment in buffer
            )
            rendered: str = super()._render_buffer(safe)
            return rendered

    return PipeAwareConsole


def pager_command() -> list[str] | None:
    """The pager to run, or None: ``$AGENTDEX_PAGER``, ``$PAGER``, then ``less -FRX``."""
    import shlex
    import shutil

    for var in ("AGENTDEX_PAGER", "PAGER"):
        value = os.environ.get(var)
        if value is not None:
            value = value.strip()
            if not value or value == "cat":
                return None
            return shlex.split(value)
    return list(DEFAULT_PAGER) if shutil.which("less") else None


class _Capture(io.TextIOWrapper):
    """stdout while paging: collects text, and still looks like the terminal it replaces."""

    def isatty(self) -> bool:
        return True


@contextmanager
def paged(enabled: bool = True) -> Iterator[None]:
    """Collect what the block prints; page it when it is taller than the terminal.

    Output that fits is written straight through, so short results never
    start a pager (``less -F`` would quit at once anyway, but without the
    cost of starting it).
    """
    settings = current()
    command = pager_command() if enabled and settings.pager else None
    if command is None:
        yield
        return
    real = sys.stdout
    buffer = io.BytesIO()
    capture = _Capture(buffer, encoding="utf-8", errors="replace", write_through=True)
    sys.stdout = capture
    try:
        yield
    finally:
        capture.flush()
        sys.stdout = real
        text = buffer.getvalue()
        lines = text.count(b"\n")
        if settings.height is not None and lines >= settings.height:
            _run_pager(command, text)
        else:
            real.buffer.write(text)
            real.flush()


def _run_pager(command: list[str], text: bytes) -> None:
    import subprocess

    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    try:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, env=env)
    except OSError:
        sys.stdout.buffer.write(text)  # no such pager: print as is
        sys.stdout.flush()
        return
    assert proc.stdin is not None
    try:
        proc.stdin.write(text)
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the reader quit the pager early: that is fine
    while True:
        try:
            proc.wait()
            return
        except KeyboardInterrupt:
            continue  # Ctrl-C belongs to the pager while it runs


def emit_row(fields: list[tuple[str, str]]) -> None:
    """One tab-separated line (a pipe's format): tabs and newlines inside a field become
    spaces; each field is styled only when colour is on (``--color always``)."""
    settings = current()
    parts = [terminal_safe(" ".join(value.split())) if value else "-" for value, _ in fields]
    if settings.color:
        from rich.style import Style

        parts = [
            Style.parse(style).render(part) if style else part
            for part, (_, style) in zip(parts, fields, strict=True)
        ]
    sys.stdout.write("\t".join(parts) + "\n")
