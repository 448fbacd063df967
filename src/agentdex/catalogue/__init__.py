"""The catalogue: every store agentdex knows, as data.

Agent lists, CLI choices, MCP enums and the docs table are derived from
``CATALOGUE``; adding a store is adding a row (plus a parser when the format
is new). Rows are grouped one module per agent.
"""

from __future__ import annotations

from agentdex.catalogue import claude_code, codex, gemini_cli, vscode_copilot
from agentdex.catalogue.schema import Coverage, StoreRow
from agentdex.records import AGENTS

CATALOGUE: tuple[StoreRow, ...] = (
    *claude_code.ROWS,
    *codex.ROWS,
    *gemini_cli.ROWS,
    *vscode_copilot.ROWS,
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
