"""``context --at/--history``, ``context diff``, ``show --context`` and ``index``, as subprocesses.

History is seeded in-process with injected times (``now=``); the CLI reads
the same hermetic data dir. Conversations are real-format Claude Code
transcripts in the temporary home.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import context as api
from agentdex.api import context_history as history
from agentdex.context.history import history_path
from context_helpers import ts, write

Run = Callable[..., Any]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace whose AGENTS.md said "tabs" from 10:00 and "spaces" from 11:00."""
    path = (tmp_path / "shop").resolve()
    write(path / "AGENTS.md", "# Shop\nUse tabs.\n")
    api.snapshot(str(path), now=ts("2026-03-01T10:00:00"))
    write(path / "AGENTS.md", "# Shop\nUse spaces.\n")
    api.snapshot(str(path), now=ts("2026-03-01T11:00:00"))
    return path


def transcript(home: Path, session: str, cwd: str, when: str) -> None:
    folder = home / ".claude" / "projects" / ("-" + session)
    lines = [
        {
            "type": "user",
            "sessionId": session,
            "uuid": f"{session}-u1",
            "cwd": cwd,
            "timestamp": when,
            "message": {"role": "user", "content": "format the shop code"},
        }
    ]
    write(folder / f"{session}.jsonl", "".join(json.dumps(x) + "\n" for x in lines))


def test_at_history_and_diff(run_cli: Run, ws: Path) -> None:
    at = run_cli("context", str(ws), "--at", "2026-03-01T10:30:00Z", "--json", "--payload")
    assert at.returncode == 0, at.stderr
    data = json.loads(at.stdout)
    assert data["resources"][0]["payload"] == "# Shop\nUse tabs.\n"
    assert data["history"]["match"] == "in_force" and data["history"]["version"] == 1
    human = run_cli("context", str(ws), "--at", "2026-03-01T11:30:00Z")
    assert "v2 in force at 2026-03-01 11:30:00 UTC" in human.stdout, human.stdout

    listed = json.loads(run_cli("context", str(ws), "--history", "--json").stdout)
    assert [v["version"] for v in listed["versions"]] == [1, 2]
    assert listed["versions"][1]["changes"] == {"added": 0, "removed": 0, "changed": 1}
    table = run_cli("context", str(ws), "--history").stdout
    assert "v1" in table and "+0 -0 ~1" in table

    diff = run_cli("context", "diff", str(ws), "2026-03-01T10:00:00Z", "2026-03-01T11:00:00Z")
    assert diff.returncode == 0, diff.stderr
    assert "~ changed instruction_file" in diff.stdout
    assert "-Use tabs." in diff.stdout and "+Use spaces." in diff.stdout
    as_json = json.loads(run_cli("context", "diff", str(ws), "v1", "--json").stdout)
    assert as_json["to"]["version"] == 2 and as_json["changed"][0]["diff"].count("\n") == 6


def test_before_first_record_and_usage_errors(run_cli: Run, ws: Path) -> None:
    early = run_cli("context", str(ws), "--at", "2026-03-01T09:00:00Z")
    assert early.returncode == 3
    assert "no context recorded" in early.stderr and "Traceback" not in early.stderr
    assert "(earliest record: 2026-03-01T10:00:00.000Z)" in early.stderr
    assert run_cli("context", str(ws), "--at", "whenever").returncode == 2
    assert run_cli("context", str(ws), "--at", "1h", "--watch").returncode == 2
    assert run_cli("context", "diff", str(ws), "nope").returncode == 2


def test_show_context_in_force_at_the_first_message(run_cli: Run, ws: Path, home: Path) -> None:
    transcript(home, "c-then", str(ws), "2026-03-01T10:30:00Z")
    out = run_cli("show", "c-then", "--context", "--json")
    assert out.returncode == 0, out.stderr
    context = json.loads(out.stdout)["context"]
    assert context["workspace"] == str(ws) and context["match"] == "in_force"
    assert context["at"] == "2026-03-01T10:30:00.000Z"
    assert context["snapshot"]["history"]["version"] == 1
    resource = context["snapshot"]["resources"][0]
    assert resource["source"] == str(ws / "AGENTS.md") and resource["size"] == len(
        "# Shop\nUse tabs.\n"
    )
    human = run_cli("show", "c-then", "--context")
    assert "v1 in force at 2026-03-01 10:30:00 UTC" in human.stdout, human.stdout
    assert "format the shop code" in human.stdout  # the conversation follows


