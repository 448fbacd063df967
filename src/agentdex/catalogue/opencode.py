"""OpenCode stores (``${XDG_DATA_HOME:-~/.local/share}/opencode``)."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, StoreRow

_LOC = {
    "linux": "${XDG_DATA_HOME:-~/.local/share}/opencode",
    "macos": "~/.local/share/opencode",
    "windows": "%USERPROFILE%\\.local\\share\\opencode",
}

ROWS = (
    StoreRow(
        agent="opencode",
        store="opencode.db",
        holds="transcripts",
        format="sqlite",
        root="opencode_db",
        patterns=("opencode.db", "opencode-*.db"),
        parser="opencode.sqlite.v1",
        env=("OPENCODE_DB", "XDG_DATA_HOME"),
        locations=_LOC,
        description=(
            ">= 1.2, WAL: session/message/part (1.x) or session_v2/session_message (2.x); "
            "account/credential never read."
        ),
    ),
    StoreRow(
        agent="opencode",
        store="opencode.storage",
        holds="transcripts",
        format="json",
        root="opencode_data",
        patterns=("storage/message/*/*.json",),
        parser="opencode.storage_json.v1",
        env=("XDG_DATA_HOME",),
        locations=_LOC,
        description="Pre-1.2 file tree: one message per file, parts under storage/part/<msgID>/.",
    ),
)

AGENT = Agent(
    id="opencode",
    rows=ROWS,
    parsers={
        "opencode.sqlite.v1": "agentdex.parsers.opencode",
        "opencode.storage_json.v1": "agentdex.parsers.opencode",
    },
    resume=resume_row("opencode"),
)
