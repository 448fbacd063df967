"""Windsurf (Codeium Cascade): present on disk, but encrypted."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, Coverage, StoreRow

ROWS = (
    StoreRow(
        agent="windsurf",
        store="windsurf.cascade",
        holds="transcripts",
        format="protobuf (encrypted)",
        root="windsurf",
        patterns=("cascade/*.pb",),
        parser=None,
        coverage=Coverage.LISTED,
        locations={"linux": "~/.codeium/windsurf", "macos": "~/.codeium/windsurf"},
        description="High-entropy .pb per conversation: listed by sources, cannot be parsed.",
        note="Windsurf encrypts its Cascade history: agentdex lists these files and cannot read "
        "them.",
    ),
)

AGENT = Agent(
    id="windsurf",
    rows=ROWS,
    parsers={},
    resume=resume_row("windsurf"),
)
