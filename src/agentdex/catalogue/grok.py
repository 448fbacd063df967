"""Grok CLI stores (``${GROK_HOME:-~/.grok}``)."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, Coverage, StoreRow

_LOC = {"linux": "~/.grok", "macos": "~/.grok", "windows": "%USERPROFILE%\\.grok"}
_ENV = ("GROK_HOME",)

ROWS = (
    StoreRow(
        agent="grok",
        store="grok.sessions",
        holds="transcripts",
        format="jsonl",
        root="grok",
        patterns=("sessions/*/*/chat_history.jsonl",),
        parser="grok.chat_history_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description="Per-session {type, content} lines under the URL-encoded project folder.",
        times="partly file-mtime",
    ),
    StoreRow(
        agent="grok",
        store="grok.prompt_history",
        holds="prompt log",
        format="jsonl",
        root="grok",
        patterns=("sessions/*/prompt_history.jsonl",),
        parser="grok.prompt_history_jsonl.v1",
        env=_ENV,
        locations=_LOC,
        description="{timestamp, session_id, prompt, is_bash} per prompt, per project.",
        times="partly file-mtime",
    ),
    StoreRow(
        agent="grok",
        store="grok.subagents",
        holds="subagent prompts",
        format="json",
        root="grok",
        patterns=("sessions/*/*/subagents/*/meta.json",),
        parser="grok.subagent_json.v1",
        env=_ENV,
        locations=_LOC,
        description="Delegated subagent prompt and description (its turns are not stored).",
        times="partly file-mtime",
    ),
    StoreRow(
        agent="grok",
        store="grok.session_search",
        holds="search index",
        format="sqlite",
        root="grok",
        patterns=("sessions/session_search.sqlite",),
        parser=None,
        coverage=Coverage.LISTED,
        env=_ENV,
        locations=_LOC,
        description="Grok's own FTS copy of the sessions: listed, not parsed (duplicates them).",
    ),
)

AGENT = Agent(
    id="grok",
    rows=ROWS,
    parsers={
        "grok.chat_history_jsonl.v1": "agentdex.parsers.grok",
        "grok.prompt_history_jsonl.v1": "agentdex.parsers.grok",
        "grok.subagent_json.v1": "agentdex.parsers.grok",
    },
    resume=resume_row("grok"),
)
