"""Aider's per-project files (``.aider.chat.history.md``, ``.aider.input.history``).

Chat history: each run starts ``# aider chat started at YYYY-MM-DD HH:MM:SS``
(local time); consecutive ``#### `` lines are one user prompt; ``> `` lines
are Aider's own output (commands, edits, token reports: kept as tool
output); everything else is the model's reply. A run is a session
(``<dir>@<start time>``); the model comes from ``> Model:`` / ``> Main
model:`` lines. The unit counted for ``audit`` is a user turn (one prompt
with what followed it).

Input history: ``# <datetime>`` then the prompt's lines, each prefixed ``+``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from agentdex.parsers._agent_common import clip, make_record
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics, guard
from agentdex.records import Record, Role

_START = "# aider chat started at "
_MODEL_RE = re.compile(r"^> (?:Main model|Model): (\S+)")


def _local_ts(text: str) -> float | None:
    """Aider writes naive local times; interpret them in this machine's zone."""
    text = text.strip()
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S"):
        try:
            return datetime.strptime(text, fmt).timestamp()
        except ValueError:
            continue
    return None


def parse_chat_history(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    guard(ref.path)
    path = Path(ref.path)
    cwd = str(path.parent)
    session = f"{cwd}@start"
    ts: float | None = None
    model: str | None = None
    block: list[str] = []
    block_kind: str | None = None  # "prompt", "tool", "reply"
    block_line = 0

    def flush() -> Iterator[Record]:
        text = "\n".join(block).strip()
        if not text or block_kind is None:
            return
        role: Role = {"prompt": "user", "tool": "tool", "reply": "assistant"}[block_kind]  # type: ignore[assignment]
        kind = {"prompt": "prompt", "tool": "tool_result", "reply": "message"}[block_kind]
        yield make_record(
            ref,
            f"line:{block_line}",
            session,
            role,
            kind,  # type: ignore[arg-type]
            clip(text) if block_kind == "tool" else text,
            timestamp=ts,
            cwd=cwd,
            model=model if block_kind == "reply" else None,
        )

    with open(path, encoding="utf-8", errors="replace") as handle:
        for lineno, raw in enumerate(handle, 1):
            line = raw.rstrip("\n")
            if line.startswith(_START):
                yield from flush()
                block, block_kind, model = [], None, None
                stamp = line[len(_START) :]
                ts = _local_ts(stamp)
                session = f"{cwd}@{stamp.strip()}"
                continue
            if line.startswith("####"):
                kind, body = "prompt", line[5:] if line.startswith("#### ") else line[4:]
            elif line.startswith(">"):
                kind, body = "tool", line[2:] if line.startswith("> ") else line[1:]
                if found := _MODEL_RE.match(line):
                    model = found.group(1)
            else:
                kind, body = "reply", line
            if kind != block_kind:
                yield from flush()
                if kind == "prompt":
                    cursor.units += 1
                block, block_kind, block_line = [], kind, lineno
            block.append(body)
    yield from flush()


def count_chat_history(path: Path) -> int:
    """Runs of consecutive ``#### `` lines (one prompt each) with some text."""
    count = 0
    previous_was_prompt = False
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            is_prompt = line.startswith("####")
            if is_prompt and not previous_was_prompt:
                count += 1
            previous_was_prompt = is_prompt
    return count


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


def count_input_history(path: Path) -> int:
    """``# `` headers followed by at least one non-blank ``+`` line."""
    count, pending = 0, False
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.startswith("# "):
                pending = True
            elif line.startswith("+") and line[1:].strip() and pending:
                count += 1
                pending = False
    return count


PARSERS = (
    ParserSpec("aider.chat_history_md.v1", parse_chat_history, count_raw=count_chat_history),
    ParserSpec("aider.input_history.v1", parse_input_history, count_raw=count_input_history),
)
