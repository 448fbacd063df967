"""Crush stores: one ``crush.db`` per project, listed in Crush's ``projects.json``."""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

ROWS = (
    StoreRow(
        agent="crush",
        store="crush.db",
        holds="transcripts",
        format="sqlite",
        root="crush_projects",
        patterns=("crush.db",),
        parser="crush.sqlite.v1",
        env=("CRUSH_GLOBAL_DATA", "XDG_DATA_HOME", "AGENTDEX_PROJECT_ROOTS"),
        locations={
            "linux": "<project>/.crush (listed in ${XDG_DATA_HOME:-~/.local/share}/crush/"
            "projects.json)",
            "macos": "<project>/.crush (listed in ~/.local/share/crush/projects.json)",
            "windows": "<project>\\.crush (listed in %LOCALAPPDATA%\\crush\\projects.json)",
            "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/AppData/Local/crush/projects.json",
        },
        description=(
            "Per project, WAL (newest rows often only in -wal; read together, read-only): "
            "sessions + messages (parts JSON)."
        ),
        upstream="charmbracelet/crush internal/db/migrations/, internal/message/",
    ),
)

AGENT = Agent(
    id="crush",
    name="Crush",
    rows=ROWS,
    parsers={"crush.sqlite.v1": "agentdex.parsers.crush"},
    roots={
        "crush_projects": RootSpec(
            resolver="agentdex.discovery.listed_roots:crush_projects",
            env=("CRUSH_GLOBAL_DATA",),
        )
    },
    resume=ResumeRow(
        agent="crush",
        argv=("crush", "--session", "{session_id}"),
        stores=("crush.db",),
        note="Crush keeps one database per project, so the command runs in the project directory.",
        source="charmbracelet/crush internal/cmd/root.go: `--session, -s` 'Continue a "
        "previous session by ID'.",
    ),
)
