"""Claude Code stores (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""

from agentdex.catalogue.claude_extras import ROWS as EXTRA_ROWS
from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, Coverage, StoreRow

_LOC = {"linux": "~/.claude", "macos": "~/.claude", "windows": "%USERPROFILE%\\.claude"}
_ENV = ("CLAUDE_CONFIG_DIR",)

ROWS = (
    StoreRow(
        agent="claude-code",
        store="claude-code.projects",
        holds="transcripts",
        format="jsonl",
        root="claude",
        patterns=("projects/*/*.jsonl",),
        parser="claude-code.transcript_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description="One JSONL transcript per session; slug = cwd with non-alphanumerics as '-'.",
    ),
    StoreRow(
        agent="claude-code",
        store="claude-code.subagents",
        holds="subagent transcripts",
        format="jsonl",
        root="claude",
        patterns=("projects/*/*/subagents/agent-*.jsonl",),
        parser="claude-code.transcript_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description="Subagent (Task tool) transcripts, v2.x layout.",
    ),
    StoreRow(
        agent="claude-code",
        store="claude-code.history",
        holds="prompt log",
        format="jsonl",
        root="claude",
        patterns=("history.jsonl",),
        parser="claude-code.history_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description="Every prompt typed, with [Pasted text #N] expanded from pastedContents.",
    ),
    StoreRow(
        agent="claude-code",
        store="claude-code.credentials",
        holds="credentials",
        format="json",
        root="claude",
        patterns=(".credentials.json",),
        parser=None,
        coverage=Coverage.PRIVATE,
        env=_ENV,
        locations=_LOC,
        description="OAuth credentials: never listed, never opened.",
    ),
)

AGENT = Agent(
    id="claude-code",
    rows=(*ROWS, *EXTRA_ROWS),
    parsers={
        "claude-code.transcript_jsonl.v1": "agentdex.parsers.claude_code",
        "claude-code.history_jsonl.v1": "agentdex.parsers.claude_code",
        "claude-code.store_sqlite.v1": "agentdex.parsers.claude_store",
    },
    resume=resume_row("claude-code"),
)
