"""Secrets pasted into a conversation never come back out (issue 22), on any surface.

A Claude Code conversation holds the ten secrets the attack run planted
(AWS key id and secret, GitHub ``ghp_``, OpenAI, Anthropic, Slack, a JWT, an
RSA private key block, a postgres URL with a password), one in its title.
With the default config none appears in the CLI (``search``, ``show``,
``sessions``, ``export``, ``archive export`` with raw lines), HTTP
(``/search``, ``/show``, ``/conversations``, ``/export``), any MCP tool, or
the index and archive files on disk; ``agentdex secrets`` says where they
were, by kind, without them. Secrets are built from pieces so that no
scanner takes this file for a leak.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agentdex.http.app import create_app
from conftest import CliResult
from mcp_support import json_of, stdio_session, text_of

AUTH = {"Authorization": "Bearer t0ken"}
SESSION = "5ec2e700-1111-4222-8333-444455556666"
A36 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SECRETS = {
    "aws-access-key-id": "AK" + "IA" + "QX7RZ2M4TB6N8P3K",
    "aws-secret-access-key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Hd3kL2m",
    "github-token": "gh" + "p_" + A36,
    "openai-key": "sk-" + "proj-" + A36 + "Zq9",
    "anthropic-key": "sk-" + "ant-api03-" + A36 + "_xY-42abc",
    "slack-token": "xo" + "xb-" + "123456789012-" + "AbCdEfGhIjKlMnOp1234",
    "jwt": "ey"
    + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.ey"
    + "JzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "private-key": "-----BEGIN RSA PRIVATE"
    + " KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt\n"
    + "-----END RSA PRIVATE"
    + " KEY-----",
    "url-password": "Hunter2Pass9x",
}
#: what must never be seen (the private key by its body line)
NEEDLES = [v for k, v in SECRETS.items() if k != "private-key"] + [
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt"
]


def _line(kind: str, text: str | list[dict[str, Any]], index: int, cwd: Path) -> str:
    role = "user" if kind == "user" else "assistant"
    return json.dumps(
        {
            "type": kind,
            "sessionId": SESSION,
            "cwd": str(cwd),
            "timestamp": f"2026-11-20T10:0{index}:00Z",
            "uuid": f"u{index}",
            "message": {"role": role, "content": text, "model": "claude-x"},
        }
    )


@pytest.fixture
def planted(home: Path) -> Path:
    return plant(home)


def plant(home: Path) -> Path:
    """The conversation with the ten secrets, in ``home``'s Claude Code store."""
    project = home / "work" / "app"
    project.mkdir(parents=True)
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    s = SECRETS
    lines = [
        json.dumps(
            {
                "type": "ai-title",
                "sessionId": SESSION,
                "aiTitle": f"deploy {s['aws-access-key-id']}",
            }
        ),
        _line("user", f"deploy with {s['aws-access-key-id']} and the rest below", 0, project),
        _line(
            "assistant",
            f"Set aws_secret_access_key = {s['aws-secret-access-key']}\n"
            f"export GITHUB_TOKEN={s['github-token']}\nOPENAI={s['openai-key']}\n"
            f"claude uses {s['anthropic-key']}",
            1,
            project,
        ),
        _line(
            "user",
            f"slack {s['slack-token']} and cookie session={s['jwt']}\n{s['private-key']}\n"
            f"DATABASE_URL=postgres://app:{s['url-password']}@db.internal:5432/app",
            2,
            project,
        ),
    ]
    (folder / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n")
    return home


def _clean(text: str) -> None:
    leaked = [needle[:12] for needle in NEEDLES if needle in text]
    assert leaked == [], f"secrets shown: {leaked}"


def _files_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_cli_never_shows_a_planted_secret(
    planted: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    outputs = []
    for args in (
        ("search", "deploy"),
        ("search", "deploy", "--json"),
        ("search", "REDACTED", "--json", "--limit", "50"),
        ("show", SESSION),
        ("show", SESSION, "--json"),
        ("conversations",),
        ("conversations", "--json"),
        ("export", SESSION, "--format", "md", "-o", "-"),
        ("export", SESSION, "--format", "json", "-o", "-"),
        ("export", SESSION, "--format", "html", "-o", "-"),
        ("resume", SESSION, "--print"),
    ):
        result = run_cli(*args)
        assert result.returncode == 0, (args, result.stderr)
        outputs.append(result.stdout + result.stderr)
    for output in outputs:
        _clean(output)
    joined = "".join(outputs)
    for kind in SECRETS:
        assert f"[REDACTED:{kind}]" in joined, kind
    out = tmp_path / "archive.jsonl"
    assert run_cli("archive", "export", "-o", str(out), "--json").returncode == 0
    exported = out.read_text()
    _clean(exported)
    rows = [json.loads(line) for line in exported.splitlines()]
    assert any("raw" in row for row in rows)  # the prompts' raw lines, masked too
    data_dir = Path(os.environ["AGENTDEX_DATA_DIR"])
    stored = _files_under(data_dir)
    leaked = [n[:12] for n in NEEDLES if n.encode() in stored]
    assert leaked == []  # not in the index's nor the archive's files either


def test_secrets_command_lists_kinds_and_places_never_values(
    planted: Path, run_cli: Callable[..., CliResult]
) -> None:
    result = run_cli("secrets", "--json")
    assert result.returncode == 0, result.stderr
    _clean(result.stdout)
    data = json.loads(result.stdout)
    kinds = {f["kind"] for f in data["findings"]}
    assert kinds == set(SECRETS)
    finding = data["findings"][0]
    assert finding["agent"] == "claude-code" and finding["session_id"] == SESSION
    assert finding["ref"].startswith(SESSION + "@") and finding["timestamp"].startswith("2026-")
    [conversation] = data["conversations"]
    assert conversation["session_id"] == SESSION and conversation["secrets"] == len(
        data["findings"]
    )
    human = run_cli("secrets")
    assert human.returncode == 0 and "aws-access-key-id" in human.stdout
    _clean(human.stdout)


def test_http_never_returns_a_planted_secret(planted: Path) -> None:
    client = TestClient(create_app(token="t0ken"))
    bodies = [
        client.get("/api/v0/search", params={"q": "deploy"}, headers=AUTH),
        client.get("/api/v0/search", params={"q": "REDACTED", "limit": 50}, headers=AUTH),
        client.get("/api/v0/conversations", headers=AUTH),
        client.get("/api/v0/show", params={"ref": SESSION}, headers=AUTH),
        client.get(f"/api/v0/export/{SESSION}", params={"format": "md"}, headers=AUTH),
        client.get(f"/api/v0/export/{SESSION}", params={"format": "json"}, headers=AUTH),
        client.get("/api/v0/secrets", headers=AUTH),
    ]
    for body in bodies:
        assert body.status_code == 200, body.text
        _clean(body.text)
    assert "[REDACTED:aws-access-key-id]" in bodies[2].text  # the title, masked
    assert {f["kind"] for f in bodies[-1].json()["findings"]} == set(SECRETS)


def test_every_mcp_tool_answer_is_clean(planted: Path) -> None:
    async def scenario() -> list[str]:
        async with stdio_session("--home", str(planted)) as session:
            tools = [tool.name for tool in (await session.list_tools()).tools]
            calls = {
                "search": {"query": "deploy", "full_text": True},
                "list_sessions": {},
                "show_session": {"ref": SESSION, "limit": 20},
                "list_sources": {},
                "validate_query": {"query": "deploy"},
                "workspace_context": {"cwd": str(planted / "work" / "app")},
                "list_worktrees": {},
                "usage": {"by": "session"},  # per conversation: titles, projects
            }
            assert set(tools) <= set(calls), set(tools) - set(calls)
            answers = []
            for name in tools:
                result = await session.call_tool(name, calls[name])
                answers.append(text_of(result))
                if name == "show_session":
                    shown = json_of(result)
                    assert any("[REDACTED:" in r["text"] for r in shown["records"])
            return answers

    for answer in asyncio.run(scenario()):
        _clean(answer)
