"""Cline stores: VS Code extension global storage (every edition, WSL) and ``~/.cline``."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

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
    StoreRow(
        agent="cline",
        store="cline.sessions",
        holds="transcripts",
        format="json",
        root="cline_sessions",
        patterns=("*/*.messages.json",),
        parser="cline.sessions_json.v1",
        env=("CLINE_SESSION_DATA_DIR", "CLINE_DATA_DIR", "CLINE_DIR"),
        locations={
            "linux": "~/.cline/data/sessions",
            "macos": "~/.cline/data/sessions",
            "windows": "%USERPROFILE%\\.cline\\data\\sessions",
            "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/.cline/data/sessions",
        },
        exclude=("*.tmp.*",),
        description=(
            "Cline 4.x / CLI / desktop (the @cline/core SDK, 2026): one folder per session, "
            "<id>.messages.json (Anthropic blocks, per-request metrics) beside the <id>.json "
            "manifest (cwd, title); subagents' files in their session's folder."
        ),
        upstream="cline/cline sdk/packages/core/docs/messages-contract-v1.md",
    ),
)

AGENT = Agent(
    id="cline",
    rows=ROWS,
    parsers={
        "cline.api_history_json.v1": "agentdex.parsers.cline",
        "cline.sessions_json.v1": "agentdex.parsers.cline.sessions",
    },
    roots={
        "cline_sessions": RootSpec(
            paths=("~/.cline/data/sessions",),
            env=("CLINE_SESSION_DATA_DIR", "CLINE_DATA_DIR/sessions", "CLINE_DIR/data/sessions"),
        )
    },
    resume=resume_row("cline"),
)
