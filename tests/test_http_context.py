"""The /api/v0/context endpoints through a real ASGI client, plus OpenAPI fuzzing."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentdex.api import context as api
from agentdex.http.app import create_app
from context_helpers import eventually, ts, write

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SECRET = "sk-live-THISMUSTNEVERLEAVE"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = (tmp_path / "ws").resolve()
    write(path / "AGENTS.md", "# Shop\n")
    write(
        path / ".mcp.json",
        json.dumps({"mcpServers": {"pay": {"command": "pay-mcp", "env": {"PAY_TOKEN": SECRET}}}}),
    )
    return path


@pytest.fixture
def app(ws: Path) -> FastAPI:
    application = create_app(token=TOKEN)
    application.state.context_workspace = str(ws)
    return application


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app, headers=AUTH) as test_client:
        yield test_client


def test_token_is_required(app: FastAPI) -> None:
    with TestClient(app) as anonymous:
        assert anonymous.get("/api/v0/context/snapshot").status_code == 401
        bad = anonymous.get("/api/v0/context/snapshot", headers={"Authorization": "Bearer x"})
        assert bad.status_code == 401
        assert anonymous.get("/openapi.json").status_code == 200


def test_snapshot_default_workspace_and_payload_flag(client: TestClient, ws: Path) -> None:
    plain = client.get("/api/v0/context/snapshot").json()
    assert plain["workspace"] == str(ws) and plain["resource_count"] == 2
    assert all(r["payload"] is None for r in plain["resources"])
    full = client.get("/api/v0/context/snapshot", params={"payload": 1}).json()
    agents = next(r for r in full["resources"] if r["kind"] == "instruction_file")
    assert agents["payload"] == "# Shop\n"
    assert SECRET not in json.dumps(full)


def test_snapshot_dir_parameter(client: TestClient, tmp_path: Path) -> None:
    other = (tmp_path / "other").resolve()
    write(other / "GEMINI.md", "# other\n")
    body = client.get("/api/v0/context/snapshot", params={"dir": str(other)}).json()
    assert body["workspace"] == str(other)
    assert [r["source"] for r in body["resources"]] == [str(other / "GEMINI.md")]
    missing = client.get("/api/v0/context/snapshot", params={"dir": str(tmp_path / "nope")})
    assert missing.status_code == 404 and set(missing.json()) >= {"message", "detail"}
    afile = client.get("/api/v0/context/snapshot", params={"dir": str(other / "GEMINI.md")})
    assert afile.status_code == 404  # no such directory (a file is there)


def test_resync_publishes_a_new_version(client: TestClient, ws: Path) -> None:
    first = client.get("/api/v0/context/snapshot").json()["version"]
    (ws / "AGENTS.md").write_text("# Shop v2\n")
    body = client.post("/api/v0/context/resync").json()
    # The live watcher may publish the edit first; either way the resync
    # answers with a newer version that already holds the edit.
    assert body["version"] > first
    names = {r["name"] for r in body["resources"] if r["source"].endswith("AGENTS.md")}
    assert names == {"Shop v2"}


def test_sources_crud(client: TestClient, home: Path) -> None:
    team = write(home / ".claude" / "team" / "AGENTS.md", "# team\n").parent.resolve()
    created = client.post("/api/v0/context/sources", json={"path": "~/.claude/team"})
    assert created.status_code == 201 and created.json()["path"] == str(team)
    assert client.post("/api/v0/context/sources", json={"path": str(team)}).status_code == 200
    listed = client.get("/api/v0/context/sources").json()["sources"]
    assert [s["path"] for s in listed] == [str(team)]
    one = client.get("/api/v0/context/sources/" + quote(str(team), safe=""))
    assert one.status_code == 200 and one.json()["status"] == "ok"
    assert client.get("/api/v0/context/sources" + str(team)).status_code == 200
    assert client.delete("/api/v0/context/sources/" + quote(str(team), safe="")).status_code == 204
    assert client.delete("/api/v0/context/sources/" + quote(str(team), safe="")).status_code == 404
    assert client.get("/api/v0/context/sources" + str(team)).status_code == 404


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"path": "relative"}, 400),  # malformed: the schema says so
        ({"path": "/etc"}, 403),  # well formed, refused by policy (outside the allowed roots)
        ({"path": "~/.ssh"}, 403),  # a secrets folder
        ({"path": "~/.claude/../.ssh"}, 400),
        ({"path": ""}, 400),
    ],
)
def test_bad_source_paths_are_refused(
    client: TestClient, home: Path, body: dict[str, str], status: int
) -> None:
    write(home / ".ssh" / "id_rsa", "KEY\n")
    (home / ".claude").mkdir(exist_ok=True)
    response = client.post("/api/v0/context/sources", json=body)
    assert response.status_code == status
    assert set(response.json()) >= {"message", "detail"}


@pytest.mark.parametrize(
    "raw", ["%2e%2e%2f%2e%2e%2fetc%2fpasswd", "..%2f..%2fetc", "%2Fhome%2F..%2Fetc", "a%00b"]
)
def test_encoded_traversal_in_source_path(client: TestClient, raw: str) -> None:
    for method in ("GET", "DELETE"):
        response = client.request(method, "/api/v0/context/sources/" + raw)
        assert response.status_code in (400, 404), (method, raw, response.text)


def _events(text: str) -> list[dict[str, Any]]:
    out = []
    for block in text.strip().split("\n\n"):
        data = [line[6:] for line in block.splitlines() if line.startswith("data: ")]
        if data:
            out.append(json.loads(data[0]))
    return out


def test_events_stream_each_new_version(client: TestClient, app: FastAPI, ws: Path) -> None:
    client.get("/api/v0/context/snapshot")  # start the live view
    registry = app.state.context_live
    live = registry.get(str(ws), None)

    def change_when_subscribed() -> None:
        eventually(lambda: live.subscriber_count > 0)
        write(ws / "CLAUDE.md", "# new\n")

    changer = threading.Thread(target=change_when_subscribed)
    changer.start()
    response = client.get("/api/v0/context/events", params={"max_events": 2, "timeout": 20})
    changer.join(10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = _events(response.text)
    assert [e["version"] for e in events] == [1, 2]
    assert any(r["source"] == str(ws / "CLAUDE.md") for r in events[1]["resources"])
    assert live.subscriber_count == 0  # the stream cleaned up after itself


def test_events_timeout_ends_the_stream(client: TestClient) -> None:
    response = client.get("/api/v0/context/events", params={"timeout": 0.3})
    assert len(_events(response.text)) == 1


def test_events_end_when_client_disconnects(app: FastAPI, ws: Path) -> None:
    async def run() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        first_body = asyncio.Event()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/api/v0/context/events",
            "raw_path": b"/api/v0/context/events",
            "query_string": b"timeout=60",
            "root_path": "",
            "headers": [(b"authorization", f"Bearer {TOKEN}".encode()), (b"host", b"t")],
            "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 80),
        }
        state = {"requested": False}

        async def receive() -> dict[str, Any]:
            if not state["requested"]:
                state["requested"] = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await first_body.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message["type"] == "http.response.body" and message.get("body"):
                first_body.set()

        await asyncio.wait_for(app(scope, receive, send), timeout=10)
        return sent

    sent = asyncio.run(run())
    assert sent[0]["status"] == 200
    assert b"event: snapshot" in b"".join(m.get("body", b"") for m in sent[1:])


def test_openapi_fuzz(app: FastAPI, home: Path) -> None:
    import schemathesis
    from hypothesis import HealthCheck, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    (home / ".claude").mkdir(exist_ok=True)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    schema = schema.exclude(path="/api/v0/context/events")  # streams; tested above
    schema = schema.exclude(path="/api/v0/show/events")  # streams; tests/test_http_ui_api.py
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
    ]

    from hypothesis import given

    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @given(case=operation.as_strategy())
        @settings(
            max_examples=12, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        def run(case: Any) -> None:
            case.call_and_validate(headers=AUTH, checks=checks)

        run()
    assert operations >= 6


def test_live_workspaces_are_bounded(tmp_path: Path) -> None:
    from agentdex.http.context_api import _LiveWorkspaces

    registry = _LiveWorkspaces(limit=2)
    dirs = []
    for name in ("a", "b", "c"):
        path = (tmp_path / name).resolve()
        write(path / "AGENTS.md", f"# {name}\n")
        dirs.append(str(path))
    try:
        first = registry.get(dirs[0], None)
        unsubscribe = first.subscribe(lambda _v: None)  # a streaming client holds "a"
        registry.get(dirs[1], None)
        registry.get(dirs[2], None)
        assert set(registry._items) == {dirs[0], dirs[2]}  # "b" evicted, "a" kept
        assert registry.get(dirs[0], None) is first
        unsubscribe()
    finally:
        registry.close()


@pytest.fixture
def seeded(ws: Path) -> Path:
    """``ws`` with a recorded history: "# Shop" from 10:00, "# Shop v2" from 11:00."""
    api.snapshot(str(ws), now=ts("2026-03-01T10:00:00"))
    write(ws / "AGENTS.md", "# Shop v2\nmore\n")
    api.snapshot(str(ws), now=ts("2026-03-01T11:00:00"))
    return ws


def test_history_routes_need_the_token(app: FastAPI) -> None:
    with TestClient(app) as anonymous:
        for url in (
            "/api/v0/context/snapshot?at=v1",
            "/api/v0/context/history",
            "/api/v0/context/diff?from=v1",
        ):
            assert anonymous.get(url).status_code == 401, url


def test_snapshot_at_a_past_time(client: TestClient, seeded: Path) -> None:
    then = client.get(
        "/api/v0/context/snapshot", params={"at": "2026-03-01T10:30:00Z", "payload": 1}
    )
    assert then.status_code == 200, then.text
    body = then.json()
    assert body["history"]["match"] == "in_force" and body["history"]["version"] == 1
    agents = next(r for r in body["resources"] if r["kind"] == "instruction_file")
    assert agents["payload"] == "# Shop\n"
    assert SECRET not in then.text
    live = client.get("/api/v0/context/snapshot").json()
    assert "history" not in live and live["resources"][0]["name"] == "Shop v2"


def test_snapshot_before_the_first_record(client: TestClient, seeded: Path) -> None:
    early = client.get("/api/v0/context/snapshot", params={"at": "2026-03-01T09:00:00Z"})
    assert early.status_code == 404
    assert early.json()["error"] == "NOT_FOUND" and "earliest record" in early.json()["detail"]
    after = client.get(
        "/api/v0/context/snapshot",
        params={"at": "2026-03-01T09:00:00Z", "fallback": "earliest_after"},
    ).json()
    assert after["history"]["match"] == "earliest_after" and after["history"]["note"]
    bad = client.get("/api/v0/context/snapshot", params={"at": "someday"})
    assert bad.status_code == 400 and bad.json()["error"] == "USAGE"


def test_history_and_diff(client: TestClient, seeded: Path) -> None:
    ws = seeded
    listed = client.get("/api/v0/context/history").json()
    assert [v["version"] for v in listed["versions"]] == [1, 2]
    assert listed["workspace"] == str(ws) and listed["recording"] is True
    delta = client.get("/api/v0/context/diff", params={"from": "v1", "to": "v2"})
    assert delta.status_code == 200, delta.text
    body = delta.json()
    assert body["from"]["version"] == 1 and body["to"]["version"] == 2
    (change,) = body["changed"]
    assert change["source"] == str(ws / "AGENTS.md") and "+# Shop v2\n" in change["diff"]
    gone = client.get("/api/v0/context/history", params={"dir": str(ws / "nope")})
    assert gone.status_code == 404


def test_mcp_workspace_context_at(seeded: Path) -> None:
    from agentdex.mcp.server import AgentdexMCP

    server = AgentdexMCP(cwd=str(seeded))
    then = server.call("workspace_context", {"at": "2026-03-01T10:30:00Z", "payloads": True})
    assert not then.is_error
    data = json.loads(then.content[0].text)  # type: ignore[union-attr]
    assert data["history"]["version"] == 1
    assert any(r["payload"] == "# Shop\n" for r in data["resources"])
    assert SECRET not in then.content[0].text  # type: ignore[union-attr]
    early = server.call("workspace_context", {"at": "2026-03-01T09:00:00Z"})
    assert early.is_error and "NOT_FOUND" in early.content[0].text  # type: ignore[union-attr]
