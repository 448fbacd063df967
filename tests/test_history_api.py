"""sources / show / audit over real store files in a temporary home."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdex import catalogue
from agentdex.api import history
from agentdex.catalogue import StoreRow
from agentdex.discovery import roots
from agentdex.errors import ConflictError, NotFoundError
from agentdex.parsers import _registry
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics
from agentdex.records import Record

SESSION = "5d0c2b1e-1111-4222-8333-444455556666"


def _claude_line(kind: str, text: str, ts: str, **extra: object) -> str:
    line = {
        "type": kind,
        "sessionId": SESSION,
        "cwd": "/work/shop",
        "timestamp": ts,
        "uuid": f"u-{ts}",
        "message": {"role": kind, "content": text},
        **extra,
    }
    return json.dumps(line)


@pytest.fixture
def claude_home(home: Path) -> Path:
    project = home / ".claude/projects/-work-shop"
    project.mkdir(parents=True)
    (project / f"{SESSION}.jsonl").write_text(
        "\n".join(
            [
                _claude_line("user", "fix the flaky checkout test", "2026-11-20T10:00:00Z"),
                _claude_line("assistant", "Adding retry with backoff.", "2026-11-20T10:00:05Z"),
                _claude_line("user", "now run it", "2026-11-20T10:01:00Z"),
            ]
        )
        + "\n"
    )
    (home / ".claude/history.jsonl").write_text(
        json.dumps(
            {
                "display": "fix the flaky checkout test",
                "timestamp": 1795168800000,
                "project": "/work/shop",
                "sessionId": SESSION,
            }
        )
        + "\n"
    )
    return home


def test_sources_lists_files_with_parse_status(claude_home: Path) -> None:
    (claude_home / ".claude/projects/-work-shop/garbage.jsonl").write_bytes(b"\x00\xffnot json\n")
    data = history.sources(str(claude_home))
    by_name = {Path(s["path"]).name: s for s in data["sources"]}
    assert by_name[f"{SESSION}.jsonl"]["parse_status"] == "ok"
    assert by_name["history.jsonl"]["parse_status"] == "ok"
    assert by_name["garbage.jsonl"]["parse_status"] == "error"
    assert by_name["garbage.jsonl"]["diagnostics"]
    assert by_name[f"{SESSION}.jsonl"]["coverage"] == "default"


def test_show_by_prefix_orders_records_and_drops_prompt_log_copy(claude_home: Path) -> None:
    data = history.show(SESSION[:8], str(claude_home))
    texts = [r["text"] for r in data["records"]]
    assert texts == ["fix the flaky checkout test", "Adding retry with backoff.", "now run it"]
    assert {r["store"] for r in data["records"]} == {"claude-code.projects"}
    assert data["focus"] is None


def test_show_ref_sets_focus(claude_home: Path) -> None:
    data = history.show(f"{SESSION}@line:2", str(claude_home))
    assert data["records"][data["focus"]]["text"] == "Adding retry with backoff."


def test_show_unknown_and_ambiguous(claude_home: Path) -> None:
    with pytest.raises(NotFoundError):
        history.show("no-such-session", str(claude_home))
    other = claude_home / ".claude/projects/-work-shop/5d0c2b1e-9999.jsonl"
    other.write_text(
        json.dumps(
            {
                "type": "user",
                "sessionId": "5d0c2b1e-9999",
                "message": {"role": "user", "content": "hello"},
                "timestamp": "2026-11-21T10:00:00Z",
            }
        )
        + "\n"
    )
    with pytest.raises(ConflictError, match="names 2 conversations"):  # exit 4, HTTP 409
        history.show("5d0c2b1e", str(claude_home))


def test_audit_matches_raw_counts(claude_home: Path) -> None:
    data = history.audit(str(claude_home))
    statuses = {Path(s["path"]).name: s["status"] for s in data["sources"]}
    assert statuses == {f"{SESSION}.jsonl": "ok", "history.jsonl": "ok"}
    assert data["totals"]["units"] == data["totals"]["raw"] == 4
    assert data["totals"]["problems"] == 0


def _silent_parse(ref: SourceRef, cursor: ParseCursor, diags: Diagnostics) -> Iterator[Record]:
    """A parser whose format 'changed under it': it recognizes nothing."""
    return iter(())


def _count_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def test_audit_is_loud_when_a_parser_silently_parses_nothing(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = ParserSpec("test.silent.v1", _silent_parse, count_raw=_count_lines)
    row = StoreRow(
        agent="claude-code",
        store="claude-code.test_silent",
        holds="transcripts",
        format="jsonl",
        root="silent_root",
        patterns=("*.jsonl",),
        parser=spec.id,
    )
    store_dir = home / "silent"
    store_dir.mkdir()
    (store_dir / "a.jsonl").write_text('{"new": "format"}\n{"new": "format"}\n')
    monkeypatch.setattr(catalogue, "CATALOGUE", (row,))
    monkeypatch.setattr("agentdex.discovery.CATALOGUE", (row,))
    monkeypatch.setitem(roots.RESOLVERS, "silent_root", lambda h, w: [roots.Root("s", store_dir)])
    monkeypatch.setitem(_registry._LOADED, spec.id, spec)
    data = history.audit(str(home))
    assert [s["status"] for s in data["sources"]] == ["silent"]
    assert data["sources"][0]["raw"] == 2 and data["totals"]["problems"] == 1


def test_cli_sources_show_audit_json(run_cli, claude_home: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("--home", str(claude_home), "sources", "--json")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["sources"]) == 2
    result = run_cli("--home", str(claude_home), "show", SESSION, "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["session_id"] == SESSION
    result = run_cli("--home", str(claude_home), "show", "nope")
    assert result.returncode == 3 and result.stderr.startswith("agentdex: no conversation")
    result = run_cli("--home", str(claude_home), "audit", "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["totals"]["problems"] == 0
    result = run_cli("--home", str(claude_home), "sources", "--bogus")
    assert result.returncode == 2


def test_show_uses_the_index_when_no_file_is_named_after_the_session(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prompt-log-only session is found in the index without parsing every store."""
    from agentdex.api import search

    (home / ".codex").mkdir()
    (home / ".codex/history.jsonl").write_text(
        json.dumps({"session_id": "abc-123", "ts": 1795168800, "text": "rename the cli flag"})
        + "\n"
    )
    search.refresh(home=str(home))
    from agentdex.api import gather

    parsed: list[str] = []
    real = gather._Gatherer.from_files
    monkeypatch.setattr(
        gather._Gatherer,
        "from_files",
        lambda self, c, sid, agent: parsed.extend(map(str, c)) or real(self, c, sid, agent),
    )
    data = history.show("abc-123", str(home))
    assert [r["text"] for r in data["records"]] == ["rename the cli flag"]
    assert parsed == []  # no store was parsed: the index answered


