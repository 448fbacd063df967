"""The search routes through the real app (in-process client, bearer token)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from agentdex.api import search as api
from agentdex.http.app import create_app
from test_index_fixtures import ROWS, register, store_dir, write_file

AUTH = {"Authorization": "Bearer t0ken"}


def test_search_and_conversations_routes(home: Path) -> None:
    register()
    write_file(
        store_dir(home) / "a.jsonl",
        [
            {"session": "h1", "role": "user", "kind": "prompt", "text": "http retry", "ts": 5},
            {"session": "h2", "role": "user", "kind": "prompt", "text": "other", "ts": 9},
        ],
    )
    api.refresh(home=str(home), rows=ROWS)
    client = TestClient(create_app(token="t0ken"))
    assert client.get("/api/v0/search", params={"q": "retry"}).status_code == 401
    response = client.get("/api/v0/search", params={"q": "retry", "refresh": "false"}, headers=AUTH)
    assert response.status_code == 200
    data = response.json()
    cli_shape = api.search("retry", refresh_first=False).to_json()
    assert data["results"] == cli_shape["results"]
    assert [r["ref"] for r in data["results"]] == ["h1@line:1"]
    bad = client.get("/api/v0/search", params={"q": "nope:x", "refresh": "false"}, headers=AUTH)
    assert bad.status_code == 400 and "valid fields" in bad.json()["message"]
    convs = client.get("/api/v0/conversations", params={"refresh": "false"}, headers=AUTH)
    assert [c["session_id"] for c in convs.json()["conversations"]] == ["h2", "h1"]
