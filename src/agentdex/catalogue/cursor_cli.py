"""Cursor CLI (``cursor-agent``) stores."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, Coverage, StoreRow

ROWS = (
    StoreRow(
        agent="cursor-cli",
        store="cursor-cli.transcripts",
        holds="transcripts",
        format="jsonl",
        root="cursor_home",
        patterns=(
            "projects/*/agent-transcripts/*.jsonl",
            "projects/*/agent-transcripts/*/*.jsonl",
            "projects/*/agent-transcripts/*/subagents/*.jsonl",
        ),
        parser="cursor-cli.transcript_jsonl.v1",
        locations={"linux": "~/.cursor", "macos": "~/.cursor", "windows": "%USERPROFILE%\\.cursor"},
        description="{role, message.content[]} lines, no timestamps (file mtime used).",
        times="file-mtime",
    ),
    StoreRow(
        agent="cursor-cli",
        store="cursor-cli.prompt_history",
        holds="prompt log",
        format="json",
        root="cursor_config",
        patterns=("prompt_history.json",),
        parser="cursor-cli.prompt_history_json.v1",
        env=("XDG_CONFIG_HOME",),
        locations={"linux": "${XDG_CONFIG_HOME:-~/.config}/cursor", "macos": "~/.config/cursor"},
        description="JSON array of prompt strings, oldest first.",
        times="file-mtime",
    ),
    StoreRow(
        agent="cursor-cli",
        store="cursor-cli.chats",
        holds="transcripts",
        format="sqlite+protobuf",
        root="cursor_config",
        patterns=("chats/*/*/store.db",),
        parser=None,
        coverage=Coverage.LISTED,
        env=("XDG_CONFIG_HOME",),
        locations={"linux": "${XDG_CONFIG_HOME:-~/.config}/cursor", "macos": "~/.config/cursor"},
        description="Per-session meta/blobs DB of undocumented protobuf: listed, not parsed "
        "(the agent-transcripts JSONL carries the same chats).",
    ),
)

AGENT = Agent(
    id="cursor-cli",
    rows=ROWS,
    parsers={
        "cursor-cli.transcript_jsonl.v1": "agentdex.parsers.cursor_cli",
        "cursor-cli.prompt_history_json.v1": "agentdex.parsers.cursor_cli",
    },
    resume=resume_row("cursor-cli"),
)
