"""Codex CLI stores (``$CODEX_HOME`` or ``~/.codex``)."""

from agentdex.catalogue.codex_extras import ROWS as EXTRA_ROWS
from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, Coverage, StoreRow

_LOC = {"linux": "~/.codex", "macos": "~/.codex", "windows": "%USERPROFILE%\\.codex"}
_ENV = ("CODEX_HOME",)

ROWS = (
    StoreRow(
        agent="codex",
        store="codex.sessions",
        holds="transcripts",
        format="jsonl",
        root="codex",
        patterns=("sessions/**/rollout-*.jsonl",),
        parser="codex.rollout_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description="Rollouts: {timestamp, type, payload} lines, one file per session.",
    ),
    StoreRow(
        agent="codex",
        store="codex.archived_sessions",
        holds="transcripts",
        format="jsonl",
        root="codex",
        patterns=("archived_sessions/**/rollout-*.jsonl",),
        parser="codex.rollout_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description="Archived rollouts, same shape as sessions.",
    ),
    StoreRow(
        agent="codex",
        store="codex.legacy_sessions",
        holds="transcripts",
        format="json",
        root="codex",
        patterns=("sessions/rollout-*.json",),
        parser="codex.rollout_json.v1",
        env=_ENV,
        locations=_LOC,
        description="Legacy single-document rollouts {session, items}.",
    ),
    StoreRow(
        agent="codex",
        store="codex.history",
        holds="prompt log",
        format="jsonl",
        root="codex",
        patterns=("history.jsonl",),
        parser="codex.history_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description="{session_id, ts, text} per prompt.",
    ),
    StoreRow(
        agent="codex",
        store="codex.auth",
        holds="credentials",
        format="json",
        root="codex",
        patterns=("auth.json",),
        parser=None,
        coverage=Coverage.PRIVATE,
        env=_ENV,
        locations=_LOC,
        description="API keys and tokens: never listed, never opened.",
    ),
)

AGENT = Agent(
    id="codex",
    rows=(*ROWS, *EXTRA_ROWS),
    parsers={
        "codex.rollout_jsonl.v1": "agentdex.parsers.codex",
        "codex.rollout_json.v1": "agentdex.parsers.codex",
        "codex.history_jsonl.v1": "agentdex.parsers.codex",
        "codex.session_index_jsonl.v1": "agentdex.parsers.codex_titles",
        "codex.state_sqlite.v1": "agentdex.parsers.codex_titles",
    },
    resume=resume_row("codex"),
)
