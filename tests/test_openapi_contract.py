"""The OpenAPI document is a contract: a schema-driven fuzzer with every check finds nothing.

``test_schemathesis_finds_no_contract_mismatch`` runs the schemathesis CLI
(``st run --checks all``: coverage, fuzzing and stateful phases) against a
real ``agentdex serve`` on 127.0.0.1, over every operation the app serves, so
routes added later are fuzzed too. It is taught agentdex's one custom string
format (``tests/schemathesis_hooks.py``). ``/api/v0/context/events`` is left
out: it streams until its timeout (up to a day), which a fuzzer cannot wait
for; ``tests/test_http_context.py`` covers it. ``AGENTDEX_FUZZ_EXAMPLES``
(default 15) and ``AGENTDEX_FUZZ_SEED`` (default fixed; ``random`` for a new
one) tune the run.

The other tests pin the contract's rules directly, in process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from conftest import SRC_DIR

TESTS_DIR = Path(__file__).resolve().parent
AUTH = {"Authorization": "Bearer contract-token"}


def _st() -> str | None:
    beside = Path(sys.executable).with_name("st")
    return str(beside) if beside.exists() else shutil.which("st")


@pytest.mark.serial
@pytest.mark.timeout(900)
@pytest.mark.skipif(_st() is None, reason="schemathesis (the test extra) is not installed")
def test_schemathesis_finds_no_contract_mismatch(git_repo: Path, tmp_path: Path) -> None:
    _fuzz({**os.environ, "PYTHONPATH": str(SRC_DIR)}, git_repo, tmp_path)


@pytest.mark.serial
@pytest.mark.timeout(900)
@pytest.mark.skipif(_st() is None, reason="schemathesis (the test extra) is not installed")
def test_schemathesis_finds_nothing_on_a_real_shaped_home(tmp_path: Path) -> None:
    """Issue 26: the same run on real transcripts (Claude Code, Aider with its untypeable
    session ids, others), indexed first, so the routes that take a reference find some."""
    from corpus_support import render_corpus_home

    home, env = render_corpus_home(tmp_path / "home", messages=60)
    env = {**os.environ, **env, "AGENTDEX_BACKGROUND_EMBED": "0"}
    indexed = subprocess.run(
        [sys.executable, "-m", "agentdex", "index"], env=env, capture_output=True, text=True
    )
    assert indexed.returncode == 0, indexed.stderr
    _fuzz(env, home / "src" / "afi-core", tmp_path)


def _fuzz(env: dict[str, str], workspace: Path, tmp_path: Path) -> None:
    """``st run --checks all`` against ``agentdex serve`` in ``env``: nothing found."""
    command = [sys.executable, "-m", "agentdex", "serve", "--port", "0", "--json"]
    server = subprocess.Popen(
        [*command, "--workspace", str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert server.stdout is not None
        started = json.loads(server.stdout.readline())
        args = [
            _st() or "st",
            "run",
            started["openapi"],
            "--checks",
            "all",
            "--header",
            f"Authorization: Bearer {started['token']}",
            "--exclude-path",
            "/api/v0/context/events",
            "--max-examples",
            os.environ.get("AGENTDEX_FUZZ_EXAMPLES", "15"),
            "--request-timeout",
            "60",
            "--no-color",
        ]
        seed = os.environ.get("AGENTDEX_FUZZ_SEED", "16016")
        if seed != "random":
            args += ["--seed", seed]
        fuzz_env = {
            **os.environ,
            "PYTHONPATH": str(TESTS_DIR),
            "SCHEMATHESIS_HOOKS": "schemathesis_hooks",
        }
        done = subprocess.run(
            args, cwd=tmp_path, env=fuzz_env, capture_output=True, text=True, timeout=840
        )
    finally:
        server.terminate()
        server.wait(30)
    report = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, report
    assert " passed" in done.stdout and "generated" in done.stdout, report


# -- the rules, one by one -------------------------------------------------------------


@pytest.fixture
def client(home: Path, tmp_path: Path) -> TestClient:
    from agentdex.asgi import build_app

    workspace = tmp_path / "ws"
    workspace.mkdir()
    app = build_app("contract-token", home=str(home), cwd=str(workspace))
    app.state.context_workspace = str(workspace)
    return TestClient(app)


def _document(client: TestClient) -> dict[str, Any]:
    doc: dict[str, Any] = client.get("/openapi.json").json()
    return doc


def test_every_error_response_documents_the_error_body(client: TestClient) -> None:
    doc = _document(client)
    schemas = doc["components"]["schemas"]
    operations = [op for ops in doc["paths"].values() for op in ops.values()]
    assert len(operations) >= 10
    for operation in operations:
        responses = operation["responses"]
        assert "422" not in responses  # invalid input is a 400 here, never FastAPI's 422
        assert {"400", "401", "404", "409"} <= set(responses)
        for status in ("400", "404", "409"):
            ref = responses[status]["content"]["application/json"]["schema"]["$ref"]
            body = schemas[ref.rsplit("/", 1)[-1]]
            assert {"error", "message"} <= set(body["properties"]), (
                operation["operationId"],
                status,
            )
    assert "HTTPValidationError" not in schemas


def test_what_the_server_enforces_is_in_the_document(client: TestClient) -> None:
    doc = _document(client)
    search = {p["name"]: p["schema"] for p in doc["paths"]["/api/v0/search"]["get"]["parameters"]}
    assert search["q"]["format"] == "agentdex-query" and search["q"]["minLength"] == 1
    assert search["sort"]["enum"] == ["relevance", "time"]
    schemas = doc["components"]["schemas"]
    new_session = schemas["NewSessionBody"]
    assert new_session["not"] == {"required": ["working_directory", "worktree"]}
    assert new_session["additionalProperties"] is False
    add = schemas["AddWorktreeBody"]
    assert add["then"]["properties"]["create_branch"] == {"const": True}
    assert "pattern" in add["properties"]["branch"]
    show = doc["paths"]["/api/v0/sessions/{session_id}"]["get"]["parameters"][0]
    assert show["schema"]["pattern"].startswith("^[A-Za-z0-9-]+")


def test_schema_breaking_requests_are_400_with_the_error_body(client: TestClient) -> None:
    cases = [
        client.post("/api/v0/sessions", headers=AUTH),  # no body
        client.post("/api/v0/sessions", headers=AUTH, content=b"\x00{"),
        client.post(
            "/api/v0/sessions", headers=AUTH, json={"working_directory": "/", "worktree": "x"}
        ),
        client.post("/api/v0/sessions", headers=AUTH, json={"surprise": 1}),
        client.get("/api/v0/sessions/has%20space", headers=AUTH),
        client.get("/api/v0/search", params={"q": " "}, headers=AUTH),
        client.get("/api/v0/search", params={"q": "x", "sort": "sideways"}, headers=AUTH),
        client.post("/api/v0/worktrees", headers=AUTH, json={"branch": "a..b"}),
        client.delete("/api/v0/worktrees", params={"path": "/a/../b"}, headers=AUTH),
        client.get("/api/v0/worktrees", params={"repo": "a\x01b"}, headers=AUTH),
    ]
    for response in cases:
        assert response.status_code == 400, (response.request.url, response.text)
        body = response.json()
        assert body["error"] == "USAGE" and body["message"], body


def test_every_time_the_schema_allows_is_taken_and_no_other(client: TestClient) -> None:
    """``at``/``from``: the schema's pattern states every accepted form of a time (``at=0``
    used to be valid by the schema and refused by the server)."""
    import re

    doc = _document(client)
    snapshot = doc["paths"]["/api/v0/context/snapshot"]["get"]["parameters"]
    schema = next(p["schema"] for p in snapshot if p["name"] == "at")
    pattern = re.compile(
        next(s["pattern"] for s in schema.get("anyOf", [schema]) if "pattern" in s)
    )
    diff = doc["paths"]["/api/v0/context/diff"]["get"]["parameters"]
    assert next(p for p in diff if p["name"] == "from")["schema"]["pattern"] == pattern.pattern
    taken = [
        *("now", "today", "yesterday", "v1", "v0", "30m", "1.5h", "7d", "2w", "1y", "10s"),
        *("5min", "2026-01-31", "2024-02-29", "2026-01-31T09:30Z", "2026-01-31 09:30:00.123"),
        *("2026-01-31T09:30:00+02:00", "0001-01-01", "9999-12-31T23:59-01:00"),
    ]
    refused = [
        *("0", "v", "tomorrow", "2026-02-30", "2025-02-29", "2026-13-01", "7 d", "-1d", "1.d"),
        *("2026-01-31T24:00", "0000-01-01", "2026-1-3", "now\n", "V1x", "2026-01-31T09:30+2"),
    ]
    for value in taken + refused:
        allowed = pattern.search(value) is not None
        assert allowed == (value in taken), value
        response = client.get("/api/v0/context/snapshot", params={"at": value}, headers=AUTH)
        assert response.status_code in ((200, 404) if allowed else (400,)), (value, response.text)


def test_a_malformed_query_is_a_documented_400(client: TestClient) -> None:
    response = client.get("/api/v0/search", params={"q": '"open'}, headers=AUTH)
    assert response.status_code == 400 and "quote" in response.json()["message"]


def test_state_not_input_decides_409_and_403(
    client: TestClient, tmp_path: Path, home: Path
) -> None:
    from agentdex.api import sessions

    first = sessions.new_session()["id"]
    second = sessions.new_session()["id"]
    prefix = first[: next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)]
    ambiguous = client.get(f"/api/v0/sessions/{prefix}", headers=AUTH)
    assert ambiguous.status_code == 409 and ambiguous.json()["error"] == "CONFLICT"
    refused = client.post("/api/v0/context/sources", headers=AUTH, json={"path": "/etc"})
    assert refused.status_code == 403 and refused.json()["error"] == "FORBIDDEN"
    assert "allowed" in refused.json()["message"]
    missing = client.post(
        "/api/v0/context/sources", headers=AUTH, json={"path": str(tmp_path / "ws" / "nope.md")}
    )
    assert missing.status_code == 404


def test_method_not_allowed_names_the_documented_methods(client: TestClient) -> None:
    doc = _document(client)
    for url, path in (
        ("/api/v0/context/sources/etc", "/api/v0/context/sources/{path}"),
        ("/api/v0/sessions", "/api/v0/sessions"),
        ("/api/v0/worktrees", "/api/v0/worktrees"),
    ):
        response = client.request("OPTIONS", url, headers=AUTH)
        assert response.status_code == 405
        allowed = sorted(m.strip() for m in response.headers["allow"].split(","))
        assert allowed == sorted(m.upper() for m in doc["paths"][path]), url
        assert response.json()["error"] == "METHOD_NOT_ALLOWED"


def test_http_search_uses_the_served_home(client: TestClient, home: Path) -> None:
    """``serve --home`` reaches the HTTP routes too (they ignored it before)."""
    assert client.app.state.home == str(home)  # type: ignore[attr-defined]
