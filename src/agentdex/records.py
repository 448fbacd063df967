"""The normalized record every parser emits, and the vocabularies it uses.

Dependency-free on purpose: every other layer imports this module, so it
imports nothing from agentdex.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

Role = Literal["user", "assistant", "system", "tool"]
Kind = Literal["prompt", "message", "reasoning", "tool_call", "tool_result", "summary"]

ROLES: tuple[str, ...] = get_args(Role)
KINDS: tuple[str, ...] = get_args(Kind)

#: What a record adds to a conversation's counts (see :func:`conversation_part`).
Part = Literal["prompt", "reply", "tool"]


def conversation_part(role: str, kind: str) -> Part | None:
    """``prompt`` (what a person typed), ``reply`` (the agent's visible answer) or
    ``tool`` (a call or its result); None for reasoning, summaries and the
    harness text kept as ``message`` under another role.

    The one definition behind ``sessions`` counts and ``audit``'s role check.
    """
    if kind == "prompt":
        return "prompt"
    if kind == "message" and role == "assistant":
        return "reply"
    if kind in ("tool_call", "tool_result"):
        return "tool"
    return None


#: Stable agent ids. The catalogue rows use exactly these; nothing else may.
AGENTS: tuple[str, ...] = (
    "claude-code",
    "codex",
    "gemini-cli",
    "vscode-copilot",
    "cursor",
    "cursor-cli",
    "opencode",
    "cline",
    "aider",
    "pi",
    "grok",
    "antigravity-cli",
    "copilot-cli",
    "windsurf",
)


@dataclass(slots=True)
class Record:
    """One conversational item, normalized across agents.

    ``locator`` is enough to reopen the item in its source (``line:12``,
    ``row:message/msg_1``, ``json:/requests/3``); ``offset`` is the byte
    offset of the source line for resumable JSONL parsing (-1 when the
    source is not line-based). ``timestamp`` is UTC seconds since the epoch.
    """

    agent: str
    store: str
    source_path: str
    locator: str
    session_id: str
    role: Role
    kind: Kind
    text: str
    timestamp: float | None = None
    model: str | None = None
    cwd: str | None = None
    project: str | None = None
    branch: str | None = None
    worktree: str | None = None
    host: str | None = None
    offset: int = -1
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape (``docs/json-output.md``)."""
        data = asdict(self)
        data.pop("offset")
        data.pop("extra")
        data["timestamp"] = iso_utc(self.timestamp)
        return data


def iso_utc(ts: float | None) -> str | None:
    """Format epoch seconds as ISO-8601 UTC with a ``Z`` suffix."""
    if ts is None:
        return None
    try:
        return (
            datetime.fromtimestamp(ts, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )
    except (OverflowError, OSError, ValueError):
        return None


def parse_timestamp(value: object) -> float | None:
    """Normalize the timestamp shapes agents write to UTC epoch seconds.

    Accepts ISO strings (with ``Z`` or an offset; naive means UTC), unix
    seconds and unix milliseconds (numbers or numeric strings). Anything
    else gives ``None``; this never raises.

    >>> parse_timestamp("2026-01-02T03:04:05Z")
    1767323045.0
    >>> parse_timestamp(1767323045000)
    1767323045.0
    >>> parse_timestamp("garbage") is None
    True
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            num = float(value)
        except OverflowError:  # an int too large for a float
            return None
        if not math.isfinite(num) or num <= 0:  # NaN, inf (would never shrink) or non-positive
            return None
        # Values past year ~2286 in seconds are milliseconds (or micro).
        while num > 1e11:
            num /= 1000.0
        return num
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if text.replace(".", "", 1).isdigit():
            return parse_timestamp(float(text))
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.timestamp()
    return None
