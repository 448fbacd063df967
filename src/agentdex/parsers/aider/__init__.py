"""Aider's per-project files (``.aider.chat.history.md``, ``.aider.input.history``).

Chat history (``aider.chat_history_md.v1``)
    Each run starts ``# aider chat started at YYYY-MM-DD HH:MM:SS`` (local
    time) and is a session (``<dir>@<start time>``). Aider writes three
    kinds of lines:

    * ``#### `` lines: what the person typed, one line each; consecutive
      ones are one input (so is a ``####`` run that follows a prompt with
      only blank lines between: Aider answers a prompt before it reads the
      next input, and copies whose line breaks were rewritten show a paste
      that way). An input is a ``user``/``prompt``, except an Aider command
      (``/add``, ``/run``, ``/undo``...: the first line is ``/word``), an
      answer to one of Aider's questions (``Add file to the chat? (Y)es/(N)o
      ... [Yes]: all``), an empty input (``<blank>``) and an architect's
      plan handed to its editor (an input equal to the reply just given,
      ``extra.handoff``), which are ``user``/``message``. ``/ask``,
      ``/code``, ``/architect``, ``/context`` and ``/help`` with text are
      requests to the model and stay prompts, unless Aider's echo of the
      request follows (``#### X`` after ``#### /ask X``): then the echo is
      the prompt and ``/ask X`` the command.
    * Aider's own output (token reports, applied edits, commits, errors):
      a line ``> text`` ending in exactly two spaces after text (Aider
      strips a message, then adds a two-space line break). A ``> `` line
      ending otherwise opens a multi-line message that runs to the next
      line ending that way (multi-line command echoes, edit-format errors).
      ``>>>>>>> REPLACE`` (an edit block's end) is not output: output lines
      are ``> `` or ``>`` alone. -> ``tool``/``tool_result``.
    * everything else: the model's reply, one ``assistant``/``message`` per
      run of such lines between inputs and output; a ``<thinking-content-…>``
      block inside it is the model's ``reasoning``.

    The model comes from ``> Model:`` / ``> Main model:`` lines. Every record
    of a run has the run's start time. Locator ``line:N`` (the first line).
    **Unit** (``count_raw``): a user input. **Roles** (``count_roles``):
    prompts and replies per run, counted by :mod:`._counts`.

Input history (``aider.input_history.v1``)
    ``# <datetime>`` then the input's lines, each prefixed ``+``: one
    ``user``/``prompt`` per entry (the prompt recall list, commands
    included). **Unit**: an entry with text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TextIO

from agentdex.parsers._agent_common import clip, make_record
from agentdex.parsers.aider._counts import (
    count_chat_history,
    count_input_history,
    count_input_roles,
    count_roles,
)
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics, guard
from agentdex.records import Kind, Record, Role

__all__ = ["PARSERS", "is_command", "parse_chat_history", "parse_input_history"]

START = "# aider chat started at "
_MODEL_RE = re.compile(r"^> (?:Main model|Model): (\S+)")
_COMMAND = re.compile(r"^/([a-z][\w-]*)(?:\s+(\S.*))?$")
#: Commands whose text goes to the model as a request.
_ASKING = frozenset({"ask", "code", "architect", "context", "help"})
_ANSWER = re.compile(r"\(Y\)es/\(N\)o.*\]:\s*\S*$")
_MESSAGE_END = re.compile(r"\S  $")
#: A ``> `` line without Aider's line break looks this far ahead for the end of its message.
MAX_CONTINUATION = 400


def _local_ts(text: str) -> float | None:
    """Aider writes naive local times; interpret them in this machine's zone."""
    text = text.strip()
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S"):
        try:
            return datetime.strptime(text, fmt).timestamp()
        except ValueError:
            continue
    return None


def is_command(text: str) -> bool:
    """An Aider command or an answer to Aider's question: typed, but not a request to the model."""
    first = text.strip().split("\n", 1)[0].strip()
    if _ANSWER.search(first):
        return True
    found = _COMMAND.match(first)
    if found is None:
        return False
    return not (found.group(1) in _ASKING and found.group(2))


def is_output(line: str) -> bool:
    """A line of Aider's own output (``> text`` or a bare ``>``), not ``>>>>>>> REPLACE``."""
    return line.startswith("> ") or line.rstrip() == ">"


def ends_output(line: str) -> bool:
    """Aider strips an output message and ends it with two spaces (a markdown line break)."""
    return bool(_MESSAGE_END.search(line)) or line.rstrip() == ">"


