"""Codex CLI: rollouts (JSONL and legacy JSON) and ``history.jsonl``.

Rollouts (``codex.rollout_jsonl.v1``)
    ``sessions/YYYY/MM/DD/rollout-*.jsonl`` and ``archived_sessions/``. Eras
    handled: the ``{timestamp, type, payload}`` envelope (``session_meta``,
    ``turn_context``, ``response_item``, ``event_msg``, ``compacted``); the
    early unwrapped lines (a bare ``{id, timestamp, instructions}`` first
    line, then bare response items); payloads with ``role`` but no
    ``type`` (peer samples) read as messages; ``event_msg`` ``item_completed``.

    ``session_meta`` gives the session id (else the uuid in the file name),
    ``cwd``, ``git.branch``; ``turn_context`` updates ``cwd`` and ``model``.
    A later ``session_meta`` with a *different* id starts the parent
    history a forked/subagent rollout copies in: its lines are skipped until
    the next ``turn_context`` (the child's own first turn), so the parent's
    turns are indexed once, from the parent's rollout.

    ``response_item`` -> records (``locator`` ``line:N``):
    ``message`` role ``user`` -> ``user``/``prompt``; role ``assistant`` ->
    ``message``; ``developer``/``system`` -> ``system``/``message``;
    ``reasoning`` (summary, else content text) -> ``reasoning``;
    ``function_call``/``custom_tool_call``/``local_shell_call``/
    ``web_search_call`` -> ``tool_call`` (name + compact arguments);
    ``function_call_output``/``custom_tool_call_output`` -> ``tool``/``tool_result``;
    ``agent_message`` (a parent agent's message to this child) ->
    ``user``/``message``; ``compacted`` -> ``system``/``summary``.

    Not prompts (:mod:`._items`): text Codex injects as a user message
    (``<environment_context>``, ``<user_instructions>``, ``# AGENTS.md
    instructions``, ``<INSTRUCTIONS>`` and the like) becomes
    ``system``/``message`` (kept searchable, never ranked as typed); an IDE's
    wrapper (``# Context from my IDE setup:`` ... ``## My request for
    Codex:``) gives the request as the prompt (``line:N``) and the context
    as ``system``/``message`` (``line:N#1``); a ``<codex_delegation>`` task
    and every user message of a subagent rollout (``thread_source:
    subagent``) becomes ``user``/``message``: an agent wrote it, not a person.

    **Typed by structure, once** (:mod:`._rollout`): once a rollout has
    user events, a user item is typed only when an event of its turn is its
    twin (else it is injected context, whatever its text); twins pair by
    text, else by position, and only the first is kept.
    ``agent_message``/``agent_reasoning`` events echo response items and
    are skipped.

    **Usage** (``cursor.usage``, :mod:`._usage`): one call per rise of
    ``token_count``'s cumulative ``total_token_usage``, named by the event's
    counts so a forked rollout's copy of its parent's events is the same call.

    **Unit** (``cursor.units`` and ``count_raw``): one line that gives a
    record, outside copied parent history. **Roles** (``count_roles``):
    typed prompts and assistant replies, counted turn by turn
    (:mod:`._counts`).

Legacy rollouts (``codex.rollout_json.v1``)
    ``sessions/rollout-*.json`` = ``{session:{id,timestamp,model}, items:[...]}``;
    items are response items as above (``locator`` ``json:/items/N``). Not
    resumable. **Unit**: an item that gives a record. **Roles**: user items
    with a typed request, assistant messages.

History (``codex.history_jsonl.v1``)
    ``{session_id, ts (unix seconds), text}``: one ``user``/``prompt`` per
    line. **Unit** and **roles**: a line with a non-blank ``text`` string.
"""

from __future__ import annotations

from agentdex.parsers.base import ParserSpec
from agentdex.parsers.codex._counts import (
    count_history,
    count_history_roles,
    count_legacy,
    count_legacy_roles,
    count_rollout,
    count_rollout_roles,
)
from agentdex.parsers.codex._items import INJECTED_PREFIXES, items_of, split_ide_context
from agentdex.parsers.codex._legacy import parse_history, parse_legacy
from agentdex.parsers.codex._rollout import parse_rollout, rollout_lines

__all__ = [
    "INJECTED_PREFIXES",
    "PARSERS",
    "count_history",
    "count_legacy",
    "count_rollout",
    "items_of",
    "parse_history",
    "parse_legacy",
    "parse_rollout",
    "split_ide_context",
]

PARSERS: tuple[ParserSpec, ...] = (
    ParserSpec(
        id="codex.rollout_jsonl.v1",
        parse=parse_rollout,
        lines=rollout_lines,
        resumable=True,
        count_raw=count_rollout,
        count_roles=count_rollout_roles,
    ),
    ParserSpec(
        id="codex.rollout_json.v1",
        parse=parse_legacy,
        count_raw=count_legacy,
        count_roles=count_legacy_roles,
    ),
    ParserSpec(
        id="codex.history_jsonl.v1",
        parse=parse_history,
        resumable=True,
        count_raw=count_history,
        count_roles=count_history_roles,
    ),
)
