"""Codex stores that only name conversations (titles, no messages)."""

from agentdex.catalogue.schema import StoreRow

_LOC = {"linux": "~/.codex", "macos": "~/.codex", "windows": "%USERPROFILE%\\.codex"}
_ENV = ("CODEX_HOME",)

ROWS = (
    StoreRow(
        agent="codex",
        store="codex.session_index",
        holds="titles",
        format="jsonl",
        root="codex",
        patterns=("session_index.jsonl",),
        parser="codex.session_index_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description="{id, thread_name, updated_at}: thread names become conversation titles.",
    ),
    StoreRow(
        agent="codex",
        store="codex.state_db",
        holds="titles",
        format="sqlite",
        root="codex",
        patterns=("state_*.sqlite", "sqlite/state_*.sqlite"),
        parser="codex.state_sqlite.v1",
        env=_ENV,
        locations=_LOC,
        description="threads(id, title, ...): only id and title are read.",
    ),
)