def classify(handle: TextIO) -> Iterator[tuple[int, str, str]]:
    """``(line number, kind, body)`` per line: kind ``start``, ``input``, ``output`` or ``reply``.

    A ``> `` line without the two-space break is held, with what follows,
    until a line ending the message; if none comes (input, more output, a
    new run, the end, or :data:`MAX_CONTINUATION` lines), the held lines
    are read again one by one.
    """
    held: list[tuple[int, str]] = []

    def release() -> Iterator[tuple[int, str, str]]:
        first, rest = held[0], held[1:]
        held.clear()
        yield first[0], "output", _output_body(first[1])
        for lineno, line in rest:
            yield from single(lineno, line)

    def single(lineno: int, line: str) -> Iterator[tuple[int, str, str]]:
        if held:
            yield from hold(lineno, line)
        elif line.startswith(START):
            yield lineno, "start", line[len(START) :]
        elif line.startswith("####"):
            yield lineno, "input", (line[5:] if line.startswith("#### ") else line[4:]).rstrip()
        elif is_output(line):
            if ends_output(line):
                yield lineno, "output", _output_body(line)
            else:
                held.append((lineno, line))
        else:
            yield lineno, "reply", line

    def hold(lineno: int, line: str) -> Iterator[tuple[int, str, str]]:
        interrupts = line.startswith(("####", START)) or is_output(line)
        if interrupts or len(held) > MAX_CONTINUATION:
            yield from release()
            yield from single(lineno, line)
            return
        held.append((lineno, line))
        if ends_output(line):
            first_line = held[0][0]
            body = "\n".join([_output_body(held[0][1]), *(text.rstrip() for _, text in held[1:])])
            held.clear()
            yield first_line, "output", body

    for lineno, raw in enumerate(handle, 1):
        yield from single(lineno, raw.rstrip("\n"))
    if held:
        yield from release()


def _output_body(line: str) -> str:
    return (line[2:] if line.startswith("> ") else line[1:]).rstrip()


_ROLES: dict[str, tuple[Role, Kind]] = {
    "prompt": ("user", "prompt"),
    "command": ("user", "message"),
    "handoff": ("user", "message"),
    "output": ("tool", "tool_result"),
    "reply": ("assistant", "message"),
    "reasoning": ("assistant", "reasoning"),
}
_INPUTS = ("prompt", "command", "handoff")
_THINKING = re.compile(r"^</?thinking-content-[0-9a-f]+>\s*$")


