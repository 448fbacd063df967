"""Claude Code stores beyond the JSONL transcripts (rows kept apart from claude_code.py)."""

from agentdex.catalogue.schema import StoreRow

ROWS = (
    StoreRow(
        agent="claude-code",
        store="claude-code.store_db",
        holds="transcripts",
        format="sqlite",
        root="claude",
        patterns=("__store.db",),
        parser="claude-code.store_sqlite.v1",
        env=("CLAUDE_CONFIG_DIR",),
        locations={"linux": "~/.claude", "macos": "~/.claude", "windows": "%USERPROFILE%\\.claude"},
        description=(
            "0.2.9x-0.2.10x SQLite store: base_messages + user_messages/assistant_messages, "
            "conversation_summaries."
        ),
    ),
)
