"""Bad input never raises: random JSON shapes through every text-format parser of these agents."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _agent_helpers import count_raw, parse
from agentdex.parsers._registry import PARSER_MODULES, get_parser
from agentdex.records import KINDS, ROLES

MY_MODULES = {
    "agentdex.parsers.aider",
    "agentdex.parsers.antigravity_cli",
    "agentdex.parsers.claude_store",
    "agentdex.parsers.cline",
    "agentdex.parsers.codex_titles",
    "agentdex.parsers.copilot_cli",
    "agentdex.parsers.cursor",
    "agentdex.parsers.cursor_cli",
    "agentdex.parsers.grok",
    "agentdex.parsers.opencode",
    "agentdex.parsers.pi",
    "agentdex.parsers.factory_droid",
}
KEYS = [
    "type",
    "role",
    "content",
    "message",
    "text",
    "data",
    "prompt",
    "display",
    "summary",
    "tool_calls",
    "toolRequests",
    "chatMessages",
    "commandHistory",
    "name",
    "timestamp",
    "id",
    "cwd",
    "thread_name",
    "created_at",
    "source",
    "tool_call_id",
]
VALUES = [
    "user",
    "assistant",
    "message",
    "session",
    "toolResult",
    "bashExecution",
    "USER_INPUT",
    "PLANNER_RESPONSE",
    "MODEL",
    "user.message",
    "assistant.message",
    "session.start",
    "tool.execution_complete",
    "text",
    "tool_use",
    "tool_result",
    "reasoning",
    "compaction",
    "session_start",
]

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 2**40), st.sampled_from(VALUES), st.text(max_size=12)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)
    ),
    max_leaves=20,
)
TEXT_PARSERS = sorted(
    pid
    for pid, module in PARSER_MODULES.items()
    if module in MY_MODULES and not pid.endswith(("sqlite.v1", "state_vscdb.v1"))
)


def test_every_parser_of_these_agents_has_an_independent_count() -> None:
    for pid, module in PARSER_MODULES.items():
        if module in MY_MODULES:
            assert get_parser(pid).count_raw is not None, pid


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(json_value, min_size=1, max_size=6), junk=st.binary(max_size=20))
def test_random_json_never_raises(lines: list[object], junk: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for pid in TEXT_PARSERS:
            name = {
                "aider.chat_history_md.v1": ".aider.chat.history.md",
                "aider.input_history.v1": ".aider.input.history",
            }.get(pid, "data.json")
            folder = base / pid / "a" / "b" / "c"
            folder.mkdir(parents=True)
            path = folder / name
            if pid.endswith(("jsonl.v1", "md.v1", "input_history.v1")):
                body = b"\n".join(orjson.dumps(v) for v in lines) + b"\n" + junk
            else:
                body = json.dumps(lines[0]).encode()
            path.write_bytes(body)
            records, cursor, _ = parse(pid, path, root=base / pid)
            for record in records:
                assert record.role in ROLES and record.kind in KINDS
                assert isinstance(record.text, str) and record.text
            assert count_raw(pid, path) >= 0
            assert cursor.units >= 0


#: Where a type or role name belongs, a list or an object: a parser that looks it up in a
#: set must not raise (hypothesis found it in Grok's drift check).
UNHASHABLE_NAMES = [
    {"type": ["message"], "role": {"a": 1}, "data": {}},
    {"type": "message", "message": {"role": ["user"], "content": [{"type": {"t": 1}}]}},
    {"type": {"x": 1}, "data": {"x": 1}, "message": {"role": "assistant",
                                                     "content": [{"type": ["text"]}]}},
]  # fmt: skip


def test_unhashable_type_names_are_drift_not_errors() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for pid in TEXT_PARSERS:
            folder = base / pid / "a" / "b" / "c"
            folder.mkdir(parents=True)
            path = folder / "data.json"
            if pid.endswith(("jsonl.v1", "md.v1", "input_history.v1")):
                path.write_bytes(b"\n".join(orjson.dumps(v) for v in UNHASHABLE_NAMES) + b"\n")
            else:
                path.write_text(json.dumps(UNHASHABLE_NAMES[0]))
            records, _, _ = parse(pid, path, root=base / pid)
            assert all(r.role in ROLES and r.kind in KINDS for r in records), pid
