"""The worktree and session HTTP API through a real client over ``create_app(token="t")``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agentdex.http.app import create_app
from conftest import git

AUTH = {"Authorization": "Bearer t"}


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(token="t")) as c:
        yield c


def test_every_route_requires_the_token(client: TestClient, git_repo: Path) -> None:
    for method, url in [
        ("GET", "/api/v0/worktrees"),
        ("POST", "/api/v0/worktrees"),
        ("DELETE", f"/api/v0/worktrees?path={git_repo}"),
        ("GET", "/api/v0/sessions"),
        ("POST", "/api/v0/sessions"),
        ("GET", "/api/v0/sessions/s-1"),
        ("PUT", "/api/v0/sessions/s-1/workdir"),
    ]:
        bare = client.request(method, url)
        wrong = client.request(method, url, headers={"Authorization": "Bearer nope"})
        assert bare.status_code == wrong.status_code == 401, (method, url)


def test_worktree_lifecycle_and_errors(client: TestClient, git_repo: Path) -> None:
    repo = {"repo": str(git_repo)}
    listed = client.get("/api/v0/worktrees", params=repo, headers=AUTH)
    assert listed.status_code == 200
    assert [w["path"] for w in listed.json()["worktrees"]] == [str(git_repo)]

    made = client.post(
        "/api/v0/worktrees",
        params=repo,
        headers=AUTH,
        json={"branch": "feat/http", "create_branch": True, "base_branch": "main"},
    )
    assert made.status_code == 201, made.text
    path = made.json()["created"]["path"]
    assert path == str(git_repo.parent / "repo-wt-feat-http")

    def post(body: dict[str, object]) -> int:
        return client.post("/api/v0/worktrees", params=repo, headers=AUTH, json=body).status_code

    assert post({"branch": "bad..name"}) == 400
    assert post({"branch": "unknown"}) == 404
    assert post({"branch": "feat/http"}) == 409
    assert post({}) == 400  # schema validation: branch is required
    assert post({"branch": "x", "base_branch": "main"}) == 400  # base needs create_branch
    Path(os.environ["AGENTDEX_CONFIG"]).write_text("[worktrees]\nmax = 1\n")
    over = client.post(
        "/api/v0/worktrees",
        params=repo,
        headers=AUTH,
        json={"branch": "x", "create_branch": True},
    )
    assert over.status_code == 409 and over.json()["error"] == "LIMIT"

    primary = client.delete(
        "/api/v0/worktrees", params={**repo, "path": str(git_repo)}, headers=AUTH
    )
    assert primary.status_code == 409  # state, not a malformed request
    Path(path, "one.txt").write_text("1")
    Path(path, "two.txt").write_text("2")
    dirty = client.delete("/api/v0/worktrees", params={**repo, "path": path}, headers=AUTH)
    assert dirty.status_code == 409
    assert dirty.json()["error"] == "WORKTREE_DIRTY" and dirty.json()["dirty_file_count"] == 2
    gone = client.delete(
        "/api/v0/worktrees", params={**repo, "path": path, "force": "true"}, headers=AUTH
    )
    assert gone.status_code == 200 and gone.json()["removed"]["path"] == path
    assert not Path(path).exists()
    missing = client.delete("/api/v0/worktrees", params={**repo, "path": path}, headers=AUTH)
    assert missing.status_code == 404


def test_default_repo_is_the_server_cwd(
    client: TestClient, git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(git_repo)
    git(git_repo, "branch", "side")
    made = client.post("/api/v0/worktrees", headers=AUTH, json={"branch": "side"})
    assert made.status_code == 201
    paths = [w["path"] for w in client.get("/api/v0/worktrees", headers=AUTH).json()["worktrees"]]
    assert paths == [str(git_repo), str(git_repo.parent / "repo-wt-side")]


def test_sessions_api(client: TestClient, tmp_path: Path, git_repo: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    empty = client.post("/api/v0/sessions", headers=AUTH, json={})
    assert empty.status_code == 201 and empty.json()["created"]["working_directory"] is None
    made = client.post(
        "/api/v0/sessions",
        headers=AUTH,
        json={"working_directory": str(tmp_path / "a"), "label": "http"},
    )
    assert made.status_code == 201
    session_id = made.json()["created"]["id"]

    moved = client.put(
        f"/api/v0/sessions/{session_id}/workdir",
        headers=AUTH,
        json={"working_directory": str(tmp_path / "b")},
    )
    assert moved.status_code == 200 and moved.json()["working_directory"] == str(tmp_path / "b")
    untouched = client.get(f"/api/v0/sessions/{empty.json()['created']['id']}", headers=AUTH)
    assert untouched.json()["working_directory"] is None

    shown = client.get(f"/api/v0/sessions/{session_id}", headers=AUTH).json()
    assert shown["label"] == "http" and [e["type"] for e in shown["events"]] == [
        "start",
        "workdir-changed",
    ]
    assert "history_available" in shown
    within = client.get("/api/v0/sessions", params={"workdir": str(tmp_path)}, headers=AUTH)
    assert [s["id"] for s in within.json()["sessions"]] == [session_id]
    everything = client.get("/api/v0/sessions", headers=AUTH).json()["sessions"]
    assert len(everything) == 2

    cleared = client.put(
        f"/api/v0/sessions/{session_id}/workdir", headers=AUTH, json={"working_directory": None}
    )
    assert cleared.status_code == 200 and cleared.json()["working_directory"] is None
    assert client.get("/api/v0/sessions/s-19990101", headers=AUTH).status_code == 404
    assert client.get("/api/v0/sessions/..%2Fx", headers=AUTH).status_code in (400, 404)
    bad_dir = client.put(
        f"/api/v0/sessions/{session_id}/workdir",
        headers=AUTH,
        json={"working_directory": str(tmp_path / "missing")},
    )
    assert bad_dir.status_code == 409 and bad_dir.json()["error"] == "NO_SUCH_DIRECTORY"
    no_body = client.put(f"/api/v0/sessions/{session_id}/workdir", headers=AUTH, json={})
    assert no_body.status_code == 400
    assert set(no_body.json()) == {"error", "message", "detail"}

    git(git_repo, "branch", "bound")
    client.post(
        "/api/v0/worktrees", params={"repo": str(git_repo)}, headers=AUTH, json={"branch": "bound"}
    )
    bound = client.post(
        "/api/v0/sessions", headers=AUTH, json={"worktree": "bound", "repo": str(git_repo)}
    )
    assert bound.status_code == 201
    assert bound.json()["created"]["worktree"] == str(git_repo.parent / "repo-wt-bound")


def test_worktree_routes_default_to_the_served_workspace(git_repo: Path) -> None:
    """Without ?repo=, the API acts on `serve --workspace`, never on the process cwd."""
    from fastapi.testclient import TestClient

    from agentdex.http.app import create_app

    app = create_app(token="t")
    app.state.context_workspace = str(git_repo)
    client = TestClient(app)
    listed = client.get("/api/v0/worktrees", headers={"Authorization": "Bearer t"})
    assert listed.status_code == 200
    assert [w["path"] for w in listed.json()["worktrees"]] == [str(git_repo)]
