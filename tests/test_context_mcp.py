"""MCP configs ship metadata only: names, size, hash; never env/headers/args values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentdex.context.mcp_configs import strip_jsonc
from context_helpers import res, snap, write

SECRET = "ghp_SUPERSECRETTOKEN1234567890"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path.resolve()


def _servers(env_key: str = "mcpServers") -> dict[str, object]:
    return {
        env_key: {
            "github": {
                "command": "npx",
                "args": ["-y", "server-github", f"--token={SECRET}"],
                "env": {"GITHUB_TOKEN": SECRET},
            },
            "docs": {
                "url": "https://example.invalid/mcp",
                "headers": {"Authorization": f"Bearer {SECRET}"},
            },
        }
    }


def test_values_never_leave_the_file(ws: Path, home: Path) -> None:
    write(ws / ".mcp.json", json.dumps(_servers()))
    write(ws / ".cursor" / "mcp.json", json.dumps(_servers()))
    write(ws / ".vscode" / "mcp.json", "// vscode\n" + json.dumps(_servers("servers")))
    write(home / ".claude.json", json.dumps({"numStartups": 3, **_servers()}))
    write(home / ".gemini" / "settings.json", json.dumps({"theme": "x", **_servers()}))
    write(
        home / ".codex" / "config.toml",
        f'model = "o3"\n[mcp_servers.github]\ncommand = "npx"\nenv = {{ TOKEN = "{SECRET}" }}\n',
    )
    out = snap(ws, payload=True)
    mcp = [r for r in out["resources"] if r["kind"] == "mcp_config"]
    assert len(mcp) == 6
    for item in mcp:
        assert item["status"] == "ok", item
        assert item["payload"] is None and item["payload_bytes"] == 0
        assert item["size"] > 0 and len(item["content_hash"]) == 64
    assert res(out, ws / ".mcp.json")["servers"] == ["docs", "github"]
    assert res(out, home / ".codex" / "config.toml")["servers"] == ["github"]
    assert SECRET not in json.dumps(out)


def test_invalid_shapes_are_invalid_without_echoing_values(ws: Path) -> None:
    cases = {
        "a": "not json at all " + SECRET,
        "b": json.dumps([SECRET]),
        "c": json.dumps({"other": 1}),
        "d": json.dumps({"mcpServers": {"x": SECRET}}),
        "e": json.dumps({"mcpServers": {"x": {"command": "a", "env": [SECRET]}}}),
        "f": json.dumps({"mcpServers": {"x": {"command": "a", "args": "--token " + SECRET}}}),
        "g": json.dumps({"mcpServers": {"x": {"env": {}}}}),
    }
    for name, text in cases.items():
        write(ws / name / ".mcp.json", text)
    out = snap(ws)
    for name in cases:
        item = res(out, ws / name / ".mcp.json")
        assert item["status"] == "invalid", (name, item)
        assert item["servers"] is None
    assert SECRET not in json.dumps(out)


def test_shared_settings_hash_only_the_mcp_section(ws: Path, home: Path) -> None:
    path = write(home / ".claude.json", json.dumps({"numStartups": 1, **_servers()}))
    first = res(snap(ws), path)
    path.write_text(json.dumps({"numStartups": 2, **_servers()}))
    assert res(snap(ws), path)["content_hash"] == first["content_hash"]
    path.write_text(json.dumps({"numStartups": 2, "mcpServers": {}}))
    assert res(snap(ws), path)["content_hash"] != first["content_hash"]


def test_shared_settings_without_servers_is_ok_and_empty(ws: Path, home: Path) -> None:
    write(home / ".gemini" / "settings.json", '{"theme": "dark"}')
    item = res(snap(ws), home / ".gemini" / "settings.json")
    assert (item["status"], item["servers"]) == ("ok", [])


def test_bad_toml_is_invalid(ws: Path, home: Path) -> None:
    write(home / ".codex" / "config.toml", f"[mcp_servers.x\ncommand = '{SECRET}'\n")
    item = res(snap(ws), home / ".codex" / "config.toml")
    assert item["status"] == "invalid" and "TOML" in item["error"]
    assert SECRET not in item["error"]


def test_strip_jsonc_keeps_strings() -> None:
    text = '{"u": "http://x//y", /* c */ "a": [1, 2,], // t\n}'
    assert json.loads(strip_jsonc(text)) == {"u": "http://x//y", "a": [1, 2]}


def test_readme_tour_example_never_leaks_its_fake_tokens(tmp_path: Path) -> None:
    import shutil

    from agentdex.api import context as api

    template = Path(__file__).resolve().parent.parent / "examples" / "home-template"
    home = tmp_path / "home"
    shutil.copytree(template, home)
    for path in home.rglob("*"):
        if path.is_file():
            path.write_text(path.read_text().replace("__HOME__", str(home)))
    out = api.snapshot(str(home / "src" / "shop"), payload=True, home=str(home))
    assert out["status_counts"] == {"ok": 5}
    mcp = res(out, home / "src" / "shop" / ".mcp.json")
    assert mcp["servers"] == ["docs", "payments-sandbox"]
    assert "fake-" not in json.dumps(out)
