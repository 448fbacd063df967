"""Zed's agent panel threads (``<Zed data dir>/threads/threads.db``).

zed-industries/zed @ 0642ec7e: ``crates/agent/src/db.rs`` (the table, zstd JSON),
``crates/paths`` (the data dir: ``$FLATPAK_XDG_DATA_HOME/zed`` in a Flatpak, else the
XDG data dir ``zed`` on Linux, ``~/Library/Application Support/Zed`` on macOS,
``%LOCALAPPDATA%\\Zed`` on Windows). ``ZED_STATELESS`` keeps threads in memory only.
"""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

ROWS = (
    StoreRow(
        agent="zed",
        store="zed.threads",
        holds="transcripts",
        format="sqlite (zstd JSON)",
        root="zed_data",
        patterns=("threads/threads.db",),
        parser="zed.threads_sqlite.v1",
        env=("FLATPAK_XDG_DATA_HOME", "XDG_DATA_HOME"),
        locations={
            "linux": "${XDG_DATA_HOME:-~/.local/share}/zed, "
            "Flatpak ~/.var/app/dev.zed.Zed/data/zed",
            "macos": "~/Library/Application Support/Zed",
            "windows": "%LOCALAPPDATA%\\Zed",
            "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/AppData/Local/Zed",
        },
        description="threads(id, summary, updated_at, data_type, data, parent_id, folder_paths): "
        "a JSON thread per row, zstd-compressed since agent 2; no time per message: every "
        "record has its thread's updated_at.",
        upstream="zed-industries/zed crates/agent/src/db.rs",
    ),
)

AGENT = Agent(
    id="zed",
    name="Zed",
    rows=ROWS,
    parsers={"zed.threads_sqlite.v1": "agentdex.parsers.zed"},
    roots={
        "zed_data": RootSpec(
            paths=(
                "{xdg_data}/zed",
                "~/.var/app/dev.zed.Zed/data/zed",
                "{app_support}/Zed",
                "{localappdata}/Zed",
            ),
            env=("FLATPAK_XDG_DATA_HOME/zed",),
        )
    },
    resume=ResumeRow(
        agent="zed",
        note="Zed reopens a thread from the agent panel's history; it has no command line for it.",
    ),
)
