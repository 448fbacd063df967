"""Aider's per-project history files, found in known project roots (never a disk walk)."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, StoreRow

_LOC = {
    "any": "<project>/ for each project named by other stores, $AGENTDEX_PROJECT_ROOTS "
    "or [projects] roots (plus one level of children)",
}
_ENV = ("AGENTDEX_PROJECT_ROOTS",)

ROWS = (
    StoreRow(
        agent="aider",
        store="aider.chat_history",
        holds="transcripts",
        format="markdown",
        root="projects",
        patterns=(".aider.chat.history.md",),
        parser="aider.chat_history_md.v1",
        env=_ENV,
        locations=_LOC,
        description="'# aider chat started at' runs; '#### ' prompt lines; '> ' tool output.",
    ),
    StoreRow(
        agent="aider",
        store="aider.input_history",
        holds="prompt log",
        format="text",
        root="projects",
        patterns=(".aider.input.history",),
        parser="aider.input_history.v1",
        env=_ENV,
        locations=_LOC,
        description="'# <datetime>' then '+'-prefixed prompt lines.",
    ),
)

AGENT = Agent(
    id="aider",
    rows=ROWS,
    parsers={
        "aider.chat_history_md.v1": "agentdex.parsers.aider",
        "aider.input_history.v1": "agentdex.parsers.aider",
    },
    resume=resume_row("aider"),
)
