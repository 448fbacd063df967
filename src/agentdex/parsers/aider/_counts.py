"""Aider's independent counters: plain passes over the raw lines, none of the parser's code.

``count_roles`` labels every line first (an index-based scan that looks
ahead for the end of each ``> `` message), then counts runs of labels, so
it shares the documented rules with the parser but not its streaming
state machine. Runs of ``####`` lines are folded into inputs the documented
way: a run after a prompt with only blank lines between continues it,
except the echo of ``/ask X``.
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
    """User inputs: runs of ``####`` lines, folded (see the module docstring)."""
    return sum(1 for label, _ in _folded(path) if label in ("prompt", "command"))


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


def _runs(path: Path) -> list[tuple[str, list[str]]]:
    """Runs of equal labels; a ``text`` run of blank lines only is ``blank``."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        lines = handle.read().split("\n")
    runs: list[tuple[str, list[str]]] = []
    for label, line in zip(_labels(lines), lines, strict=True):
        if runs and runs[-1][0] == label and label != "start":
            runs[-1][1].append(line)
        else:
            runs.append((label, [line]))
    return [("blank" if lab == "text" and not "".join(ls).strip() else lab, ls) for lab, ls in runs]


def _body(run: list[str]) -> str:
    return "\n".join(line[4:].strip() for line in run).strip()


def _squash(text: str) -> str:
    return " ".join(_REASONING.sub("", text).split())


def _is_prompt(body: str, reply: str) -> bool:
    first = body.split("\n", 1)[0]
    if body in ("", "<blank>") or _CONFIRMATION.search(first):
        return False
    command = _COMMAND.match(first)
    if command is not None and not (command.group(1) in _ASKING and command.group(2)):
        return False
    return not (reply and _squash(body) == reply)


def _folded(path: Path) -> list[tuple[str, str]]:
    """``(label, text)`` per run, inputs folded and labelled ``prompt`` or ``command``."""
    out: list[tuple[str, str]] = []
    pending: str | None = None
    reply = ""
    for label, run in _runs(path):
        if label == "blank":
            continue
        if label == "in" and pending is not None:
            body = _body(run)
            asked = _COMMAND.match(pending.split("\n", 1)[0])
            echo = asked and asked.group(1) in _ASKING and asked.group(2)
            if echo and " ".join(str(echo).split()) == " ".join(body.split()):
                out.append(("command", pending))
                pending = body
                continue
            if _is_prompt(pending, reply):
                pending = pending + "\n" + body
                continue
        if pending is not None:
            out.append(("prompt" if _is_prompt(pending, reply) else "command", pending))
            pending = None
        if label == "in":
            pending = _body(run)
            continue
        text = "\n".join(run)
        if label == "text":
            reply = _squash(text)
        elif label == "start":
            reply = ""
        out.append((label, text))
    if pending is not None:
        out.append(("prompt" if _is_prompt(pending, reply) else "command", pending))
    return out


def count_roles(path: Path) -> RoleCounts:
    """Per run (session ``<dir>@<start>``): prompts, and replies (text outside reasoning)."""
    counts: RoleCounts = {}
    session = f"{path.parent}@start"
    prompts = replies = 0
    for label, text in _folded(path):
        if label == "start":
            _tally(counts, session, prompts, replies)
            session = f"{path.parent}@{text[len(_START) :].strip()}"
            prompts = replies = 0
        elif label == "prompt":
            prompts += 1
        elif label == "text":
            replies += bool(_REASONING.sub("", text).strip())
    _tally(counts, session, prompts, replies)
    return counts


def _tally(counts: RoleCounts, session: str, prompts: int, replies: int) -> None:
    if prompts or replies or session in counts:
        entry = counts.setdefault(session, {"prompts": 0, "replies": 0})
        entry["prompts"] += prompts
        entry["replies"] += replies