def test_show_without_index_parses_the_stores(home: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex/history.jsonl").write_text(
        json.dumps({"session_id": "abc-123", "ts": 1795168800, "text": "rename the cli flag"})
        + "\n"
    )
    data = history.show("abc", str(home))
    assert data["session_id"] == "abc-123" and data["records"][0]["role"] == "user"


def test_index_finds_aider_history_in_projects_other_stores_name(home: Path) -> None:
    """Aider keeps history in project roots: the index learns them from other agents' cwds."""
    from agentdex.api import search
    from agentdex.paths import home_data_dir

    project = home / "src" / "notes"
    project.mkdir(parents=True)
    (project / ".aider.chat.history.md").write_text(
        "# aider chat started at 2026-11-20 10:00:00\n\n#### add a healthz endpoint\n\nDone.\n"
    )
    session = home / ".claude/projects/-src-notes"
    session.mkdir(parents=True)
    (session / "s1.jsonl").write_text(
        json.dumps(
            {
                "type": "user",
                "sessionId": "s1",
                "cwd": str(project),
                "timestamp": "2026-11-20T10:00:00Z",
                "message": {"role": "user", "content": "hello"},
            }
        )
        + "\n"
    )
    search.refresh(home=str(home))
    assert json.loads((home_data_dir() / "projects.json").read_text()) == [str(project)]
    result = search.search("healthz", home=str(home), refresh_first=False)
    assert [hit["agent"] for hit in result.to_json()["results"]] == ["aider"]
