"""The catalogue: every store agentdex knows, as data.

Agent lists, CLI choices, MCP enums and the docs table are derived from
``CATALOGUE``; adding a store is adding a row (plus a parser when the format
is new). Rows are grouped one module per agent.
"""

from __future__ import annotations

from agentdex.catalogue import (
    aider,
    antigravity_cli,
    claude_code,
    claude_extras,
    cline,
    codex,
    codex_extras,
    copilot_cli,
    cursor,
    cursor_cli,
    gemini_cli,
    grok,
    opencode,
    pi,
    vscode_copilot,
    windsurf,
)
from agentdex.catalogue.schema import Coverage, StoreRow
from agentdex.records import AGENTS

CATALOGUE: tuple[StoreRow, ...] = (
    *claude_code.ROWS,
    *codex.ROWS,
    *gemini_cli.ROWS,
    *vscode_copilot.ROWS,
    *claude_extras.ROWS,
    *codex_extras.ROWS,
    *cursor.ROWS,
    *cursor_cli.ROWS,
    *opencode.ROWS,
    *cline.ROWS,
    *aider.ROWS,
    *pi.ROWS,
    *grok.ROWS,
    *antigravity_cli.ROWS,
    *copilot_cli.ROWS,
    *windsurf.ROWS,
)


def _check(rows: tuple[StoreRow, ...]) -> None:
    seen: set[str] = set()
    for row in rows:
        if row.store in seen:
            raise ValueError(f"duplicate store id in catalogue: {row.store}")
        if row.agent not in AGENTS:
            raise ValueError(f"unknown agent id in catalogue: {row.agent}")
        if not row.store.startswith(row.agent + "."):
            raise ValueError(f"store id {row.store} must start with its agent id")
        seen.add(row.store)


_check(CATALOGUE)


def agents() -> tuple[str, ...]:
    """Agent ids that have at least one catalogue row, in catalogue order."""
    return tuple(dict.fromkeys(row.agent for row in CATALOGUE))


def store(store_id: str) -> StoreRow:
    """The row for ``store_id`` (KeyError when unknown)."""
    for row in CATALOGUE:
        if row.store == store_id:
            return row
    raise KeyError(store_id)


__all__ = ["CATALOGUE", "Coverage", "StoreRow", "agents", "store"]
