"""Kiro CLI stores, and those of the Amazon Q Developer CLI it was renamed from.

The open era: aws/amazon-q-developer-cli @ 15cc8f3c ``crates/chat-cli/src/util/paths.rs``
(``dirs::data_local_dir()/amazon-q/data.sqlite3``), ``database/mod.rs`` and
``sqlite_migrations/007_conversations_table.sql`` (``conversations(key = cwd, value =
JSON)``), ``cli/chat/conversation.rs`` and ``message.rs`` (the JSON). Kiro CLI is closed
source: ``<data dir>/kiro-cli/data.sqlite3`` (``conversations`` in 1.x,
``conversations_v2`` in 2.x) and ``~/.kiro/sessions/cli/<id>.jsonl`` + ``<id>.json``
are known from public readers (kenn-io/agentsview ``internal/parser/kiro.go``,
``kiro_sqlite.go``; mxmehl/kiro-cli-history ``kiro_cli_history/main.py``), see
``docs/agents.md``.
"""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, Coverage, RootSpec, StoreRow

_WSL = "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*"


def _data_loc(name: str) -> dict[str, str]:
    return {
        "linux": f"${{XDG_DATA_HOME:-~/.local/share}}/{name}",
        "macos": f"~/Library/Application Support/{name}",
        "windows": f"%LOCALAPPDATA%\\{name}",
        "wsl": f"{_WSL}/AppData/Local/{name}",
    }


_HOME_LOC = {
    "linux": "~/.kiro",
    "macos": "~/.kiro",
    "windows": "%USERPROFILE%\\.kiro",
    "wsl": f"{_WSL}/.kiro",
}
_DB_DESC = (
    "{era}: the conversation JSON per row ({table}): history of user (Prompt, ToolUseResults, "
    "CancelledToolUses) and assistant (Response, ToolUse) messages with request metadata. "
    "Only the conversation tables are read (the file also holds auth_kv credentials)."
)

ROWS = (
    StoreRow(
        agent="kiro-cli",
        store="kiro-cli.db",
        holds="transcripts",
        format="sqlite",
        root="kiro_cli_data",
        patterns=("data.sqlite3",),
        parser="kiro-cli.sqlite.v1",
        env=("XDG_DATA_HOME",),
        locations=_data_loc("kiro-cli"),
        description=_DB_DESC.format(
            era="Kiro CLI",
            table="1.x conversations(key = cwd, one per folder); 2.x conversations_v2(key, "
            "conversation_id, value, created_at, updated_at)",
        ),
        upstream="closed source; shape from aws/amazon-q-developer-cli crates/chat-cli/src/"
        "cli/chat/conversation.rs and public readers (agentsview internal/parser/kiro_sqlite.go)",
    ),
    StoreRow(
        agent="kiro-cli",
        store="kiro-cli.amazon_q_db",
        holds="transcripts",
        format="sqlite",
        root="amazon_q_data",
        patterns=("data.sqlite3",),
        parser="kiro-cli.sqlite.v1",
        env=("XDG_DATA_HOME",),
        locations=_data_loc("amazon-q"),
        description=_DB_DESC.format(
            era="Amazon Q Developer CLI (2025-05 to the rename)",
            table="conversations(key = cwd, value): the last conversation of each folder",
        ),
        upstream="aws/amazon-q-developer-cli crates/chat-cli/src/database/mod.rs",
    ),
    StoreRow(
        agent="kiro-cli",
        store="kiro-cli.sessions",
        holds="transcripts",
        format="jsonl",
        root="kiro_home",
        patterns=("sessions/cli/*.jsonl",),
        parser="kiro-cli.session_jsonl.v1",
        locations=_HOME_LOC,
        description="Kiro CLI 2.x: {version, kind: Prompt|AssistantMessage|ToolResults|..., data} "
        "per line; <id>.json beside it: session_id, cwd, title, per-turn token and credit "
        "metering. Replies carry their prompt's time (only prompts are stamped).",
        upstream="closed source; public readers: agentsview internal/parser/kiro.go, "
        "mxmehl/kiro-cli-history",
    ),
    StoreRow(
        agent="kiro-cli",
        store="kiro-cli.agent_sessions",
        holds="transcripts",
        format="jsonl",
        root="kiro_home",
        patterns=("sessions/*/sess_*/messages.jsonl",),
        parser=None,
        coverage=Coverage.LISTED,
        locations=_HOME_LOC,
        description="Kiro CLI 3 (the v3 agent engine): session.json + messages.jsonl per "
        "session folder; listed, not read.",
        note="Kiro CLI's v3 engine keeps these sessions in a format known only from one "
        "third-party reader ({timestamp, payload: {type...}}); agentdex lists them but does "
        "not read them yet.",
    ),
)

AGENT = Agent(
    id="kiro-cli",
    name="Kiro CLI",
    rows=ROWS,
    parsers={
        "kiro-cli.sqlite.v1": "agentdex.parsers.kiro_cli",
        "kiro-cli.session_jsonl.v1": "agentdex.parsers.kiro_cli",
    },
    roots={
        "kiro_cli_data": RootSpec(
            paths=("{xdg_data}/kiro-cli", "{app_support}/kiro-cli", "{localappdata}/kiro-cli")
        ),
        "amazon_q_data": RootSpec(
            paths=("{xdg_data}/amazon-q", "{app_support}/amazon-q", "{localappdata}/amazon-q")
        ),
        "kiro_home": RootSpec(paths=("~/.kiro",)),
    },
    resume=ResumeRow(
        agent="kiro-cli",
        argv=("kiro-cli", "chat", "--resume-id", "{session_id}"),
        stores=("kiro-cli.db", "kiro-cli.sessions"),
        note="Amazon Q Developer CLI conversations are not resumable by id: `q chat --resume` "
        "reopens only the last conversation of the folder it runs in.",
        source="kiro.dev docs, CLI chat session management: `kiro-cli chat --resume-id "
        "<SESSION_ID>` (the exit hint prints it); kirodotdev/Kiro issue 9066: a real id "
        "resumes regardless of cwd. Amazon Q: `q chat --resume` (crates/chat-cli/src/cli/"
        "chat/mod.rs, 'Resumes the previous conversation from this directory').",
    ),
)
