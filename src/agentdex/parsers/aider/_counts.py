"""Aider's independent counters: plain passes over the raw lines, none of the parser's code.

``count_roles`` labels every line first (an index-based scan that looks
ahead for the end of each ``> `` message), then counts runs of labels, so
it shares the documented rules with the parser but not its streaming
state machine.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentdex.parsers.base import RoleCounts

_START = "# aider chat started at "
_COMMAND = re.compile(r"/([a-z][\w-]*)(\s+\S.*)?$")
_ASKING = ("ask", "code", "architect", "context", "help")
_CONFIRMATION = re.compile(r"\(Y\)es/\(N\)o.*\]:\s*\S*$")
_LOOKAHEAD = 400
_REASONING = re.compile(r"<thinking-content-([0-9a-f]+)>.*?(?:</thinking-content-\1>|\Z)", re.S)


def count_chat_history(path: Path) -> int:
    """Runs of consecutive ``####`` lines (one user input each)."""
    count = 0
    previous_was_prompt = False
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            is_prompt = line.startswith("####")
            if is_prompt and not previous_was_prompt:
                count += 1
            previous_was_prompt = is_prompt
    return count


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


def count_input_roles(path: Path) -> RoleCounts:
    """Every input-history entry is a prompt of the folder's prompt log."""
    prompts = count_input_history(path)
    return {f"aider-input:{path.parent}": {"prompts": prompts, "replies": 0}} if prompts else {}


def _labels(lines: list[str]) -> list[str]:
    """One label per line: ``start``, ``in``, ``out`` or ``text``."""
    labels = ["text"] * len(lines)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(_START):
            labels[i] = "start"
        elif line.startswith("####"):
            labels[i] = "in"
        elif line.startswith("> ") or line.rstrip() == ">":
            labels[i] = "out"
            if not _ends(line):
                end = _message_end(lines, i)
                for k in range(i + 1, end + 1):
                    labels[k] = "out"
                i = end
        i += 1
    return labels


def _ends(line: str) -> bool:
    """Text followed by exactly two spaces, or a bare ``>``."""
    return line.rstrip() == ">" or (
        line.endswith("  ") and not line[:-2].endswith((" ", "\t")) and line[:-2] != ""
    )


def _message_end(lines: list[str], first: int) -> int:
    """Index of the line ending the ``> `` message at ``first`` (``first`` when none does)."""
    for k in range(first + 1, min(len(lines), first + _LOOKAHEAD + 2)):
        line = lines[k]
        if line.startswith(("####", "> ", _START)) or line.rstrip() == ">":
            return first
        if _ends(line):
            return k
    return first


def count_roles(path: Path) -> RoleCounts:
    """Per run (session ``<dir>@<start>``): inputs that are not tool commands, and replies."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        lines = handle.read().split("\n")
    labels = _labels(lines)
    counts: RoleCounts = {}
    session = f"{path.parent}@start"
    runs: list[tuple[str, list[str]]] = []
    for label, line in zip(labels, lines, strict=True):
        if label == "start":
            _tally(counts, session, runs)
            session, runs = f"{path.parent}@{line[len(_START) :].strip()}", []
        elif runs and runs[-1][0] == label:
            runs[-1][1].append(line)
        else:
            runs.append((label, [line]))
    _tally(counts, session, runs)
    return counts


def _tally(counts: RoleCounts, session: str, runs: list[tuple[str, list[str]]]) -> None:
    prompts = replies = 0
    for label, lines in runs:
        if label == "in":
            first = lines[0][4:].strip()
            command = _COMMAND.match(first)
            asking = command is not None and command.group(1) in _ASKING and command.group(2)
            answer = _CONFIRMATION.search(first) is not None
            prompts += not answer and (command is None or bool(asking))
        elif label == "text":
            outside = _REASONING.sub("", "\n".join(lines))
            replies += bool(outside.strip())
    if prompts or replies or session in counts:
        entry = counts.setdefault(session, {"prompts": 0, "replies": 0})
        entry["prompts"] += prompts
        entry["replies"] += replies
