"""The archive from the outside: real Claude Code transcripts in a temporary home, the real
``agentdex`` CLI in subprocesses, the HTTP app and the MCP server.

A transcript that is truncated and another that is deleted stay searchable and shown
(``source_gone``) on every surface; ``archive``, ``archive export``, ``archive prune``
and ``forget`` keep their JSON and exit codes (docs/json-output.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agentdex.config import load_config
from agentdex.errors import ConfigError
from agentdex.http.app import create_app
from mcp_support import SRC_DIR, json_of, stdio_session, write_claude_session

AUTH = {"Authorization": "Bearer t0ken"}
TURNS = [
    ("user", "why is the quokka checkout test flaky"),
    ("assistant", "the quokka test races the payment mock"),
    ("user", "add a retry with backoff to the quokka test"),
    ("assistant", "added exponential backoff, three quokka attempts"),
]


@pytest.fixture
def histories(home: Path, run_cli: Callable[..., Any]) -> dict[str, Path]:
    """Two indexed transcripts; then one is truncated to its first exchange, one deleted."""
    cwd = home / "src" / "shop"
    cwd.mkdir(parents=True)
    kept = write_claude_session(home, "aaaa1111-trunc", cwd, TURNS)
    lost = write_claude_session(home, "bbbb2222-gone", cwd, [("user", "quokka deploy notes")])
    assert run_cli("index", "--json").returncode == 0
    lines = kept.read_text().splitlines(keepends=True)
    kept.write_text("".join(lines[:2]))
    lost.unlink()
    indexed = run_cli("index", "--json")
    assert indexed.returncode == 0, indexed.stderr
    return {"kept": kept, "lost": lost, "cwd": cwd, "lines": lines}  # type: ignore[dict-item]


def data(result: Any) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_search_sessions_and_show_mark_what_only_the_archive_holds(
    histories: dict[str, Any], run_cli: Callable[..., Any]
) -> None:
    found = data(run_cli("search", "quokka", "--json", "--limit", "20", "--sort", "time"))
    marks = {r["text"]: (r["source_gone"], r["source_path"]) for r in found["results"]}
    kept, lost = str(histories["kept"]), str(histories["lost"])
    assert marks == {
        TURNS[0][1]: (False, kept),
        TURNS[1][1]: (False, kept),
        TURNS[2][1]: (True, kept),
        TURNS[3][1]: (True, kept),
        "quokka deploy notes": (True, lost),
    }
    sessions = data(run_cli("conversations", "--json"))["conversations"]
    assert {c["session_id"]: c["source_gone"] for c in sessions} == {
        "aaaa1111-trunc": True,
        "bbbb2222-gone": True,
    }
    shown = data(run_cli("show", "aaaa1111-trunc", "--json"))
    assert [(r["text"], r["source_gone"]) for r in shown["records"]] == [
        (TURNS[0][1], False),
        (TURNS[1][1], False),
        (TURNS[2][1], True),
        (TURNS[3][1], True),
    ]
    human = run_cli("show", "aaaa1111-trunc")
    assert human.returncode == 0 and human.stdout.count("source gone") == 2
    listed = run_cli("conversations")  # piped: one line per conversation, the title marked
    assert listed.stdout.count("(source gone)") == 2
    on_terminal = _on_tty(["search", "quokka deploy", "--no-pager"])
    assert b"source gone" in on_terminal
    gone = data(run_cli("show", "bbbb2222-gone", "--json"))
    assert [r["source_gone"] for r in gone["records"]] == [True]


def test_resume_refuses_a_conversation_the_agent_no_longer_has(
    histories: dict[str, Any], run_cli: Callable[..., Any]
) -> None:
    refused = run_cli("resume", "bbbb2222-gone", "--json")
    assert refused.returncode == 8  # unsupported, the JSON still says why
    gone = json.loads(refused.stdout)
    assert gone["supported"] is False and "no longer has this conversation" in gone["reason"]
    kept = data(run_cli("resume", "aaaa1111-trunc", "--json"))  # its file still exists
    assert kept["supported"] is True


def test_archive_status_and_export(
    histories: dict[str, Any], run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    status = data(run_cli("archive", "--json"))
    assert status["enabled"] is True and status["path"].endswith("/archive")
    assert status["records"] == 5 and status["conversations"] == 2
    assert status["source_gone"] == {"records": 3, "conversations": 2}
    assert status["raw_lines"] == 3  # the three prompts' source lines
    assert status["bytes"] > 0 and status["index_bytes"] > 0
    [agent] = status["agents"]
    assert agent["agent"] == "claude-code" and 0 < agent["stored_bytes"] <= status["bytes"]
    assert "claude-code" in run_cli("archive").stdout
    out = tmp_path / "archive.jsonl"
    summary = data(run_cli("archive", "export", "-o", str(out), "--json"))
    assert summary["records"] == 5 and summary["path"] == str(out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    by_text = {r["text"]: r for r in rows}
    prompt = by_text[TURNS[2][1]]
    assert prompt["source_gone"] is True
    assert prompt["raw"] == histories["lines"][2].rstrip("\n")  # the line as the agent wrote it
    assert "raw" not in by_text[TURNS[1][1]]  # replies keep their text only
    only = data(run_cli("archive", "export", "-o", str(out), "--session", "bbbb", "--json"))
    assert only["records"] == 1
    to_stdout = run_cli("archive", "export", "-o", "-", "--agent", "codex")
    assert to_stdout.returncode == 0 and to_stdout.stdout == ""
    assert run_cli("archive", "export", "-o", str(tmp_path), "--json").returncode == 2
    assert run_cli("archive", "export", "-o", str(out), "--since", "someday").returncode == 2


def test_forget_exit_codes_json_and_show(
    histories: dict[str, Any], run_cli: Callable[..., Any]
) -> None:
    assert run_cli("forget").returncode == 2
    assert run_cli("forget", "x", "--session", "y").returncode == 2
    missing = run_cli("forget", "--session", "nope", "--json")
    assert missing.returncode == 3 and "no indexed or archived conversation" in missing.stderr
    refused = run_cli("forget", "aaaa1111", "--json", input="")  # cannot ask: refuses
    assert refused.returncode == 2 and "add --yes to confirm" in refused.stderr
    assert json.loads(refused.stdout)["error"]["code"] == "USAGE"
    assert run_cli("show", "aaaa1111").returncode == 0  # nothing was forgotten
    result = data(run_cli("forget", "aaaa1111", "--yes", "--json", input=""))
    assert result["forgotten"] == [
        {
            "agent": "claude-code",
            "session_id": "aaaa1111-trunc",
            "title": None,
            "index_records": 4,
            "archive_records": 4,
        }
    ]
    assert result["index_records_removed"] == 4 and result["archive_records_removed"] == 4
    shown = run_cli("show", "aaaa1111-trunc")  # its file still exists: agentdex never edits it
    assert shown.returncode == 3 and "forgotten" in shown.stderr
    again = data(run_cli("index", "--json"))
    assert again["refresh"]["records_added"] == 0
    found = data(run_cli("search", "quokka", "--json"))["results"]
    assert [r["session_id"] for r in found] == ["bbbb2222-gone"]
    status = data(run_cli("archive", "--json"))
    assert status["forgotten"] == 1 and status["records"] == 1


def test_prune_keeps_what_the_agent_still_has(
    histories: dict[str, Any], run_cli: Callable[..., Any]
) -> None:
    pruned = data(run_cli("archive", "prune", "--older-than", "0d", "--json"))
    assert pruned["records_removed"] == 3 and pruned["records_kept_live"] == 2
    assert sorted(c["session_id"] for c in pruned["conversations"]) == [
        "aaaa1111-trunc",
        "bbbb2222-gone",
    ]
    found = data(run_cli("search", "quokka", "--json", "--limit", "20"))["results"]
    assert sorted(r["text"] for r in found) == sorted([TURNS[0][1], TURNS[1][1]])
    assert all(not r["source_gone"] for r in found)
    assert run_cli("archive", "prune", "--older-than", "soon").returncode == 2


def test_forget_asks_on_a_terminal(histories: dict[str, Any]) -> None:
    def forget_on_tty(answer: bytes) -> int:
        main, replica = pty.openpty()
        env = dict(os.environ)
        env["PYTHONPATH"] = str(SRC_DIR)
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentdex", "forget", "bbbb2222-gone"],
            stdin=replica,
            stdout=replica,
            stderr=replica,
            env=env,
        )
        os.close(replica)
        seen = b""
        deadline = time.monotonic() + 60
        while b"[y/N]" not in seen and time.monotonic() < deadline:
            try:
                seen += os.read(main, 1024)
            except OSError:
                break
        assert b"bbbb2222-gone" in seen  # what would be forgotten is listed first
        os.write(main, answer)
        code = proc.wait(timeout=60)
        os.close(main)
        return code

    assert forget_on_tty(b"n\n") == 1
    assert "quokka deploy notes" in _texts()
    assert forget_on_tty(b"y\n") == 0
    assert "quokka deploy notes" not in _texts()


def _on_tty(args: list[str]) -> bytes:
    """What ``agentdex ARGS`` prints on a terminal (a pseudo-terminal)."""
    main, replica = pty.openpty()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC_DIR)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentdex", *args],
        stdin=replica,
        stdout=replica,
        stderr=replica,
        env=env,
    )
    os.close(replica)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break  # the child closed the terminal
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=60)
    os.close(main)
    return seen


def _texts() -> list[str]:
    from agentdex.api import search as api

    return [r["text"] for r in api.search("quokka", refresh_first=False, limit=50).results]


def test_http_and_mcp_say_source_gone(histories: dict[str, Any], home: Path) -> None:
    client = TestClient(create_app(token="t0ken"))
    assert client.get("/api/v0/archive").status_code == 401
    status = client.get("/api/v0/archive", headers=AUTH)
    assert status.status_code == 200 and status.json()["source_gone"]["records"] == 3
    found = client.get(
        "/api/v0/search", params={"q": "deploy notes", "refresh": "false"}, headers=AUTH
    ).json()
    assert [r["source_gone"] for r in found["results"]] == [True]
    listed = client.get("/api/v0/conversations", params={"refresh": "false"}, headers=AUTH)
    assert all(c["source_gone"] for c in listed.json()["conversations"])
    exported = client.get(
        "/api/v0/export/aaaa1111-trunc", params={"format": "json"}, headers=AUTH
    ).json()
    assert [r["source_gone"] for r in exported["records"]] == [False, False, True, True]

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with stdio_session("--home", str(home)) as session:
            searched = json_of(await session.call_tool("search", {"query": "deploy notes"}))
            sessions = json_of(await session.call_tool("list_sessions", {}))
            shown = json_of(
                await session.call_tool("show_session", {"ref": "aaaa1111-trunc", "limit": 10})
            )
            return searched, sessions, shown

    searched, sessions, shown = asyncio.run(scenario())
    assert [r["source_gone"] for r in searched["results"]] == [True]
    assert all(c["source_gone"] for c in sessions["conversations"])
    assert [r["source_gone"] for r in shown["records"]] == [False, False, True, True]


def test_the_config_switch(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("archive = false\n[index]\npath = '/x'\n")
    assert load_config(config).archive is False
    config.write_text("[index]\narchive = false\n")
    assert load_config(config).archive is False
    config.write_text("")
    assert load_config(config).archive is True
    config.write_text('archive = "no"\n')
    with pytest.raises(ConfigError, match="archive"):
        load_config(config)


def _index_copies(word: str) -> list[str]:
    """Where the index's own files still hold ``word``: raw bytes of every file, each text
    block decompressed, and tantivy's term dictionary (deleted documents included)."""
    import sqlite3

    from agentdex.index import postings
    from agentdex.index.segments import BLOCK_ROW, blocks_in
    from agentdex.index.store import index_root

    needle = word.encode()
    found = []
    root = index_root()
    for path in sorted(root.rglob("*")):
        if path.is_file() and needle in path.read_bytes():
            found.append(str(path.relative_to(root)))
    for gen in sorted(root.glob("gen-*")):
        blocks = (gen / "text.blocks").read_bytes()
        db = sqlite3.connect(gen / "index.db")
        rows = db.execute(f"SELECT {BLOCK_ROW} FROM blocks").fetchall()
        db.close()
        for (offset, *_), block in zip(rows, blocks_in(blocks, rows), strict=True):
            if needle in block.lower:
                found.append(f"{gen.name}/text.blocks@{offset}")
        if any(term == word for term, _ in postings.all_terms(gen / "postings", ())):
            found.append(f"{gen.name}/postings terms")
    return found


def test_forget_purge_leaves_no_copy_in_the_index_files(
    histories: dict[str, Any], run_cli: Callable[..., Any]
) -> None:
    """Without --purge the bytes stay until a rebuild (as docs/archive.md says); with it,
    no file of the index (nor the archive beside it) holds the forgotten words."""
    assert _index_copies("exponential")  # the truncated transcript's archived reply
    plain = run_cli("forget", "aaaa1111", "--yes")
    assert plain.returncode == 0 and "--purge" in plain.stderr
    assert _index_copies("exponential"), "expected the documented leftover before a rebuild"
    assert run_cli("search", "exponential").returncode == 1  # gone from every answer
    purged = data(run_cli("forget", "bbbb2222", "--purge", "--yes", "--json"))
    assert purged["purged"] is True and purged["records_after_purge"] == 0
    assert purged["index_records_removed"] == 1
    for word in ("exponential", "races", "deploy"):
        assert _index_copies(word) == [], word
