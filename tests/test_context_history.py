"""Context history: recording on change, dedup, lookups in time, diffs, secrets, fast path.

Real temporary workspaces whose files change; times are injected (``now=``)
instead of sleeping, so "10:00" and "11:00" are exact.
"""

from __future__ import annotations

import json
import os
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import context as api
from agentdex.api import context_history as history
from agentdex.context import fingerprint, recording
from agentdex.context.history import HistoryStore, history_path
from agentdex.context.resolver import resolve
from agentdex.context.sources import scan_roots
from agentdex.errors import NotFoundError, UsageError
from context_helpers import eventually, ts, write

T10, T11, T12, T13 = (ts(f"2026-03-01T{h}:00:00") for h in (10, 11, 12, 13))
LATER = ts("2026-03-02T00:00:00")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = (tmp_path / "shop").resolve()
    write(path / "AGENTS.md", "# Shop\nUse tabs.\n")
    return path


def record(ws: Path, at: float) -> dict[str, Any]:
    return api.snapshot(str(ws), now=at)


def db_rows(table: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(history_path()) as db:
        return db.execute(f"SELECT * FROM {table}").fetchall()


def objects(kind: str) -> list[bytes]:
    with sqlite3.connect(history_path()) as db:
        rows = db.execute("SELECT data FROM objects WHERE kind = ?", (kind,)).fetchall()
    return [zlib.decompress(data) for (data,) in rows]


def test_records_only_changes_and_answers_in_force(ws: Path) -> None:
    record(ws, T10)
    record(ws, T11)  # same content: no new version, last_seen moves
    write(ws / "AGENTS.md", "# Shop\nUse spaces.\n")
    record(ws, T12)
    listing = history.versions(str(ws), now=LATER)
    assert [v["version"] for v in listing["versions"]] == [1, 2]
    first, second = listing["versions"]
    assert first["recorded_at"].startswith("2026-03-01T10:00:00")
    assert first["last_seen_at"].startswith("2026-03-01T11:00:00")
    assert second["changes"] == {"added": 0, "removed": 0, "changed": 1}

    def text_at(when: str) -> str:
        snap = history.snapshot_at(str(ws), when, payload=True, now=LATER)
        assert snap["history"]["match"] == "in_force"
        return str(snap["resources"][0]["payload"])

    assert text_at("2026-03-01T10:30:00Z") == "# Shop\nUse tabs.\n"
    assert text_at("2026-03-01T11:59:59Z") == "# Shop\nUse tabs.\n"
    assert text_at("2026-03-01T12:00:00Z") == "# Shop\nUse spaces.\n"
    assert text_at("v1") == "# Shop\nUse tabs.\n"
    # the recorded snapshot has the live snapshot's shape and hash
    live = api.snapshot(str(ws))
    then = history.snapshot_at(str(ws), "now")
    assert then["aggregate_hash"] == live["aggregate_hash"]
    assert {k for k in then if k != "history"} == set(live)
    assert then["resources"] == live["resources"]


def test_same_text_is_stored_once(ws: Path, tmp_path: Path) -> None:
    other = write(tmp_path / "twin" / "CLAUDE.md", "# Shop\nUse tabs.\n").parent
    record(ws, T10)
    record(other, T10)
    write(ws / "AGENTS.md", "# Shop\nchanged\n")
    record(ws, T11)
    write(ws / "AGENTS.md", "# Shop\nUse tabs.\n")  # back to the first text
    record(ws, T12)
    bodies = objects("body")
    assert sorted(bodies) == [b"# Shop\nUse tabs.\n", b"# Shop\nchanged\n"]
    assert len(history.versions(str(ws), now=LATER)["versions"]) == 3
    # v1 and v3 are the same content: the same entry objects, one copy each
    with HistoryStore() as store:
        v1, _, v3 = store.versions(str(ws))
    assert v1.entry_hashes == v3.entry_hashes


def test_before_the_first_record(ws: Path) -> None:
    record(ws, T11)
    with pytest.raises(NotFoundError) as info:
        history.snapshot_at(str(ws), "2026-03-01T10:00:00Z", now=LATER)
    assert "at or before 2026-03-01T10:00:00" in info.value.message
    assert info.value.detail == "earliest record: 2026-03-01T11:00:00.000Z"
    later = history.snapshot_at(str(ws), "2026-03-01T10:00:00Z", fallback_after=True, now=LATER)
    assert later["history"]["match"] == "earliest_after"
    assert "no context was recorded" in later["history"]["note"]
    assert later["history"]["recorded_at"].startswith("2026-03-01T11:00")


def test_out_of_order_observations_keep_the_timeline(ws: Path) -> None:
    record(ws, T12)  # content A seen at 12
    write(ws / "AGENTS.md", "# B\n")
    record(ws, T10)  # content B seen earlier (a late writer): a version before A
    write(ws / "AGENTS.md", "# Shop\nUse tabs.\n")
    record(ws, T11)  # A again at 11: A's version now starts at 11, not repeated
    versions = history.versions(str(ws), now=LATER)["versions"]
    assert [(v["recorded_at"][11:16], v["resource_count"]) for v in versions] == [
        ("10:00", 1),
        ("11:00", 1),
    ]
    names = [
        history.snapshot_at(str(ws), f"v{v['version']}")["resources"][0]["name"] for v in versions
    ]
    assert names == ["B", "Shop"]


def test_diff_between_times(ws: Path) -> None:
    write(ws / ".mcp.json", json.dumps({"mcpServers": {"docs": {"command": "d"}}}))
    write(ws / "skills" / "deploy" / "SKILL.md", "---\nname: deploy\n---\nDeploy carefully.\n")
    record(ws, T10)
    write(ws / "AGENTS.md", "# Shop\nUse spaces.\nNever push on Friday.\n")
    write(
        ws / ".mcp.json",
        json.dumps({"mcpServers": {"docs": {"command": "d"}, "pay": {"url": "u"}}}),
    )
    (ws / "skills" / "deploy" / "SKILL.md").unlink()
    write(ws / "CLAUDE.md", "# Claude rules\n")
    record(ws, T11)
    delta = history.diff(str(ws), "2026-03-01T10:30:00Z", "2026-03-01T11:30:00Z", now=LATER)
    assert (delta["from"]["version"], delta["to"]["version"]) == (1, 2)
    assert delta["identical"] is False
    assert [r["source"] for r in delta["added"]] == [str(ws / "CLAUDE.md")]
    assert [r["source"] for r in delta["removed"]] == [str(ws / "skills" / "deploy" / "SKILL.md")]
    changed = {c["source"]: c for c in delta["changed"]}
    agents = changed[str(ws / "AGENTS.md")]
    assert "-Use tabs.\n" in agents["diff"] and "+Never push on Friday.\n" in agents["diff"]
    assert agents["diff"].startswith(f"--- {ws / 'AGENTS.md'} @ v1\n+++ {ws / 'AGENTS.md'} @ v2\n")
    mcp = changed[str(ws / ".mcp.json")]
    assert mcp["diff"] is None and "metadata only" in mcp["diff_note"]
    assert mcp["fields"]["servers"] == {"from": ["docs"], "to": ["docs", "pay"]}
    same = history.diff(str(ws), "v2", "now", now=LATER)
    assert same["identical"] and not (same["added"] or same["removed"] or same["changed"])


def test_bad_times_and_paths(ws: Path, tmp_path: Path) -> None:
    record(ws, T10)
    with pytest.raises(UsageError):
        history.snapshot_at(str(ws), "last tuesday")
    with pytest.raises(NotFoundError):
        history.snapshot_at(str(ws), "v9")
    with pytest.raises(UsageError):
        history.versions(str(ws / "AGENTS.md"))
    with pytest.raises(NotFoundError):
        history.versions(str(tmp_path / "never-existed"))


def test_history_outlives_the_workspace(ws: Path) -> None:
    record(ws, T10)
    (ws / "AGENTS.md").unlink()
    ws.rmdir()
    snap = history.snapshot_at(str(ws), "2026-03-01T10:00:00Z", payload=True)
    assert snap["resources"][0]["payload"] == "# Shop\nUse tabs.\n"
    assert history.versions(str(ws))["total"] == 1


SECRET_ENV = "sk-env-NEVER-STORED-1"
SECRET_MCP = "sk-mcp-NEVER-STORED-2"
SECRET_TOML = "sk-toml-NEVER-STORED-3"


def test_secrets_never_reach_the_history(ws: Path, home: Path) -> None:
    write(ws / ".env", f"API_KEY={SECRET_ENV}\n")
    os.symlink(ws / ".env", ws / "CLAUDE.md")  # named like an instruction file, points at .env
    write(
        ws / ".mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "pay": {
                        "command": "pay",
                        "args": ["--token", SECRET_MCP],
                        "env": {"PAY_TOKEN": SECRET_MCP},
                    }
                }
            }
        ),
    )
    write(
        ws / ".codex" / "config.toml",
        f'[mcp_servers.gh]\ncommand = "gh"\nenv = {{ GH_TOKEN = "{SECRET_TOML}" }}\n',
    )
    record(ws, T10)
    snap = history.snapshot_at(str(ws), "now", payload=True)
    kinds = {r["source"]: (r["kind"], r["status"]) for r in snap["resources"]}
    assert kinds[str(ws / "CLAUDE.md")] == ("instruction_file", "invalid")
    assert kinds[str(ws / ".mcp.json")] == ("mcp_config", "ok")
    stored = b"".join(objects("body") + objects("entry") + objects("roots"))
    stored += repr(db_rows("versions") + db_rows("workspaces")).encode()
    for name in os.listdir(history_path().parent):  # raw files too (db, -wal)
        stored += (history_path().parent / name).read_bytes()
    for secret in (SECRET_ENV, SECRET_MCP, SECRET_TOML):
        assert secret.encode() not in stored
    assert b"pay" in b"".join(objects("entry"))  # the server name is there, the value is not


