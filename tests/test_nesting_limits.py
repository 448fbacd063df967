"""Deeply nested TOML/JSON/YAML: the file is invalid (or its deep part cut), never the run.

Each hostile file sits beside an ordinary one, which must come through intact.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agentdex.api import search as search_api
from agentdex.config import load_config
from agentdex.errors import ConfigError
from agentdex.http.app import create_app
from agentdex.nesting import CUT_MARKER, MAX_NESTING, cut_deep, value_depth
from agentdex.readers import Diagnostics, JsonlReader, read_json
from context_helpers import res, skill, snap, write
from mcp_support import json_of, stdio_session, write_claude_session

DEEP = 100_000


def _deep_toml() -> str:
    return "[mcp_servers.deep]\ncommand = 'x'\nargs = " + "[" * DEEP + "]" * DEEP + "\n"


def _deep_json(depth: int) -> str:
    return '{"mcpServers": {"a": {"command": "x", "extra": ' + "[" * depth + "]" * depth + "}}}"


def _hostile_workspace(root: Path) -> Path:
    write(root / "AGENTS.md", "# Fine\nstill read\n")
    write(root / ".codex" / "config.toml", _deep_toml())
    write(root / ".mcp.json", _deep_json(DEEP))
    write(root / ".vscode" / "mcp.json", _deep_json(300))  # orjson reads it; we refuse it
    skill(root, "deep-flow", "name: deep-flow\ndescription: " + "[" * 30_000 + "]" * 30_000)
    skill(
        root,
        "deep-map",
        "name: deep-map\ndescription: x\nmeta: " + "{a: " * 5_000 + "1" + "}" * 5_000,
    )
    skill(root, "fine", "name: fine\ndescription: an ordinary skill")
    write(
        root / ".cursor" / "rules" / "deep.mdc",
        "---\ndescription: " + "[" * 30_000 + "\n---\nbody\n",
    )
    return root


def test_value_depth_and_cut_are_iterative() -> None:
    value: Any = 1
    for _ in range(50_000):
        value = [value]
    assert value_depth(value) == 50_000
    assert value_depth(value, stop_above=10) == 11
    document = {"keep": "me", "deep": value}
    assert cut_deep(document)
    assert document["keep"] == "me" and value_depth(document) == MAX_NESTING
    assert json.dumps(document)  # any recursive consumer copes now
    assert not cut_deep({"a": [1, {"b": 2}]})


def test_workspace_with_deep_files_resolves_and_marks_each_invalid(tmp_path: Path) -> None:
    ws = _hostile_workspace(tmp_path / "ws")
    snapshot = snap(ws)
    assert snapshot["error"] is None
    assert res(snapshot, ws / "AGENTS.md")["status"] == "ok"
    assert res(snapshot, ws / ".claude" / "skills" / "fine" / "SKILL.md")["status"] == "ok"
    for path in (
        ws / ".codex" / "config.toml",
        ws / ".mcp.json",
        ws / ".vscode" / "mcp.json",
        ws / ".claude" / "skills" / "deep-flow" / "SKILL.md",
        ws / ".claude" / "skills" / "deep-map" / "SKILL.md",
    ):
        item = res(snapshot, path)
        assert item["status"] == "invalid", path
        assert "nested" in item["error"], (path, item["error"])
    assert res(snapshot, ws / ".cursor" / "rules" / "deep.mdc")["status"] == "ok"  # no description


def test_cli_http_and_mcp_survive_the_deep_workspace(
    tmp_path: Path, home: Path, run_cli: Any
) -> None:
    ws = _hostile_workspace(tmp_path / "ws")
    done = run_cli("context", str(ws), "--json")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-500:]
    assert res(json.loads(done.stdout), ws / ".codex" / "config.toml")["status"] == "invalid"

    client = TestClient(create_app(token="t"))
    headers = {"Authorization": "Bearer t"}
    for method, path in (("GET", "/api/v0/context/snapshot"), ("POST", "/api/v0/context/resync")):
        answer = client.request(method, path, params={"dir": str(ws)}, headers=headers)
        assert answer.status_code == 200, (path, answer.text[:300])

    async def scenario() -> dict[str, Any]:
        async with stdio_session(cwd=home) as session:
            return json_of(await session.call_tool("workspace_context", {"directory": str(ws)}))

    context = asyncio.run(scenario())
    statuses = {r["source"]: r["status"] for r in context["resources"]}
    assert statuses[str(ws / ".codex" / "config.toml")] == "invalid"
    assert statuses[str(ws / "AGENTS.md")] == "ok"


def test_deep_agentdex_config_is_a_config_error(tmp_path: Path, run_cli: Any) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[projects]\nroots = " + "[" * DEEP + "]" * DEEP + "\n")
    with pytest.raises(ConfigError, match="nested more than"):
        load_config(config)
    done = run_cli("search", "x", env={"AGENTDEX_CONFIG": str(config)})
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-300:]


def test_store_line_nested_too_deep_is_cut_and_the_rest_of_the_file_indexed(home: Path) -> None:
    deep = '{"k":' * 1000 + "{}" + "}" * 1000  # orjson decodes it; dumping it would fail
    path = write_claude_session(
        home, "dee9dee9-0001", home / "p", [("user", "before deep"), ("user", "after deep")]
    )
    lines = path.read_text().splitlines()
    tool = json.loads(lines[0])
    tool.update(type="assistant", uuid="dee9-tool", parentUuid=None)
    tool["message"] = {
        "role": "assistant",
        "model": "m",
        "id": "msg_t",
        "type": "message",
        "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": "DEEP"}],
    }
    lines.insert(1, json.dumps(tool).replace('"DEEP"', deep))
    path.write_text("\n".join(lines) + "\n")
    stats = search_api.refresh(home=str(home))
    assert stats.files_failed == 0
    found = search_api.search("deep", home=str(home), limit=10)
    texts = {r["text"] for r in found.results}
    assert {"before deep", "after deep"} <= texts
    assert any(CUT_MARKER in t for t in texts)


def test_readers_cut_deep_documents_with_a_diagnostic(tmp_path: Path) -> None:
    document = tmp_path / "doc.json"
    document.write_text('{"ok": 1, "deep": ' + "[" * 600 + "]" * 600 + "}")
    diagnostics = Diagnostics()
    value = read_json(document, diagnostics)
    assert value["ok"] == 1 and value_depth(value) == MAX_NESTING
    assert "nested deeper" in diagnostics.items[0].message
    lines = tmp_path / "lines.jsonl"
    too_deep = "[" * 2000 + "]" * 2000  # beyond orjson's own limit: skipped, said so
    lines.write_text('{"a": 1}\n' + too_deep + '\n{"b": ' + "[" * 300 + "]" * 300 + "}\n")
    diagnostics = Diagnostics()
    values = [line.value for line in JsonlReader(lines, diagnostics)]
    assert values[0] == {"a": 1} and value_depth(values[1]) == MAX_NESTING
    messages = [d.message for d in diagnostics.items]
    assert "nested too deeply to decode; skipped" in messages
    assert any("were cut" in m for m in messages)
