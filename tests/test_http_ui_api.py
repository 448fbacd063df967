"""The routes the web explorer uses (show, facets, sources, limits, search extras) and
the page itself (public assets, one-time login codes), through the real app on real
Claude Code transcripts in a temporary home."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agentdex.api import facets as facets_api
from agentdex.api import history, index, search, transcript
from agentdex.http.app import create_app
from agentdex.http.ui import LoginCodes
from ui_support import claude_line, transcript_path, write_lines

TOKEN = "ui-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SID = "5e1f0c3a-1111-4a2b-8c3d-000000000001"
OTHER = "5e1f0c3a-2222-4a2b-8c3d-000000000002"
NOW = time.time()


@pytest.fixture
def project(home: Path) -> Path:
    path = home / "src" / "shop"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def chats(home: Path, project: Path) -> Path:
    """Two conversations: one with a tool call, a result, reasoning and a long answer."""
    cwd = str(project)
    main_path = transcript_path(home, cwd, SID)
    write_lines(
        main_path,
        [
            claude_line(SID, 1, role="user", ts=NOW - 3600, cwd=cwd, text="add retry with backoff"),
            claude_line(SID, 2, role="assistant", ts=NOW - 3590, cwd=cwd, thinking="think retry"),
            claude_line(
                SID,
                3,
                role="assistant",
                ts=NOW - 3580,
                cwd=cwd,
                tool=("Bash", {"command": "pytest"}),
            ),
            claude_line(SID, 4, role="user", ts=NOW - 3570, cwd=cwd, result="1 failed retry"),
            claude_line(
                SID, 5, role="assistant", ts=NOW - 3560, cwd=cwd, text="retry " + "x" * 5000
            ),
        ],
    )
    write_lines(
        transcript_path(home, cwd, OTHER),
        [
            claude_line(
                OTHER,
                1,
                role="user",
                ts=NOW - 86400 * 40,
                cwd=cwd,
                text="retry old",
                branch="feat/a",
            ),
            claude_line(
                OTHER, 2, role="assistant", ts=NOW - 86400 * 40, cwd=cwd, text="old answer"
            ),
        ],
    )
    index.refresh(home=str(home))
    return main_path


@pytest.fixture
def client(home: Path) -> TestClient:
    app = create_app(token=TOKEN)
    app.state.home = str(home)
    return TestClient(app, headers=AUTH)


def test_show_route_gives_header_refs_and_cuts_long_texts(client: TestClient, chats: Path) -> None:
    ref = f"{SID}@line:4"
    data = client.get("/api/v0/show", params={"ref": ref, "max_chars": 100}).json()
    assert data["session_id"] == SID and data["agent"] == "claude-code"
    assert data["title"] == "add retry with backoff"
    assert data["branches"] == ["main"] and data["models"] == ["claude-sonnet-4-5"]
    assert data["message_count"] == len(data["records"]) == 5
    assert [r["kind"] for r in data["records"]] == [
        "prompt",
        "reasoning",
        "tool_call",
        "tool_result",
        "message",
    ]
    assert data["records"][data["focus"]]["ref"] == ref
    assert [r["position"] for r in data["records"]] == list(range(5))
    assert data["first_activity"] < data["last_activity"]
    long = data["records"][4]
    assert long["truncated"] and len(long["text"]) == 100 and long["chars"] == 5006
    assert not data["records"][0]["truncated"]
    # The same records as `agentdex show --json`, text aside.
    cli = history.show(ref)
    assert [r["locator"] for r in cli["records"]] == [r["locator"] for r in data["records"]]
    full = client.get("/api/v0/show/record", params={"ref": long["ref"]}).json()
    assert full["text"] == cli["records"][4]["text"] and not full["truncated"]


def test_show_errors_are_documented_shapes(client: TestClient, chats: Path) -> None:
    missing = client.get("/api/v0/show", params={"ref": "no-such-session"})
    assert missing.status_code == 404 and missing.json()["error"] == "NOT_FOUND"
    bare = client.get("/api/v0/show/record", params={"ref": SID})
    assert bare.status_code == 404 and "SESSION@LOCATOR" in bare.json()["message"]
    assert client.get("/api/v0/show").status_code == 400  # schema-breaking: 400, the error body
    anonymous = TestClient(client.app)
    assert anonymous.get("/api/v0/show", params={"ref": SID}).status_code == 401


def test_facets_match_search_and_give_filters(client: TestClient, chats: Path) -> None:
    data = client.get("/api/v0/facets", params={"q": "retry"}).json()
    found = search.search("retry", refresh_first=False, limit=100)
    assert data["total"] == found.stats["total"] == 5
    agents = data["facets"]["agent"]["values"]
    assert agents == [{"value": "claude-code", "count": 5, "filter": "agent:claude-code"}]
    branches = {v["value"]: v["count"] for v in data["facets"]["branch"]["values"]}
    assert branches == {"main": 4, "feat/a": 1}
    kinds = {v["value"]: v["count"] for v in data["facets"]["kind"]["values"]}
    assert kinds == {"prompt": 2, "reasoning": 1, "tool_result": 1, "message": 1}
    times = {b["filter"]: b["count"] for b in data["time"]}
    assert times["since:1d"] == 4 and times["since:30d"] == 4 and times["since:1y"] == 5
    # Every filter the facets offer selects exactly the records it counted.
    for name, facet in data["facets"].items():
        for value in facet["values"]:
            narrowed = search.search(f"retry {value['filter']}", refresh_first=False, limit=100)
            if name in ("branch", "project", "worktree"):  # substring / prefix matching
                assert narrowed.stats["total"] >= value["count"]
            else:
                assert narrowed.stats["total"] == value["count"], value
    for bucket in data["time"]:
        narrowed = search.search(f"retry {bucket['filter']}", refresh_first=False, limit=100)
        assert narrowed.stats["total"] == bucket["count"], bucket


def test_facets_count_repeated_lines_once_like_search(home: Path, project: Path) -> None:
    cwd = str(project)
    lines = [
        claude_line(SID, i, role="user", ts=NOW - 60 + i, cwd=cwd, text="same words again")
        for i in range(3)
    ]
    write_lines(transcript_path(home, cwd, SID), lines)
    index.refresh(home=str(home))
    data = facets_api.facets("same words")
    assert data["total"] == search.search("same words", refresh_first=False).stats["total"] == 1


def test_facets_bad_query_and_no_index(client: TestClient, home: Path) -> None:
    assert client.get("/api/v0/facets", params={"q": "retry"}).json()["status"] == "no-index"
    bad = client.get("/api/v0/facets", params={"q": "colour:red"})
    assert bad.status_code == 400 and "valid fields" in bad.json()["message"]
    assert client.get("/api/v0/facets", params={"q": "x", "top": 0}).status_code == 400


def test_search_highlights_and_text_flag(client: TestClient, chats: Path) -> None:
    data = client.get(
        "/api/v0/search",
        params={"q": "backoff", "refresh": "false", "highlights": "true", "text": "false"},
    ).json()
    hit = data["results"][0]
    assert "text" not in hit
    start, end = hit["highlights"][0]
    assert hit["snippet"][start:end] == "backoff"
    plain = client.get("/api/v0/search", params={"q": "backoff", "refresh": "false"}).json()
    assert "highlights" not in plain["results"][0] and plain["results"][0]["text"]


def test_sources_and_limits(client: TestClient, chats: Path, home: Path) -> None:
    data = client.get("/api/v0/sources").json()
    assert data == history.sources(str(home))
    assert {s["parse_status"] for s in data["sources"]} == {"ok"}
    quick = client.get("/api/v0/sources", params={"check": "false"}).json()
    assert "parse_status" not in quick["sources"][0]
    caps = client.get("/api/v0/limits").json()
    assert caps["context"]["max_resource_bytes"] == 64 * 1024
    assert caps["search"]["max_limit"] == search.MAX_LIMIT


def test_watch_returns_only_new_records(chats: Path, project: Path) -> None:
    watch = transcript.TranscriptWatch(SID)
    assert watch.poll() == []
    line = claude_line(SID, 6, role="assistant", ts=NOW, cwd=str(project), text="fresh words")
    write_lines(chats, [line], mode="a")
    fresh = watch.poll()
    assert [(r["text"], r["position"]) for r in fresh] == [("fresh words", 5)]
    assert watch.poll() == [] and watch.message_count == 6
    # The index was refreshed too: search sees the new message.
    assert search.search("fresh words", refresh_first=False).stats["total"] == 1


def test_events_stream_sends_hello_then_new_records(
    client: TestClient, chats: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Append only once the stream has taken its first look: on a loaded machine a fixed
    # delay could append before it, and the hello would then count the new message.
    watching = threading.Event()
    original_init = transcript.TranscriptWatch.__init__

    def init_then_signal(self: transcript.TranscriptWatch, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        watching.set()

    monkeypatch.setattr(transcript.TranscriptWatch, "__init__", init_then_signal)

    def append_later() -> None:
        assert watching.wait(20)
        time.sleep(0.2)
        line = claude_line(SID, 7, role="assistant", ts=NOW, cwd=str(project), text="live words")
        write_lines(chats, [line], mode="a")

    writer = threading.Thread(target=append_later)
    writer.start()
    response = client.get(
        "/api/v0/show/events",
        params={"ref": SID, "max_events": 1, "poll": 0.1, "timeout": 20},
    )
    writer.join()
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    body = response.text
    assert body.index("event: hello") < body.index("event: records")
    assert '"message_count":5' in body and "live words" in body


def test_page_is_public_strict_and_local(client: TestClient) -> None:
    anonymous = TestClient(client.app)
    page = anonymous.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert page.headers["referrer-policy"] == "no-referrer"
    assert "http" not in page.text.replace("http-equiv", "")  # no external asset
    script = anonymous.get("/ui/app.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert anonymous.get("/ui/../app.py").status_code in (401, 404)  # never a file
    assert anonymous.get("/ui/nope.js").status_code == 404
    assert anonymous.get("/docs").status_code in (401, 404)
    assert anonymous.get("/redoc").status_code in (401, 404)


def test_login_code_buys_the_token_once(client: TestClient) -> None:
    codes: LoginCodes = client.app.state.ui_login_codes
    code = codes.issue()
    anonymous = TestClient(client.app)
    first = anonymous.post("/ui/login", json={"code": code})
    assert first.status_code == 200 and first.json() == {"token": TOKEN}
    assert first.headers["cache-control"] == "no-store"
    again = anonymous.post("/ui/login", json={"code": code})
    assert again.status_code == 401 and "already used" in again.json()["message"]
    assert anonymous.post("/ui/login", json={"code": "guess"}).status_code == 401
    assert anonymous.post("/ui/login", content=b"not json").status_code == 401
    assert anonymous.post("/ui/login", json=["x"]).status_code == 401


def test_login_codes_expire() -> None:
    codes = LoginCodes(ttl=0.05)
    code = codes.issue()
    time.sleep(0.1)
    assert not codes.redeem(code)


def test_a_ref_whose_session_id_holds_an_at_sign_opens_at_its_record(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Aider chat ids look like ``<dir>@<time>``: ``show`` splits a REF at the first ``@``."""
    from test_sample_home_agents import render

    render(home)
    monkeypatch.setenv("AGENTDEX_PROJECT_ROOTS", str(home / "src"))
    index.refresh(home=str(home))
    hits = search.search("agent:aider", refresh_first=False, limit=100).results
    refs = [h["ref"] for h in hits if h["ref"].count("@") >= 2]
    assert refs, "the sample home has an Aider chat"
    for ref in refs:
        data = transcript.conversation(ref)
        assert data["records"][data["focus"]]["ref"] == ref
        assert transcript.record(ref)["ref"] == ref


def test_public_paths_are_the_page_only() -> None:
    from agentdex.http.ui import is_public

    assert all(map(is_public, ["/", "/ui/app.js", "/ui/login"]))
    assert not any(map(is_public, ["/api/v0/search", "/ui/a/b", "/mcp", "/uix", "/ui"]))
