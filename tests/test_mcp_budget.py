"""The size budget: every response fits, and a cut response says what was cut and how to page."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentdex.mcp.budget import (
    BUDGET_ENV,
    DEFAULT_MAX_BYTES,
    MARKER_KEY,
    Paging,
    fit,
    fit_text,
    resolve_max_bytes,
)
from agentdex.mcp.server import AgentdexMCP
from mcp_support import (
    TOOL_NAMES,
    api_present,
    json_of,
    require_parser,
    stdio_session,
    text_of,
    write_claude_session,
)


def _paging(arguments: dict[str, Any]) -> Paging:
    return Paging("show_session", "records", lambda kept: {**arguments, "offset": kept})


def test_small_payload_is_returned_whole() -> None:
    payload = {"records": [{"text": "hello"}], "total": 1}
    assert json.loads(fit(payload, 4096, _paging({}))) == payload


def test_long_list_keeps_a_whole_prefix_and_says_how_to_page() -> None:
    records = [{"i": i, "text": "x" * 200} for i in range(500)]
    text = fit({"records": records, "total": 500}, 8192, _paging({"ref": "abc"}))
    assert len(text.encode()) <= 8192
    data = json.loads(text)
    kept = data["records"]
    assert kept == records[: len(kept)]  # whole items, in order, nothing rewritten
    assert 10 < len(kept) < 500
    marker = data[MARKER_KEY]
    assert f"kept the first {len(kept)} of 500 records" in marker["cut"]
    assert "8192" in marker["reason"]
    assert marker["next"] == {
        "tool": "show_session",
        "arguments": {"ref": "abc", "offset": len(kept)},
    }


def test_one_huge_item_is_clipped_with_a_marker_in_the_text() -> None:
    records = [{"i": 0, "text": "é" * 100_000}, {"i": 1, "text": "short"}]
    text = fit({"records": records}, 4096, _paging({"ref": "abc"}))
    assert len(text.encode()) <= 4096  # bytes, not characters: "é" is two bytes
    data = json.loads(text)
    assert len(data["records"]) == 1
    assert data["records"][0]["text"].endswith("characters cut by the size budget]")
    assert "clipped 1 long text field(s)" in data[MARKER_KEY]["cut"]
    assert data[MARKER_KEY]["next"]["arguments"]["offset"] == 1


def test_unpageable_payload_clips_strings() -> None:
    payload = {"files": {"AGENTS.md": "a" * 50_000, "CLAUDE.md": "b" * 50_000}, "n": 2}
    data = json.loads(fit(payload, 4096, None))
    assert data["n"] == 2
    assert set(data["files"]) == {"AGENTS.md", "CLAUDE.md"}
    assert "next" not in data[MARKER_KEY]


def test_payload_too_wide_to_clip_is_replaced_by_the_marker() -> None:
    payload = {f"key{i}": i for i in range(2000)}
    text = fit(payload, 2048, None)
    assert len(text.encode()) <= 2048
    assert "too large even with text clipped" in json.loads(text)[MARKER_KEY]["cut"]


def test_text_documents_are_cut_at_a_line_with_a_marker() -> None:
    doc = "".join(f"line {i}: " + "é" * 50 + "\n" for i in range(500))
    text = fit_text(doc, 4096, "the rest is elsewhere")
    assert len(text.encode()) <= 4096
    body, marker = text.rsplit("\n\n", 1)
    assert doc.startswith(body + "\n")  # whole lines, nothing rewritten
    assert marker.startswith(f"[{MARKER_KEY}: this document is {len(doc.encode())} bytes")
    assert fit_text("short\n", 4096, "x") == "short\n"


def test_budget_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BUDGET_ENV, raising=False)
    assert resolve_max_bytes() == DEFAULT_MAX_BYTES == 24 * 1024
    monkeypatch.setenv(BUDGET_ENV, "10000")
    assert resolve_max_bytes() == 10000
    assert resolve_max_bytes(5000) == 5000
    with pytest.raises(ValueError):
        resolve_max_bytes(100)


def test_huge_conversation_over_mcp_is_cut_and_pages_to_the_end(home: Path) -> None:
    """~1 MB of real transcript through the real server: every page fits, paging ends."""
    require_parser("claude_code")
    turns = [("user" if i % 2 == 0 else "assistant", f"turn {i} " + "z" * 3000) for i in range(300)]
    write_claude_session(home, "bigsession-0001", home / "proj", turns)

    async def scenario() -> None:
        async with stdio_session("--home", str(home)) as session:
            arguments: dict[str, Any] | None = {"ref": "bigsession-0001", "limit": 500}
            seen: list[str] = []
            pages = 0
            while arguments is not None:
                result = await session.call_tool("show_session", arguments)
                assert len(text_of(result).encode()) <= DEFAULT_MAX_BYTES
                data = json_of(result)
                seen += [r["text"].split(" ", 2)[1] for r in data["records"]]
                marker = data.get(MARKER_KEY)
                arguments = marker["next"]["arguments"] if marker else None
                pages += 1
                assert pages < 100
            assert pages > 10  # 300 x 3 KB cannot fit in a handful of 24 KB pages
            assert seen == [str(i) for i in range(300)]

    asyncio.run(scenario())


def test_max_bytes_option_sets_the_budget(home: Path) -> None:
    require_parser("claude_code")
    turns = [("user", "q" * 2000), ("assistant", "a" * 2000)] * 10
    write_claude_session(home, "smallbudget-01", home / "proj", turns)

    async def scenario() -> None:
        async with stdio_session("--home", str(home), mcp_args=("--max-bytes", "4096")) as session:
            result = await session.call_tool("show_session", {"ref": "smallbudget-01"})
            assert len(text_of(result).encode()) <= 4096
            assert "4096" in json_of(result)[MARKER_KEY]["reason"]
            # Resources respect the budget too; the catalogue points at its per-agent slices.
            whole = (await session.read_resource("agentdex://catalogue")).contents[0]
            assert len(whole.text.encode()) <= 4096  # type: ignore[union-attr]
            marker = json.loads(whole.text)[MARKER_KEY]  # type: ignore[union-attr]
            assert "agentdex://catalogue/codex" in marker["next"]["arguments"]["uris"]
            codex = (await session.read_resource("agentdex://catalogue/codex")).contents[0]
            assert len(codex.text.encode()) <= 4096  # type: ignore[union-attr]

    asyncio.run(scenario())


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    name=st.sampled_from([*sorted(TOOL_NAMES), "nope"]),
    arguments=st.dictionaries(
        st.sampled_from(["query", "ref", "limit", "offset", "agent", "cwd", "repo", "x"]),
        _JSON,
        max_size=4,
    ),
)
def test_any_arguments_give_a_result_within_budget(
    home: Path, name: str, arguments: dict[str, Any]
) -> None:
    """Whatever a client sends, a tool answers (error or not) and never beyond the budget."""
    core = AgentdexMCP(home=str(home), cwd=str(home), max_bytes=4096)
    result = core.call(name, arguments)
    assert len(text_of(result).encode()) <= 4096
    if not result.is_error:
        json.loads(text_of(result))
    else:
        assert "internal error" not in text_of(result), text_of(result)


def test_search_results_cut_by_the_budget_say_so(home: Path) -> None:
    """The run can be complete while the response is cut: two different markers."""
    require_parser("claude_code")
    if not api_present("search", "search"):
        pytest.skip("agentdex.api.search.search is not in this build")
    turns = [("user", f"needle {i} " + "hay " * 500) for i in range(60)]
    write_claude_session(home, "ne3d1e00-0001", home / "proj", turns)
    core = AgentdexMCP(home=str(home), cwd=str(home), max_bytes=8192)
    arguments = {"query": "needle", "limit": 60, "full_text": True}
    text = text_of(core.call("search", arguments))
    assert len(text.encode()) <= 8192
    data = json.loads(text)
    assert data["run"]["status"] == "complete"  # the search itself returned every match
    kept = len(data["results"])
    assert 0 < kept < 60
    cut = data[MARKER_KEY]["cut"]
    assert f"kept the first {kept} of 60 results" in cut and "smaller limit" in cut
    assert "next" not in data[MARKER_KEY]
