"""Kiro IDE stores (closed source): the ``kiro.kiroagent`` global storage of the Kiro editor."""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

_DIR = "Kiro/User/globalStorage/kiro.kiroagent"
_LOC = {
    "linux": "${XDG_CONFIG_HOME:-~/.config}/" + _DIR,
    "macos": "~/Library/Application Support/" + _DIR,
    "windows": "%APPDATA%/" + _DIR,
    "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/AppData/Roaming/" + _DIR,
}
_ENV = ("XDG_CONFIG_HOME", "APPDATA")
_SOURCE = "closed source; shape from real files as the kenn-io/agentsview peer reads them"

ROWS = (
    StoreRow(
        agent="kiro-ide",
        store="kiro-ide.sessions",
        holds="transcripts",
        format="json",
        root="kiro_ide",
        patterns=("workspace-sessions/*/*.json",),
        exclude=("sessions.json",),
        parser="kiro-ide.session_json.v1",
        env=_ENV,
        locations=_LOC,
        description="Continue's Session shape per workspace (base64 path folders); " + _SOURCE,
        times="partly file-mtime",
    ),
    StoreRow(
        agent="kiro-ide",
        store="kiro-ide.index",
        holds="index",
        format="json",
        root="kiro_ide",
        patterns=("workspace-sessions/*/sessions.json",),
        parser="kiro-ide.sessions_index.v1",
        env=_ENV,
        locations=_LOC,
        description="Per-workspace session list (titles, dateCreated); no records.",
    ),
    StoreRow(
        agent="kiro-ide",
        store="kiro-ide.chats",
        holds="transcripts",
        format="json",
        root="kiro_ide",
        patterns=("*/*.chat",),
        parser="kiro-ide.chat_json.v1",
        env=_ENV,
        locations=_LOC,
        description="Older era: one execution's chat per file (human/bot/tool turns); " + _SOURCE,
        times="partly file-mtime",
    ),
)

AGENT = Agent(
    id="kiro-ide",
    name="Kiro IDE",
    rows=ROWS,
    parsers={
        "kiro-ide.session_json.v1": "agentdex.parsers.continue_",
        "kiro-ide.sessions_index.v1": "agentdex.parsers.continue_",
        "kiro-ide.chat_json.v1": "agentdex.parsers.continue_",
    },
    roots={
        "kiro_ide": RootSpec(
            paths=("{xdg_config}/" + _DIR, "{app_support}/" + _DIR, "{appdata}/" + _DIR)
        )
    },
    resume=ResumeRow(
        agent="kiro-ide",
        note="Kiro IDE reopens a session from its own chat history; it has no command line for it.",
    ),
)
