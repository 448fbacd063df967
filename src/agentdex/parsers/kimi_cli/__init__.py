"""Kimi CLI (MoonshotAI/kimi-cli): ``${KIMI_SHARE_DIR:-~/.kimi}``, every OS.

* ``sessions/<md5(work dir)>/<session>/wire.jsonl`` (and a subagent's
  ``subagents/<agent>/wire.jsonl``): the UI stream with times, the
  transcript read first (:mod:`._wire`).
* ``context.jsonl`` and its rotations, for sessions from before the wire log
  (:mod:`._context`).
* ``state.json``/``metadata.json`` titles and the shell's
  ``user-history/<md5>.jsonl`` prompt recall list (:mod:`._extras`).

The work dir comes from ``kimi.json`` (:mod:`._common`).
"""

from __future__ import annotations

from agentdex.parsers.base import ParserSpec
from agentdex.parsers.kimi_cli._context import parse_context
from agentdex.parsers.kimi_cli._counts import (
    count_context,
    count_context_roles,
    count_wire,
    count_wire_roles,
)
from agentdex.parsers.kimi_cli._extras import (
    count_state,
    count_user_history,
    count_user_history_roles,
    parse_state,
    parse_user_history,
)
from agentdex.parsers.kimi_cli._wire import parse_wire

__all__ = ["PARSERS", "parse_context", "parse_state", "parse_user_history", "parse_wire"]

PARSERS: tuple[ParserSpec, ...] = (
    ParserSpec(
        id="kimi-cli.wire_jsonl.v1",
        parse=parse_wire,
        resumable=True,
        count_raw=count_wire,
        count_roles=count_wire_roles,
    ),
    ParserSpec(
        id="kimi-cli.context_jsonl.v1",
        parse=parse_context,
        count_raw=count_context,
        count_roles=count_context_roles,
    ),
    ParserSpec(id="kimi-cli.state_json.v1", parse=parse_state, count_raw=count_state),
    ParserSpec(
        id="kimi-cli.user_history_jsonl.v1",
        parse=parse_user_history,
        resumable=True,
        count_raw=count_user_history,
        count_roles=count_user_history_roles,
    ),
)
