"""Kilo Code stores, both eras: the extension's Cline-shaped task folders and ``kilo.db``."""

from agentdex.catalogue.cline import task_row
from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

ROWS = (
    StoreRow(
        agent="kilo-code",
        store="kilo-code.db",
        holds="transcripts",
        format="sqlite",
        root="kilo_db",
        patterns=("kilo.db", "kilo-*.db"),
        parser="kilo-code.sqlite.v1",
        env=("KILO_DB", "XDG_DATA_HOME"),
        locations={
            "linux": "${XDG_DATA_HOME:-~/.local/share}/kilo",
            "macos": "~/.local/share/kilo",
            "windows": "%USERPROFILE%\\.local\\share\\kilo",
            "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/.local/share/kilo",
        },
        description=(
            "2026+ (CLI and extension on OpenCode), WAL: OpenCode's session/message/part "
            "schema; account tables never read."
        ),
        upstream="Kilo-Org/kilocode packages/opencode/src/storage/",
    ),
    task_row(
        "kilo-code",
        "kilo_tasks",
        "kilocode.kilo-code",
        "Extension before the OpenCode rebuild (a Roo Code fork): Cline's task shape; "
        "cwd from the environment details.",
        custom="the kilo-code.customStoragePath setting (VS Code user settings.json)",
    ),
)

AGENT = Agent(
    id="kilo-code",
    name="Kilo Code",
    rows=ROWS,
    parsers={
        "kilo-code.sqlite.v1": "agentdex.parsers.kilo_code",
        "kilo-code.api_history_json.v1": "agentdex.parsers.kilo_code",
    },
    roots={
        "kilo_db": RootSpec(
            resolver="agentdex.discovery.extension_roots:kilo_db", env=("KILO_DB", "XDG_DATA_HOME")
        ),
        "kilo_tasks": RootSpec(
            resolver="agentdex.discovery.extension_roots:kilo_tasks", env=("VSCODE_APPDATA",)
        ),
    },
    resume=ResumeRow(
        agent="kilo-code",
        argv=("kilo", "--session", "{session_id}"),
        executables=("kilo", "kilocode"),
        stores=("kilo-code.db",),
        note="Tasks of the extension's Cline-shaped era reopen from its History view only.",
        source="Kilo-Org/kilocode packages/opencode/src/cli/cmd/tui/thread.ts: `--session, -s` "
        "'session id to continue'; the @kilocode/cli package installs `kilo` and `kilocode`.",
    ),
)
