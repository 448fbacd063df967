"""VS Code (GitHub Copilot Chat) stores, per edition and across the WSL bridge."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, StoreRow

_LOC = {
    "linux": "${XDG_CONFIG_HOME:-~/.config}/<edition>/User",
    "macos": "~/Library/Application Support/<edition>/User",
    "windows": "%APPDATA%/<edition>/User",
    "remote": "~/.vscode-server/data/User",
    "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/AppData/Roaming/<edition>/User",
}
_ENV = ("VSCODE_APPDATA", "AGENTDEX_WSL_USERS_ROOT", "XDG_CONFIG_HOME")

ROWS = (
    StoreRow(
        agent="vscode-copilot",
        store="vscode-copilot.chat_sessions",
        holds="transcripts",
        format="json/jsonl",
        root="vscode_user",
        patterns=(
            "workspaceStorage/*/chatSessions/*.json",
            "workspaceStorage/*/chatSessions/*.jsonl",
        ),
        parser="vscode-copilot.chat_session.v1",
        env=_ENV,
        locations=_LOC,
        description="Per-workspace chat sessions (v3 .json, or .jsonl mutation logs).",
    ),
    StoreRow(
        agent="vscode-copilot",
        store="vscode-copilot.empty_window",
        holds="transcripts",
        format="json/jsonl",
        root="vscode_user",
        patterns=(
            "globalStorage/emptyWindowChatSessions/*.json",
            "globalStorage/emptyWindowChatSessions/*.jsonl",
        ),
        parser="vscode-copilot.chat_session.v1",
        env=_ENV,
        locations=_LOC,
        description="Chats opened with no folder.",
    ),
    StoreRow(
        agent="vscode-copilot",
        store="vscode-copilot.inline_history",
        holds="prompt log",
        format="sqlite",
        root="vscode_user",
        patterns=("globalStorage/state.vscdb",),
        parser="vscode-copilot.inline_history.v1",
        env=_ENV,
        locations=_LOC,
        description="ItemTable key inline-chat-history only; secret:// keys never read.",
        times="file-mtime",
    ),
)

AGENT = Agent(
    id="vscode-copilot",
    rows=ROWS,
    parsers={
        "vscode-copilot.chat_session.v1": "agentdex.parsers.vscode_copilot",
        "vscode-copilot.inline_history.v1": "agentdex.parsers.vscode_copilot",
    },
    resume=resume_row("vscode-copilot"),
)
