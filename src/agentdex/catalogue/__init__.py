"""The catalogue: every store agentdex knows, as data.

Agent lists, CLI choices, MCP enums and the docs table are derived from
``CATALOGUE``; adding a store is adding a row (plus a parser when the format
is new). Rows are grouped one module per agent. ``RESUME`` holds each agent's
resume command (:mod:`agentdex.catalogue.resume`).
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
from agentdex.catalogue.resume import PLACEHOLDERS, RESUME, ResumeRow, resume_row
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


def _check_resume(rows: tuple[ResumeRow, ...], catalogue: tuple[StoreRow, ...]) -> None:
    """One resume row per agent; its stores are that agent's; templates use known placeholders."""
    owner = {row.store: row.agent for row in catalogue}
    if sorted(row.agent for row in rows) != sorted(AGENTS):
        raise ValueError("catalogue.resume needs exactly one row per agent id")
    for row in rows:
        for store_id in (*row.stores, *row.store_notes):
            if owner.get(store_id) != row.agent:
                raise ValueError(f"resume row {row.agent}: {store_id} is not one of its stores")
        for arg in row.argv:
            rest = arg
            for placeholder in PLACEHOLDERS:
                rest = rest.replace(placeholder, "")
            if "{" in rest or "}" in rest:
                raise ValueError(f"resume row {row.agent}: unknown placeholder in {arg!r}")
        if row.supported != bool(row.stores) or (not row.supported and not row.note):
            raise ValueError(f"resume row {row.agent}: a command needs stores; none needs a note")


_check_resume(RESUME, CATALOGUE)


def agents() -> tuple[str, ...]:
    """Agent ids that have at least one catalogue row, in catalogue order."""
    return tuple(dict.fromkeys(row.agent for row in CATALOGUE))


def store(store_id: str) -> StoreRow:
    """The row for ``store_id`` (KeyError when unknown)."""
    for row in CATALOGUE:
        if row.store == store_id:
            return row
    raise KeyError(store_id)


__all__ = [
    "CATALOGUE",
    "RESUME",
    "Coverage",
    "ResumeRow",
    "StoreRow",
    "agents",
    "resume_row",
    "store",
]
