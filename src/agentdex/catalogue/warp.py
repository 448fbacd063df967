"""Warp stores (``warp.sqlite``: the terminal's database, which also keeps its agent's
conversations).

Warp is closed source. The file's place on each OS is in Warp's docs (docs.warp.dev,
"Session Restoration"); the group container macOS builds use now and the tables holding
agent conversations are known from public readers (kenn-io/agentsview
``internal/parser/warp.go``, ``warp_paths.go``; marcus/sidecar ``internal/adapter/warp``;
coder/codeburn ``docs/providers/warp.md``). See ``docs/agents.md``.
"""

from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

_GROUP = "~/Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support"

ROWS = (
    StoreRow(
        agent="warp",
        store="warp.db",
        holds="transcripts",
        format="sqlite",
        root="warp",
        patterns=("warp.sqlite",),
        parser="warp.sqlite.v1",
        env=("XDG_STATE_HOME",),
        locations={
            "linux": "${XDG_STATE_HOME:-~/.local/state}/warp-terminal",
            "macos": f"{_GROUP}/dev.warp.Warp-Stable (older: ~/Library/Application Support/"
            "dev.warp.Warp-Stable)",
            "windows": "%LOCALAPPDATA%\\warp\\Warp\\data",
            "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/AppData/Local/warp/Warp/data",
        },
        description=(
            "ai_queries (one row per exchange: the typed query with its folder and git head, "
            "or tool results) and blocks naming a conversation (commands the agent ran). "
            "Warp keeps no agent answers on disk; only these tables are read (the file also "
            "holds the terminal's history)."
        ),
        upstream="closed source; docs.warp.dev Session Restoration (paths); public readers: "
        "agentsview internal/parser/warp.go, sidecar internal/adapter/warp",
        note="Warp keeps the prompts, the commands its agent ran and their output here, "
        "but not the agent's answers: its conversations have no replies.",
    ),
)

AGENT = Agent(
    id="warp",
    name="Warp",
    rows=ROWS,
    parsers={"warp.sqlite.v1": "agentdex.parsers.warp"},
    roots={
        "warp": RootSpec(
            paths=(
                "{xdg_state}/warp-terminal",
                f"{_GROUP}/dev.warp.Warp-Stable",
                f"{_GROUP}/dev.warp.Warp-Preview",
                "{app_support}/dev.warp.Warp-Stable",
                "{localappdata}/warp/Warp/data",
            )
        )
    },
)