def test_recording_off_by_config(ws: Path) -> None:
    Path(os.environ["AGENTDEX_CONFIG"]).write_text("[context]\nhistory = false\n")
    api.snapshot(str(ws), now=T10)
    assert not history_path().exists()
    assert history.versions(str(ws))["recording"] is False
    with pytest.raises(NotFoundError):
        history.snapshot_at(str(ws), "now")


def test_a_corrupt_history_never_breaks_the_snapshot(ws: Path) -> None:
    history_path().parent.mkdir(parents=True)
    history_path().write_bytes(b"this is not a database" * 100)
    heard: list[str] = []
    snap = api.snapshot(str(ws), warn=heard.append)
    assert snap["resource_count"] == 1
    assert heard and "context history not recorded" in heard[0]


RESOLVES = [0]


def counted_resolve(*args: Any, **kwargs: Any) -> Any:
    RESOLVES[0] += 1
    return resolve(*args, **kwargs)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Trust fingerprints of files written just now, and count real resolves."""
    monkeypatch.setattr(fingerprint, "RACY_SECONDS", 0.0)
    RESOLVES[0] = 0
    return RESOLVES


def observe(ws: Path, at: float) -> recording.Observation:
    with HistoryStore() as store:
        roots = scan_roots(str(ws))
        return recording.observe(
            store,
            str(ws),
            roots,
            history.DEFAULT_LIMITS,
            at=at,
            recorded_by="t",
            resolver=counted_resolve,
        )


def test_unchanged_workspaces_are_not_resolved(ws: Path, counting: list[int]) -> None:
    assert observe(ws, T10).status == "recorded" and counting[0] == 1
    again = observe(ws, T11)
    assert (again.status, again.resolved, counting[0]) == ("unchanged", False, 1)
    assert history.versions(str(ws), now=T11)["versions"][0]["last_seen_at"][:13] == "2026-03-01T11"
    write(ws / "AGENTS.md", "# Shop\nedited\n")  # an edit changes the file's stat
    assert observe(ws, T12).status == "recorded" and counting[0] == 2
    write(ws / "deep" / "er" / "GEMINI.md", "# new\n")  # a new dir changes the walked dir
    assert observe(ws, T13).status == "recorded" and counting[0] == 3
    write(ws / "notes.txt", "unrelated\n")  # a new entry: resolved, but nothing new recorded
    seen = observe(ws, LATER)
    assert (seen.status, seen.resolved) == ("unchanged", True)
    (ws / "AGENTS.md").chmod(0o000)  # a chmod changes the ctime only
    try:
        assert observe(ws, LATER + 1).resolved
    finally:
        (ws / "AGENTS.md").chmod(0o644)


def test_racy_fingerprints_are_not_trusted(ws: Path) -> None:
    # files written less than RACY_SECONDS before the resolve: the next check resolves again
    assert observe(ws, T10).status == "recorded"
    assert observe(ws, T11).resolved is True


def conversation(cwd: str | None, when: str | None, project: str | None = None) -> dict[str, Any]:
    record = {"cwd": cwd, "timestamp": when, "text": "hi"}
    return {"session_id": "s", "project": project, "records": [record]}


def test_conversation_context_prefers_a_version_in_force(ws: Path, tmp_path: Path) -> None:
    record(ws, T10)
    sub = ws / "sub"
    sub.mkdir()
    # nothing recorded for the cwd itself, but the project has a version in force then
    found = history.conversation_context(
        conversation(str(sub), "2026-03-01T10:30:00.000Z", project=str(ws)), now=LATER
    )
    assert (found["workspace"], found["match"]) == (str(ws), "in_force")
    assert found["snapshot"]["history"]["version"] == 1
    none = history.conversation_context(conversation(None, "2026-03-01T10:30:00.000Z"))
    assert none["match"] == "none" and none["snapshot"] is None
    untimed = history.conversation_context(conversation(str(ws), None))
    assert untimed["match"] == "none" and "no timestamps" in untimed["note"]


def test_the_live_watcher_records_each_change(ws: Path) -> None:
    clock = iter([T10, T11, T12, T13, LATER])
    with api.watch(str(ws), debounce=0.05, clock=lambda: next(clock, LATER)) as live:
        version = live.version
        write(ws / "AGENTS.md", "# Shop\nwatched edit\n")
        assert live.wait(version, timeout=10) is not None

        def recorded() -> list[Any]:
            with HistoryStore(create=False) as store:  # read only: no refresh of its own
                return store.versions(str(ws))

        found = eventually(lambda: len(recorded()) == 2 and recorded())
    assert [v.recorded_by for v in found] == ["watch", "watch"]
    assert found[0].first_seen == T10
    now = history.snapshot_at(str(ws), "now", payload=True)
    assert now["resources"][0]["payload"] == "# Shop\nwatched edit\n"
