"""GitHub Copilot CLI stores (``$COPILOT_HOME``, else ``~/.copilot``)."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, StoreRow

_LOC = {"linux": "~/.copilot", "macos": "~/.copilot", "windows": "%USERPROFILE%\\.copilot"}
_ENV = ("COPILOT_HOME", "XDG_CONFIG_HOME")

ROWS = (
    StoreRow(
        agent="copilot-cli",
        store="copilot-cli.session_state",
        holds="transcripts",
        format="jsonl",
        root="copilot_cli",
        patterns=("session-state/*/events.jsonl", "session-state/*.jsonl"),
        parser="copilot-cli.events_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description="Event log {type, timestamp, data}: user.message, assistant.message, tools.",
    ),
    StoreRow(
        agent="copilot-cli",
        store="copilot-cli.history_session_state",
        holds="transcripts",
        format="json",
        root="copilot_cli",
        patterns=("history-session-state/*.json",),
        parser="copilot-cli.history_session_json.v1",
        env=_ENV,
        locations=_LOC,
        description="Older builds: {sessionId, startTime, chatMessages[]} per session.",
    ),
    StoreRow(
        agent="copilot-cli",
        store="copilot-cli.command_history",
        holds="prompt log",
        format="json",
        root="copilot_cli",
        patterns=("command-history-state.json",),
        parser="copilot-cli.command_history_json.v1",
        env=_ENV,
        locations=_LOC,
        description="{commandHistory: [prompt, ...]}, newest first, no timestamps (mtime used).",
        times="file-mtime",
    ),
)

AGENT = Agent(
    id="copilot-cli",
    rows=ROWS,
    parsers={
        "copilot-cli.events_jsonl.v1": "agentdex.parsers.copilot_cli",
        "copilot-cli.history_session_json.v1": "agentdex.parsers.copilot_cli",
        "copilot-cli.command_history_json.v1": "agentdex.parsers.copilot_cli",
    },
    resume=resume_row("copilot-cli"),
)
