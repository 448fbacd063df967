"""Kilo Code, both eras: Cline-shaped task folders, then OpenCode's SQLite store.

* Extension 4.x and before (a Roo Code fork): ``<globalStorage>/kilocode.kilo-code/tasks/<id>/``
  with Cline's ``api_conversation_history.json``: the Cline parser (``parsers/cline``).
* From 2026 (the CLI and the extension rebuilt on OpenCode, Kilo-Org/kilocode
  ``packages/opencode``): ``${XDG_DATA_HOME:-~/.local/share}/kilo/kilo.db``
  (``$KILO_DB``), OpenCode's ``session``/``message``/``part`` schema
  (``packages/opencode/src/storage/db.ts``, ``schema.ts``): the OpenCode parser.
"""

from __future__ import annotations

from agentdex.parsers.base import ParserSpec
from agentdex.parsers.cline import parse_task
from agentdex.parsers.cline._counts import count_raw, count_roles
from agentdex.parsers.opencode import count_db, count_db_roles, parse_db

PARSERS = (
    ParserSpec(
        "kilo-code.api_history_json.v1", parse_task, count_raw=count_raw, count_roles=count_roles
    ),
    ParserSpec("kilo-code.sqlite.v1", parse_db, count_raw=count_db, count_roles=count_db_roles),
)
