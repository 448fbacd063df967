"""Cline stores: VS Code extension global storage (every edition, WSL) and ``~/.cline``."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, StoreRow

_EXT = "saoudrizwan.claude-dev"


def task_row(agent: str, root: str, ext: str, description: str, **locations: str) -> StoreRow:
    """The ``<agent>.tasks`` row of Cline or a fork of it: task folders in the VS Code
    extension ``ext``'s global storage, every edition and through WSL (plus ``locations``)."""
    return StoreRow(
        agent=agent,
        store=f"{agent}.tasks",
        holds="transcripts",
        format="json",
        root=root,
        patterns=("tasks/*/api_conversation_history.json",),
        parser=f"{agent}.api_history_json.v1",
        env=("VSCODE_APPDATA", "AGENTDEX_WSL_USERS_ROOT", "XDG_CONFIG_HOME"),
        locations={
            "linux": "${XDG_CONFIG_HOME:-~/.config}/<edition>/User/globalStorage/" + ext,
            "macos": "~/Library/Application Support/<edition>/User/globalStorage/" + ext,
            "windows": "%APPDATA%/<edition>/User/globalStorage/" + ext,
            "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/AppData/Roaming/<edition>/User/"
            "globalStorage/" + ext,
            **locations,
        },
        exclude=("*.tmp.*",),
        description=description,
    )


ROWS = (
    task_row(
        "cline",
        "cline_tasks",
        _EXT,
        "Anthropic-style message list per task; cwd from state/taskHistory.json.",
        cli="~/.cline/data",
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
