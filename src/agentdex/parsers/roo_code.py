"""Roo Code tasks: Cline's task-folder shape, read by the Cline parser (``parsers/cline``).

Roo Code (RooCodeInc/Roo-Code, a Cline fork) writes
``<globalStorage>/rooveterinaryinc.roo-cline/tasks/<uuid>/``:
``api_conversation_history.json`` (the Anthropic-style message list,
``src/core/task-persistence/apiMessages.ts``), ``ui_messages.json`` and, from
3.50 (Feb 2026), ``history_item.json`` (``HistoryItem``: ``task``, ``ts``,
``workspace``, ``mode``, tokens and cost; ``packages/types/src/history.ts``).
"""

from __future__ import annotations

from agentdex.parsers.base import ParserSpec
from agentdex.parsers.cline import parse_task
from agentdex.parsers.cline._counts import count_raw, count_roles

PARSERS = (
    ParserSpec(
        "roo-code.api_history_json.v1", parse_task, count_raw=count_raw, count_roles=count_roles
    ),
)
