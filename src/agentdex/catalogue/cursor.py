"""Cursor IDE stores (the editor's ``User`` dir, per OS and across the WSL bridge)."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, StoreRow

_LOC = {
    "linux": "${XDG_CONFIG_HOME:-~/.config}/Cursor/User",
    "macos": "~/Library/Application Support/Cursor/User",
    "windows": "%APPDATA%/Cursor/User",
    "remote": "~/.cursor-server/data/User",
    "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/AppData/Roaming/Cursor/User",
}
_ENV = ("XDG_CONFIG_HOME", "AGENTDEX_WSL_USERS_ROOT")

ROWS = (
    StoreRow(
        agent="cursor",
        store="cursor.global_state",
        holds="transcripts",
        format="sqlite",
        root="cursor_user",
        patterns=("globalStorage/state.vscdb",),
        parser="cursor.state_vscdb.v1",
        env=_ENV,
        locations=_LOC,
        description=(
            "cursorDiskKV composerData:* + bubbleId:* (ordered by the header list; "
            "inline conversation[] in older builds); cursorAuth/* never read."
        ),
        times="partly file-mtime",
    ),
    StoreRow(
        agent="cursor",
        store="cursor.workspace_state",
        holds="transcripts",
        format="sqlite",
        root="cursor_user",
        patterns=("workspaceStorage/*/state.vscdb",),
        parser="cursor.state_vscdb.v1",
        env=_ENV,
        locations=_LOC,
        description=(
            "Per-workspace ItemTable: legacy aichat chatdata, aiService.prompts, inline "
            "composers; project from the sibling workspace.json."
        ),
        times="partly file-mtime",
    ),
)

AGENT = Agent(
    id="cursor",
    rows=ROWS,
    parsers={
        "cursor.state_vscdb.v1": "agentdex.parsers.cursor",
    },
    resume=resume_row("cursor"),
)
