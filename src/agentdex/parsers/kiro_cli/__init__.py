"""Kiro CLI and the Amazon Q Developer CLI it was renamed from.

* ``kiro-cli.sqlite.v1``: ``data.sqlite3`` (``conversations``, ``conversations_v2``), the
  conversation state JSON of the open era (:mod:`._state`, :mod:`._sqlite`).
* ``kiro-cli.session_jsonl.v1``: ``~/.kiro/sessions/cli/<id>.jsonl`` + ``<id>.json``, known
  only from public readers (:mod:`._jsonl`).

What counts as a prompt and a reply is in each module and in ``docs/agents.md``.
"""

from agentdex.parsers.base import ParserSpec
from agentdex.parsers.kiro_cli._counts import (
    count_db,
    count_db_roles,
    count_session,
    count_session_roles,
)
from agentdex.parsers.kiro_cli._jsonl import parse_session
from agentdex.parsers.kiro_cli._sqlite import parse_db

PARSERS = (
    ParserSpec("kiro-cli.sqlite.v1", parse_db, count_raw=count_db, count_roles=count_db_roles),
    ParserSpec(
        "kiro-cli.session_jsonl.v1",
        parse_session,
        count_raw=count_session,
        count_roles=count_session_roles,
    ),
)
