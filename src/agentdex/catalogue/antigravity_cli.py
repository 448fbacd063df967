"""Antigravity CLI (``agy``) stores under ``~/.gemini/antigravity-cli``."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, Coverage, StoreRow

_LOC = {
    "linux": "~/.gemini/antigravity-cli",
    "macos": "~/.gemini/antigravity-cli",
    "windows": "%USERPROFILE%\\.gemini\\antigravity-cli",
}

ROWS = (
    StoreRow(
        agent="antigravity-cli",
        store="antigravity-cli.history",
        holds="prompt log",
        format="jsonl",
        root="antigravity_cli",
        patterns=("history.jsonl",),
        parser="antigravity-cli.history_jsonl.v1",
        locations=_LOC,
        description="{display, timestamp (ms), workspace, conversationId} per prompt.",
    ),
    StoreRow(
        agent="antigravity-cli",
        store="antigravity-cli.transcripts",
        holds="transcripts",
        format="jsonl",
        root="antigravity_cli",
        patterns=(
            "brain/*/.system_generated/logs/transcript_full.jsonl",
            "brain/*/.system_generated/logs/transcript.jsonl",
        ),
        parser="antigravity-cli.transcript_jsonl.v1",
        locations=_LOC,
        description="Step lines {type, source, content}; transcript.jsonl only if no _full twin.",
    ),
    StoreRow(
        agent="antigravity-cli",
        store="antigravity-cli.conversations",
        holds="transcripts",
        format="sqlite+protobuf",
        root="antigravity_cli",
        patterns=("conversations/*.db",),
        parser=None,
        coverage=Coverage.LISTED,
        locations=_LOC,
        description="One DB per conversation of undocumented protobuf steps: listed, not parsed.",
    ),
)

AGENT = Agent(
    id="antigravity-cli",
    rows=ROWS,
    parsers={
        "antigravity-cli.history_jsonl.v1": "agentdex.parsers.antigravity_cli",
        "antigravity-cli.transcript_jsonl.v1": "agentdex.parsers.antigravity_cli",
    },
    resume=resume_row("antigravity-cli"),
)
