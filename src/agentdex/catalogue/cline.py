"""Cline stores: VS Code extension global storage (every edition, WSL) and ``~/.cline``."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, StoreRow

_EXT = "saoudrizwan.claude-dev"

ROWS = (
    StoreRow(
        agent="cline",
        store="cline.tasks",
        holds="transcripts",
        format="json",
        root="cline_tasks",
        patterns=("tasks/*/api_conversation_history.json",),
        parser="cline.api_history_json.v1",
        env=("VSCODE_APPDATA", "AGENTDEX_WSL_USERS_ROOT", "XDG_CONFIG_HOME"),
        locations={
            "linux": "${XDG_CONFIG_HOME:-~/.config}/<edition>/User/globalStorage/" + _EXT,
            "macos": "~/Library/Application Support/<edition>/User/globalStorage/" + _EXT,
            "windows": "%APPDATA%/<edition>/User/globalStorage/" + _EXT,
            "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/AppData/Roaming/<edition>/User/"
            "globalStorage/" + _EXT,
            "cli": "~/.cline/data",
        },
        exclude=("*.tmp.*",),
        description="Anthropic-style message list per task; cwd from state/taskHistory.json.",
    ),
)

AGENT = Agent(
    id="cline",
    rows=ROWS,
    parsers={
        "cline.api_history_json.v1": "agentdex.parsers.cline",
    },
    resume=resume_row("cline"),
)
