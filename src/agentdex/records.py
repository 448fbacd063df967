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

    The one definition behind ``conversations`` counts and ``audit``'s role check.
    """
    if kind == "prompt":
        return "prompt"
    if kind == "message" and role == "assistant":
        return "reply"
    if kind in ("tool_call", "tool_result"):
        return "tool"
    return None


#: The built-in agents' stable ids, in listing order. Each is an ``AGENT`` in
#: ``agentdex/catalogue/<id with _ for ->.py``; third-party agents add theirs
#: through the ``agentdex.agents`` entry points (``agentdex.catalogue.agents()``
#: lists them all).
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
    "roo-code",
    "kilo-code",
    "qwen-code",
    "goose",
    "kimi-cli",
    "openhands",
    "zed",
    "amp",
    "crush",
    "continue",
    "kiro-ide",
    "kiro-cli",
    "factory-droid",
    "warp",
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


#: The most tokens one model call can have in any one count; more is bad input (a
#: corrupt line, a cumulative total mistaken for a call), skipped and counted by ``audit``.
MAX_CALL_TOKENS = 10_000_000

#: the one type :meth:`Usage.problem` checks its counts fast for
_INTS = frozenset({int})

#: The token counts of :class:`Usage`, in order (``total_tokens`` is derived from them).
USAGE_COUNTS = (
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cache_write_1h_tokens",
)


@dataclass(slots=True)
class Usage:
    """The tokens of one model call, normalized across agents (``docs/usage.md``).

    ``input_tokens`` are prompt tokens billed at the fresh rate (no cache reads,
    no cache writes); ``output_tokens`` are everything generated, reasoning
    included, and ``reasoning_tokens`` the part of them that was reasoning
    (0 where the agent does not say). ``cache_write_1h_tokens`` is the part of
    ``cache_write_tokens`` written with a one-hour lifetime (priced higher than
    the default five minutes; Claude only).

    ``call_id`` names the call for de-duplication: the same call written by
    several files (a resumed or forked conversation copies its history) has
    the same id and is counted once. ``locator``/``offset`` say where it was
    read, as for :class:`Record`; a parser emits usage through
    :meth:`agentdex.parsers.base.ParseCursor.add_usage`.
    """

    agent: str
    store: str
    source_path: str
    locator: str
    session_id: str
    call_id: str
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_1h_tokens: int = 0
    timestamp: float | None = None
    model: str | None = None
    cwd: str | None = None
    project: str | None = None
    branch: str | None = None
    worktree: str | None = None
    host: str | None = None
    offset: int = -1

    @property
    def total_tokens(self) -> int:
        """input + cache read + cache write + output (reasoning is part of output)."""
        return (
            self.input_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + self.output_tokens
        )

    def counts(self) -> tuple[int, ...]:
        """The :data:`USAGE_COUNTS` in order."""
        return (
            self.input_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.output_tokens,
            self.reasoning_tokens,
            self.cache_write_1h_tokens,
        )

    def problem(self) -> str | None:
        """Why this usage is bad input (not a whole number, negative, absurd), or None."""
        counts = self.counts()
        # most usage: every count a plain int in range, so count_problem finds nothing
        if not (
            _INTS.issuperset(map(type, counts))
            and min(counts) >= 0
            and max(counts) <= MAX_CALL_TOKENS
        ):
            for name, value in zip(USAGE_COUNTS, counts, strict=True):
                why = count_problem(value)
                if why is not None:
                    return f"{name} {why}"
        if self.reasoning_tokens > self.output_tokens:
            return "reasoning_tokens exceed output_tokens"
        if self.cache_write_1h_tokens > self.cache_write_tokens:
            return "cache_write_1h_tokens exceed cache_write_tokens"
        return None


def count_problem(value: object, limit: int | None = MAX_CALL_TOKENS) -> str | None:
    """Why ``value`` is not a token count of one call (at most ``limit``), or None.

    >>> count_problem(12), count_problem(-1), count_problem("12"), count_problem(2e7)
    (None, 'is negative (-1)', "is not a number ('12')", 'is absurd (20000000.0 > 10000000)')
    """
    if type(value) is int and value >= 0 and (limit is None or value <= limit):
        return None  # most counts (a few a model call of every build): no test below fails
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"is not a number ({value!r:.40})"
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return f"is not a whole number ({value!r})"
    if value < 0:
        return f"is negative ({value})"
    if limit is not None and value > limit:
        return f"is absurd ({value} > {limit})"
    return None


#: :class:`Record` fields but ``text`` and ``extra``, in order: how stores of records
#: (the index, the archive) select them, for :func:`record_from_columns`
RECORD_COLUMNS = (
    "agent",
    "store",
    "source_path",
    "locator",
    "session_id",
    "role",
    "kind",
    "timestamp",
    "model",
    "cwd",
    "project",
    "branch",
    "worktree",
    "host",
    "offset",
)


def record_from_columns(values: Any, text: str) -> Record:
    """A record from ``values`` in :data:`RECORD_COLUMNS` order and its text."""
    return Record(text=text, **dict(zip(RECORD_COLUMNS, values, strict=False)))


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


_fromisoformat = datetime.fromisoformat


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
    if type(value) is str and value[-1:] == "Z" and value.count("Z") == 1:
        # most agents' times ("2026-01-02T03:04:05.678Z"): ``fromisoformat`` reads a
        # final ``Z`` as UTC itself since Python 3.11 (the general path below costs
        # ~2.4x as much, once per line of every build); anything it refuses goes on below
        try:
            return _fromisoformat(value).timestamp()
        except ValueError:
            pass
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