def test_show_context_before_any_record_says_so(run_cli: Run, ws: Path, home: Path) -> None:
    transcript(home, "c-early", str(ws), "2026-03-01T08:00:00Z")
    context = json.loads(run_cli("show", "c-early", "--context", "--json").stdout)["context"]
    assert context["match"] == "earliest_after"
    assert "no context was recorded for this workspace at or before" in context["note"]
    assert context["snapshot"]["history"]["recorded_at"].startswith("2026-03-01T10:00")
    human = run_cli("show", "c-early", "--context").stdout
    assert "not recorded then" in human


def test_show_context_of_a_never_recorded_workspace(
    run_cli: Run, tmp_path: Path, home: Path
) -> None:
    fresh = write(tmp_path / "fresh" / "CLAUDE.md", "# Fresh\n").parent.resolve()
    transcript(home, "c-fresh", str(fresh), "2026-03-01T08:00:00Z")
    context = json.loads(run_cli("show", "c-fresh", "--context", "--json").stdout)["context"]
    # recorded now, and shown as the earliest version after the message, never as "then"
    assert context["match"] == "earliest_after"
    assert context["snapshot"]["resources"][0]["name"] == "Fresh"
    transcript(home, "c-gone", str(tmp_path / "gone"), "2026-03-01T08:00:00Z")
    gone = json.loads(run_cli("show", "c-gone", "--context", "--json").stdout)["context"]
    assert gone["match"] == "none" and gone["snapshot"] is None and "gone" in gone["note"]
    assert "no context snapshot" in run_cli("show", "c-gone", "--context").stdout


def test_index_records_workspaces_of_conversations(
    run_cli: Run, tmp_path: Path, home: Path
) -> None:
    project = write(tmp_path / "proj" / "AGENTS.md", "# Proj\n").parent.resolve()
    transcript(home, "c-proj", str(project), "2026-03-01T08:00:00Z")
    transcript(home, "c-home", str(home), "2026-03-01T08:00:00Z")  # the home is never walked
    first = run_cli("index", "--json")
    assert first.returncode == 0, first.stderr
    stats = json.loads(first.stdout)["context_history"]
    assert (stats["workspaces"], stats["recorded"], stats["skipped"]) == (1, 1, 1)
    again = json.loads(run_cli("index", "--json").stdout)["context_history"]
    assert (again["recorded"], again["unchanged"]) == (0, 1)
    assert history.versions(str(project))["total"] == 1
    write(project / "AGENTS.md", "# Proj v2\n")
    third = json.loads(run_cli("index", "--json").stdout)["context_history"]
    assert (third["resolved"], third["recorded"]) == (1, 1)
    assert "Context history: 1 workspace(s) checked" in run_cli("index").stdout


def test_index_with_history_off(run_cli: Run, tmp_path: Path, home: Path) -> None:
    config = tmp_path / "off.toml"
    config.write_text("[context]\nhistory = false\n")
    project = write(tmp_path / "proj" / "AGENTS.md", "# Proj\n").parent.resolve()
    transcript(home, "c-proj", str(project), "2026-03-01T08:00:00Z")
    out = run_cli("index", "--json", env={"AGENTDEX_CONFIG": str(config)})
    assert json.loads(out.stdout)["context_history"] == {"enabled": False}
    bad = tmp_path / "bad.toml"
    bad.write_text("[context]\nhistory = 'no'\n")
    shown = run_cli("context", str(project), "--json", env={"AGENTDEX_CONFIG": str(bad)})
    assert shown.returncode == 0  # the snapshot is shown, the unclear setting is named
    assert "context history not recorded" in shown.stderr and "context.history" in shown.stderr
    assert not history_path().exists()  # neither run recorded anything
