"""Goose stores: ``<data dir>/sessions/sessions.db`` and the legacy ``sessions/*.jsonl``."""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

_LOC = {
    "linux": "${XDG_DATA_HOME:-~/.local/share}/goose",
    "macos": "${XDG_DATA_HOME:-~/.local/share}/goose",
    "windows": "%APPDATA%\\Block\\goose\\data",
    "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/AppData/Roaming/Block/goose/data",
    "override": "$GOOSE_PATH_ROOT/data",
}
_ENV = ("GOOSE_PATH_ROOT", "XDG_DATA_HOME")

ROWS = (
    StoreRow(
        agent="goose",
        store="goose.sessions_db",
        holds="transcripts",
        format="sqlite",
        root="goose_data",
        patterns=("sessions/sessions.db",),
        parser="goose.sqlite.v1",
        env=_ENV,
        locations=_LOC,
        description=(
            "1.10+, WAL: sessions (working_dir, name, token totals) and messages "
            "(content_json MessageContent list, userVisible metadata)."
        ),
        upstream="block/goose crates/goose/src/session/session_manager.rs",
    ),
    StoreRow(
        agent="goose",
        store="goose.sessions_jsonl",
        holds="transcripts",
        format="jsonl",
        root="goose_data",
        patterns=("sessions/*.jsonl",),
        parser="goose.session_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description=(
            "Before 1.10: session metadata line, then one Message per line; a file "
            "sessions.db has imported is read there, not twice."
        ),
    ),
)

AGENT = Agent(
    id="goose",
    name="Goose",
    rows=ROWS,
    parsers={
        "goose.sqlite.v1": "agentdex.parsers.goose",
        "goose.session_jsonl.v1": "agentdex.parsers.goose",
    },
    roots={
        "goose_data": RootSpec(
            paths=(
                "{xdg_data}/goose",
                "~/.local/share/goose",
                "{appdata}/Block/goose/data",
                "{app_support}/Block/goose",
            ),
            env=("GOOSE_PATH_ROOT/data",),
        )
    },
    resume=ResumeRow(
        agent="goose",
        argv=("goose", "session", "--resume", "--session-id", "{session_id}"),
        stores=("goose.sessions_db", "goose.sessions_jsonl"),
        source="goose CLI commands guide: `goose session -r/--resume` with `--session-id` "
        "(ids like 20251108_1); legacy sessions are imported into sessions.db under the "
        "same id.",
    ),
)
