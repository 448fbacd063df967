"""Gemini CLI stores (``$GEMINI_CLI_HOME/.gemini`` or ``~/.gemini``)."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, StoreRow

_LOC = {"linux": "~/.gemini", "macos": "~/.gemini", "windows": "%USERPROFILE%\\.gemini"}
_ENV = ("GEMINI_CLI_HOME",)

ROWS = (
    StoreRow(
        agent="gemini-cli",
        store="gemini-cli.chats",
        holds="transcripts",
        format="json/jsonl",
        root="gemini",
        patterns=(
            "tmp/*/chats/session-*.json",
            "tmp/*/chats/session-*.jsonl",
            "tmp/*/chats/*/*.jsonl",  # subagent sessions, under their parent's session id
        ),
        parser="gemini-cli.chat.v1",
        env=_ENV,
        locations=_LOC,
        description="Saved chats and subagent chats; .jsonl replays $set/$rewindTo, upserts by id.",
    ),
    StoreRow(
        agent="gemini-cli",
        store="gemini-cli.logs",
        holds="prompt log",
        format="json",
        root="gemini",
        patterns=("tmp/*/logs.json",),
        parser="gemini-cli.logs_json.v1",
        env=_ENV,
        locations=_LOC,
        description="Array of {sessionId, messageId, timestamp, type, message} prompts.",
    ),
)

AGENT = Agent(
    id="gemini-cli",
    rows=ROWS,
    parsers={
        "gemini-cli.chat.v1": "agentdex.parsers.gemini_cli",
        "gemini-cli.logs_json.v1": "agentdex.parsers.gemini_cli",
    },
    resume=resume_row("gemini-cli"),
)