def _pieces(kind: str, lines: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """``(first line, kind, text)`` of one block: an input is a prompt or a command; a
    reply wrapped around Aider's ``<thinking-content-...>`` block gives its reasoning too.
    Each piece is located at its first non-blank line."""
    if kind == "reply":
        parts: list[tuple[str, list[tuple[int, str]]]] = [("reply", [])]
        for lineno, line in lines:
            if _THINKING.match(line):
                parts.append(("reasoning" if line[1] != "/" else "reply", []))
            else:
                parts[-1][1].append((lineno, line))
        merged: dict[str, list[tuple[int, str]]] = {"reasoning": [], "reply": []}
        for name, part in parts:
            merged[name].extend(part)
        groups = [("reasoning", merged["reasoning"]), ("reply", merged["reply"])]
    elif kind == "blank":
        groups = []
    else:
        groups = [(kind, lines)]
    pieces = []
    for name, group in groups:
        text = "\n".join(line for _, line in group).strip()
        if not text:
            continue
        first = next(lineno for lineno, line in group if line.strip())
        pieces.append((first, name, text))
    return pieces


Block = tuple[str, list[tuple[int, str]]]


def blocks(handle: TextIO) -> Iterator[Block]:
    """Runs of lines of one kind (``start``, ``input``, ``output``, ``reply``); a reply run
    of blank lines only is ``blank``."""
    kind: str | None = None
    lines: list[tuple[int, str]] = []
    for lineno, line_kind, body in classify(handle):
        if line_kind != kind or line_kind == "start":
            if kind is not None:
                yield _named(kind, lines)
            kind, lines = line_kind, []
        lines.append((lineno, body))
    if kind is not None:
        yield _named(kind, lines)


def _named(kind: str, lines: list[tuple[int, str]]) -> Block:
    if kind == "reply" and not any(line.strip() for _, line in lines):
        return "blank", lines
    return kind, lines


def _text(lines: list[tuple[int, str]]) -> str:
    return "\n".join(line for _, line in lines).strip()


def _flat(text: str) -> str:
    return " ".join(_REASONING.sub("", text).split())


_REASONING = re.compile(r"<thinking-content-([0-9a-f]+)>.*?(?:</thinking-content-\1>|\Z)", re.S)


def _asks(text: str) -> str | None:
    """The request of ``/ask X`` (``/code``, ``/architect``...), else None."""
    found = _COMMAND.match(text.split("\n", 1)[0].strip())
    return found.group(2) if found and found.group(1) in _ASKING and found.group(2) else None


def _sort_input(text: str, last_reply: str) -> str:
    """``prompt``, or ``command``: an Aider command, an answer, an empty input
    (``<blank>``) or an architect's plan handed to its editor (the reply just given)."""
    if text in ("", "<blank>") or is_command(text):
        return "command"
    if last_reply and _flat(text) == last_reply:
        return "handoff"
    return "prompt"


def inputs(stream: Iterator[Block]) -> Iterator[Block]:
    """Blocks with each user input whole and sorted (kind ``prompt``, ``command``, ``handoff``).

    Aider writes an input as ``#### `` lines ending in two spaces, with a blank line
    before it; copies whose line breaks were rewritten (a Windows paste) show one
    input as ``####`` lines with blank lines between. Aider answers a prompt before
    it reads the next input, so an input that follows a prompt with only blank
    lines between continues it, except the echo of ``/ask X``: ``X`` is the
    request (the prompt) and ``/ask X`` the command that sent it.
    """
    pending: list[tuple[int, str]] | None = None
    blanks: list[Block] = []
    last_reply = ""

    def settle() -> Iterator[Block]:
        nonlocal pending, blanks
        if pending is not None:
            yield _sort_input(_text(pending), last_reply), pending
        yield from blanks
        pending, blanks = None, []

    for kind, lines in stream:
        if kind == "blank":
            if pending is not None:
                blanks.append((kind, lines))
            else:
                yield kind, lines
            continue
        if kind == "input" and pending is not None:
            before = _text(pending)
            asked = _asks(before)
            if asked is not None and " ".join(asked.split()) == " ".join(_text(lines).split()):
                yield "command", pending
                yield from blanks
                pending, blanks = lines, []
                continue
            if _sort_input(before, last_reply) == "prompt":
                pending, blanks = [*pending, *lines], []
                continue
        yield from settle()
        if kind == "input":
            pending = list(lines)
            continue
        if kind == "reply":
            last_reply = _flat(_text(lines))
        elif kind == "start":
            last_reply = ""
        yield kind, lines
    yield from settle()


def parse_chat_history(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    guard(ref.path)
    path = Path(ref.path)
    cwd = str(path.parent)
    session = f"{cwd}@start"
    ts: float | None = None
    model: str | None = None
    with open(path, encoding="utf-8", errors="replace") as handle:
        for kind, lines in inputs(blocks(handle)):
            if kind == "start":
                model, body = None, lines[0][1]
                ts = _local_ts(body)
                session = f"{cwd}@{body.strip()}"
                continue
            if kind == "output":
                for _, body in lines:
                    if found := _MODEL_RE.match("> " + body):
                        model = found.group(1)
            if kind in _INPUTS:
                cursor.units += 1
            for lineno, piece, text in _pieces(kind, lines):
                role, record_kind = _ROLES[piece]
                yield make_record(
                    ref,
                    f"line:{lineno}",
                    session,
                    role,
                    record_kind,
                    clip(text) if piece == "output" else text,
                    timestamp=ts,
                    cwd=cwd,
                    model=model if role == "assistant" else None,
                    **({"extra": {"handoff": True}} if piece == "handoff" else {}),
                )


def parse_input_history(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    guard(ref.path)
    path = Path(ref.path)
    cwd = str(path.parent)
    entry: list[str] = []
    ts: float | None = None
    start = 0

    def flush() -> Iterator[Record]:
        text = "\n".join(entry).strip()
        if text:
            cursor.units += 1
            yield make_record(
                ref,
                f"line:{start}",
                f"aider-input:{cwd}",
                "user",
                "prompt",
                text,
                timestamp=ts,
                cwd=cwd,
            )

    with open(path, encoding="utf-8", errors="replace") as handle:
        for lineno, raw in enumerate(handle, 1):
            line = raw.rstrip("\n")
            if line.startswith("# "):
                yield from flush()
                entry, ts, start = [], _local_ts(line[2:]), lineno
            elif line.startswith("+"):
                if not entry and not start:
                    start = lineno
                entry.append(line[1:])
    yield from flush()


PARSERS = (
    ParserSpec(
        "aider.chat_history_md.v1",
        parse_chat_history,
        count_raw=count_chat_history,
        count_roles=count_roles,
    ),
    ParserSpec(
        "aider.input_history.v1",
        parse_input_history,
        count_raw=count_input_history,
        count_roles=count_input_roles,
    ),
)
