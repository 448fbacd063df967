"""Output schemas hold for every shape the size budget can leave (no client needed)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from agentdex.mcp import budget
from agentdex.mcp.server import AgentdexMCP
from agentdex.mcp.tools import TOOLS


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_schema_is_valid_and_accepts_the_marker_alone(tool: Any) -> None:
    assert tool.output is not None
    Draft202012Validator.check_schema(tool.output)
    too_big = {"items": ["x" * 100] * 200, "more": {f"k{n}": "y" * 100 for n in range(200)}}
    alone = orjson.loads(budget.fit(too_big, 2048))
    assert list(alone) == [budget.MARKER_KEY]
    Draft202012Validator(tool.output).validate(alone)
    with pytest.raises(Exception, match="required"):
        Draft202012Validator(tool.output).validate({})  # an empty object is not a result


def test_results_carry_structured_content_that_validates(home: Any) -> None:
    server = AgentdexMCP(home=str(home), max_bytes=4096)
    for name, arguments in (
        ("validate_query", {"query": "retry -backoff agent:codex since:7d"}),
        ("list_sources", {}),
        ("search", {"query": "anything"}),
        ("list_sessions", {}),
        ("usage", {"by": "model"}),
    ):
        result = server.call(name, arguments)
        assert result.is_error is not True, result
        schema = server.tools[name].output
        Draft202012Validator(schema).validate(result.structured_content)
        assert orjson.loads(result.content[0].text) == result.structured_content
    failed = server.call("show_session", {"ref": "no-such-session"})
    assert failed.is_error is True and failed.structured_content is None
