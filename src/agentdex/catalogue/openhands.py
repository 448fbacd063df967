"""OpenHands CLI stores (``${OPENHANDS_PERSISTENCE_DIR:-~/.openhands}``, every OS).

OpenHands/OpenHands-CLI @ 6b3838ce: ``openhands_cli/locations.py`` (the folders and
their variables), ``conversations/store/local.py``, ``stores/prompt_history.py``;
the event files are the software-agent-sdk's (``conversation/event_store.py``).
"""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

_CONV_ENV = ("OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR")
#: The root's variables: the second one names the persistence folder (its ``conversations``).
_CONV_ROOT_ENV = ("OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR/conversations")
_CONV = {
    "linux": "${OPENHANDS_CONVERSATIONS_DIR:-"
    "${OPENHANDS_PERSISTENCE_DIR:-~/.openhands}/conversations}",
    "macos": "as on Linux",
    "windows": "%USERPROFILE%\\.openhands\\conversations (same variables)",
    "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/.openhands/conversations",
}
_HOME = {
    "linux": "${OPENHANDS_PERSISTENCE_DIR:-~/.openhands}",
    "macos": "as on Linux",
    "windows": "%USERPROFILE%\\.openhands",
    "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/.openhands",
}
_UP = "OpenHands/OpenHands-CLI openhands_cli/; OpenHands/software-agent-sdk openhands-sdk/"

ROWS = (
    StoreRow(
        agent="openhands",
        store="openhands.events",
        holds="transcripts",
        format="json (one file per event)",
        root="openhands_conversations",
        patterns=("*/events/event-*.json",),
        parser="openhands.event_json.v1",
        env=_CONV_ENV,
        locations=_CONV,
        description="The SDK's events, one JSON per file: MessageEvent, ActionEvent, "
        "ObservationEvent...; local times without a zone; cwd from base_state.json.",
        upstream=_UP + "openhands/sdk/event/",
    ),
    StoreRow(
        agent="openhands",
        store="openhands.base_state",
        holds="usage",
        format="json",
        root="openhands_conversations",
        patterns=("*/base_state.json",),
        parser="openhands.base_state_json.v1",
        env=_CONV_ENV,
        locations=_CONV,
        description="Conversation state: only workspace.working_dir and the per-response token "
        "usages are read.",
        upstream=_UP + "openhands/sdk/conversation/state.py",
    ),
    StoreRow(
        agent="openhands",
        store="openhands.prompt_history",
        holds="prompt log",
        format="json",
        root="openhands",
        patterns=("projects/*/prompt_history.json",),
        parser="openhands.prompt_history_json.v1",
        env=("OPENHANDS_PERSISTENCE_DIR",),
        locations=_HOME,
        description="[{text, timestamp}] per project (sha256 of its path), the last 100.",
        upstream="OpenHands/OpenHands-CLI openhands_cli/stores/prompt_history.py",
    ),
)

AGENT = Agent(
    id="openhands",
    name="OpenHands CLI",
    rows=ROWS,
    parsers={row.parser: "agentdex.parsers.openhands" for row in ROWS if row.parser},
    roots={
        "openhands": RootSpec(paths=("~/.openhands",), env=("OPENHANDS_PERSISTENCE_DIR",)),
        "openhands_conversations": RootSpec(
            paths=("~/.openhands/conversations",), env=_CONV_ROOT_ENV
        ),
    },
    resume=ResumeRow(
        agent="openhands",
        argv=("openhands", "--resume", "{session_id}"),
        stores=("openhands.events",),
        note="The conversation keeps its own work dir, so the command runs there.",
        source="OpenHands/OpenHands-CLI openhands_cli/argparsers/util.py: `--resume [ID]` "
        "'Conversation ID to resume'; the id is the conversation folder's name.",
    ),
)
