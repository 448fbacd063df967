"""``agentdex resume``: the command per agent, where it runs, and a real run of a fake agent.

Conversations come from the sample home (``examples/sample_home.py``: real
store files of every agent, real git repositories with a linked worktree).
No real agent is ever started: the run tests put a fake executable on a
temporary PATH that records its argv and cwd.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agentdex.api import resume as api
from agentdex.catalogue import CATALOGUE, RESUME, ResumeRow, _check_resume
from agentdex.errors import EXIT_NOT_FOUND, EXIT_UNSUPPORTED
from agentdex.http.app import create_app
from conftest import CliResult

CLAUDE = "8f21d6c4-0b3a-4e57-b1d9-5a7e6c3f2b18"
CODEX = "019a9f3e-5c21-7b40-a8d2-4e6f1b0c9d37"
AUTH = {"Authorization": "Bearer t0ken"}


def fake_agent(folder: Path, name: str, log: Path, exit_code: int = 0) -> Path:
    """An executable ``name`` that records its argv and cwd in ``log`` (JSON) and exits."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"with open({str(log)!r}, 'w') as out:\n"
        "    json.dump({'argv': sys.argv, 'cwd': os.getcwd()}, out)\n"
        f"sys.exit({exit_code})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


# The commands as each agent's documentation spells them (docs/resume-and-export.md).
EXPECTED = [
    ("claude-code", CLAUDE, ["claude", "--resume", CLAUDE], "src/shop-wt-feat-auth"),
    ("codex", CODEX, ["codex", "resume", CODEX], "src/notes-api"),
    (
        "gemini-cli",
        "3f2a9c1e-7b4d-4e8a-9c21-5d6e8f0a1b2c",
        ["gemini", "--resume", "3f2a9c1e-7b4d-4e8a-9c21-5d6e8f0a1b2c"],
        "src/notes-api",
    ),
    (
        "opencode",
        "ses_shop_auth",
        ["opencode", "--session", "ses_shop_auth"],
        "src/shop-wt-feat-auth",
    ),
    (
        "grok",
        "019a6e00-0000-7000-8000-00000000b001",
        ["grok", "--resume", "019a6e00-0000-7000-8000-00000000b001"],
        "src/shop",
    ),
    (
        "antigravity-cli",
        "4f3e2d1c-0b9a-4876-9543-21fedcba0001",
        ["agy", "--conversation", "4f3e2d1c-0b9a-4876-9543-21fedcba0001"],
        "src/shop",
    ),
    (
        "copilot-cli",
        "2b7c9e10-5d4f-4a3b-8c2d-1e0f9a8b7c6d",
        ["copilot", "--resume=2b7c9e10-5d4f-4a3b-8c2d-1e0f9a8b7c6d"],
        "src/notes-api",
    ),
    (
        "cursor-cli",
        "0c9e8d7f-6a5b-4c3d-2e1f-0a9b8c7d6e5f",
        ["cursor-agent", "--resume", "0c9e8d7f-6a5b-4c3d-2e1f-0a9b8c7d6e5f"],
        None,
    ),
]


@pytest.mark.parametrize(("agent", "session", "argv", "where"), EXPECTED)
def test_each_agent_gets_its_own_resume_command(
    rendered_sample: Path, agent: str, session: str, argv: list[str], where: str | None
) -> None:
    plan = api.plan(session[:8], str(rendered_sample))
    assert plan.supported and plan.reason is None
    assert (plan.agent, plan.session_id, plan.argv) == (agent, session, argv)
    if where is None:  # no directory recorded (the transcript's project folder is gone)
        assert plan.cwd is None and plan.command == shlex.join(argv)
        assert any("no directory was recorded" in w for w in plan.warnings)
    else:
        assert plan.cwd == str(rendered_sample / where) and plan.cwd_exists is True
        assert plan.command == f"cd {shlex.quote(plan.cwd)} && {shlex.join(argv)}"


def test_pi_opens_its_session_by_file(rendered_sample: Path) -> None:
    plan = api.plan("019a7c00", str(rendered_sample))
    assert plan.argv is not None and plan.argv[:2] == ["pi", "--session"]
    session_file = Path(plan.argv[2])
    assert session_file.is_file() and session_file.name.endswith(
        "_019a7c00-0000-7000-8000-00000000a001.jsonl"
    )


def test_claude_worktree_conversation_reports_branch_and_worktree(rendered_sample: Path) -> None:
    data = api.plan(CLAUDE, str(rendered_sample)).to_json()
    assert data["branch"] == "feat/auth"
    assert data["worktree"] == str(rendered_sample / "src/shop-wt-feat-auth")
    assert set(data) >= {"agent", "session_id", "cwd", "argv", "command", "supported"}


@pytest.mark.parametrize(
    ("session", "agent", "says"),
    [
        ("e2b7c9d1", "vscode-copilot", "VS Code has no command line"),
        ("7d1f2c3a", "cursor", "Cursor IDE chats"),
        ("1794826800000", "cline", "cline resumes conversations of cline.sessions"),
        ("cursor-cli.prompt_history", "cursor-cli", "only from cursor-cli.prompt_history"),
    ],
)
def test_what_cannot_resume_says_why_and_exits_8(
    rendered_sample: Path, run_cli: Callable[..., CliResult], session: str, agent: str, says: str
) -> None:
    plan = api.plan(session, str(rendered_sample))
    assert not plan.supported and plan.argv is None and plan.command is None
    assert plan.agent == agent and says in (plan.reason or "")
    printed = run_cli("--home", str(rendered_sample), "resume", session, "--print")
    assert printed.returncode == EXIT_UNSUPPORTED and printed.stdout == ""
    assert says in printed.stderr and "Traceback" not in printed.stderr
    as_json = run_cli("--home", str(rendered_sample), "resume", session, "--json")
    assert as_json.returncode == EXIT_UNSUPPORTED
    body = json.loads(as_json.stdout)
    assert body["supported"] is False and body["agent"] == agent and says in body["reason"]


def test_print_quotes_and_never_runs(
    rendered_sample: Path, tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "ran.json"
    bin_dir = tmp_path / "bin"
    fake_agent(bin_dir, "claude", log)
    env = {"PATH": str(bin_dir)}
    done = run_cli("--home", str(rendered_sample), "resume", CLAUDE[:8], "--print", env=env)
    assert done.returncode == 0, done.stderr
    cwd = rendered_sample / "src/shop-wt-feat-auth"
    assert done.stdout == f"cd {shlex.quote(str(cwd))} && claude --resume {CLAUDE}\n"
    assert not log.exists()
    described = run_cli("--home", str(rendered_sample), "resume", CLAUDE, "--json", env=env)
    body = json.loads(described.stdout)
    assert body["executable"] == str(bin_dir / "claude") and not log.exists()


def test_run_starts_the_agent_in_the_conversation_directory(
    rendered_sample: Path, tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "ran.json"
    bin_dir = tmp_path / "bin"
    fake_agent(bin_dir, "codex", log, exit_code=5)
    done = run_cli(
        "--home", str(rendered_sample), "resume", f"{CODEX}@line:3", env={"PATH": str(bin_dir)}
    )
    assert done.returncode == 5, done.stderr  # the agent's own exit status comes back
    seen = json.loads(log.read_text())
    assert seen["argv"][1:] == ["resume", CODEX]
    assert Path(seen["argv"][0]).name == "codex"
    assert Path(seen["cwd"]) == (rendered_sample / "src/notes-api").resolve()
    assert f"resuming codex {CODEX}" in done.stderr


def test_run_finds_an_alternative_executable_name(
    rendered_sample: Path, tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "ran.json"
    bin_dir = tmp_path / "bin"
    fake_agent(bin_dir, "agent", log)  # newer Cursor CLI installs name it `agent`
    done = run_cli("--home", str(rendered_sample), "resume", "0c9e8d7f", env={"PATH": str(bin_dir)})
    assert done.returncode == 0, done.stderr
    assert json.loads(log.read_text())["argv"][1:] == [
        "--resume",
        "0c9e8d7f-6a5b-4c3d-2e1f-0a9b8c7d6e5f",
    ]
    assert "no directory was recorded" in done.stderr


def test_missing_executable_is_a_clear_error(
    rendered_sample: Path, tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    done = run_cli("--home", str(rendered_sample), "resume", CLAUDE, env={"PATH": str(empty)})
    assert done.returncode == EXIT_NOT_FOUND
    assert "claude (claude-code) is not on PATH" in done.stderr
    assert f"claude --resume {CLAUDE}" in done.stderr and "Traceback" not in done.stderr


def test_directory_gone_is_said_clearly(
    rendered_sample: Path, tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    gemini_dir = rendered_sample / "src/notes-api"
    moved = rendered_sample / "src/notes-api-moved"
    gemini_dir.rename(moved)
    log = tmp_path / "ran.json"
    bin_dir = tmp_path / "bin"
    fake_agent(bin_dir, "gemini", log)
    env = {"PATH": str(bin_dir)}
    printed = run_cli("--home", str(rendered_sample), "resume", "3f2a9c1e", "--print", env=env)
    assert printed.returncode == 0
    assert printed.stdout.startswith(f"cd {shlex.quote(str(gemini_dir))} && gemini --resume ")
    assert f"{gemini_dir} no longer exists" in printed.stderr
    ran = run_cli("--home", str(rendered_sample), "resume", "3f2a9c1e", env=env)
    assert ran.returncode == EXIT_NOT_FOUND and "no longer exists" in ran.stderr
    assert not log.exists()
    assert api.plan("3f2a9c1e", str(rendered_sample)).cwd_exists is False


def test_codex_archived_session_warns_to_unarchive(rendered_sample: Path) -> None:
    active = next((rendered_sample / ".codex/sessions").rglob(f"*{CODEX}.jsonl"))
    archived = rendered_sample / ".codex/archived_sessions" / active.name
    archived.parent.mkdir(parents=True)
    active.rename(archived)
    plan = api.plan(CODEX, str(rendered_sample))
    assert plan.supported and plan.argv == ["codex", "resume", CODEX]
    assert any(f"codex unarchive {CODEX}" in w for w in plan.warnings)


def test_unsafe_session_id_is_refused(home: Path) -> None:
    project = home / "work"
    project.mkdir()
    slug = home / ".claude/projects/-work"
    slug.mkdir(parents=True)
    line = {
        "type": "user",
        "sessionId": "--dangerously-skip-permissions",
        "cwd": str(project),
        "timestamp": "2026-11-20T10:00:00Z",
        "uuid": "u1",
        "message": {"role": "user", "content": "hello"},
    }
    (slug / "--dangerously-skip-permissions.jsonl").write_text(json.dumps(line) + "\n")
    plan = api.plan("--dangerously-skip-permissions", str(home))
    assert not plan.supported and plan.argv is None
    assert "not safe to pass on a command line" in (plan.reason or "")


def test_conversation_recorded_on_another_host_is_not_resumed_here() -> None:
    row = next(r for r in RESUME if r.agent == "claude-code")
    found = api.ResumePlan(
        agent="claude-code", session_id="abc", supported=False, host="windows:alex"
    )
    records = [{"store": "claude-code.projects"}]
    reason = api._why_not(row, found, records)
    assert reason is not None and "recorded on windows:alex" in reason


def test_catalogue_rows_are_checked() -> None:
    bad_store = ResumeRow(
        agent="claude-code", argv=("claude", "{session_id}"), stores=("codex.sessions",)
    )
    rows = (*(r for r in RESUME if r.agent != "claude-code"), bad_store)
    with pytest.raises(ValueError, match="not one of its stores"):
        _check_resume(rows, CATALOGUE)
    bad_placeholder = ResumeRow(
        agent="claude-code", argv=("claude", "{cwd}"), stores=("claude-code.projects",)
    )
    rows = (*(r for r in RESUME if r.agent != "claude-code"), bad_placeholder)
    with pytest.raises(ValueError, match="unknown placeholder"):
        _check_resume(rows, CATALOGUE)
    with pytest.raises(ValueError, match="one row per agent"):
        _check_resume(RESUME[1:], CATALOGUE)
    assert all(row.source for row in RESUME if row.supported)  # every command says where it is from
    assert all(row.note for row in RESUME if not row.supported)


def test_http_route_describes_and_never_runs(
    rendered_sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "ran.json"
    bin_dir = tmp_path / "bin"
    fake_agent(bin_dir, "claude", log)
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ.get("PATH", ""))
    app = create_app(token="t0ken")
    app.state.home = str(rendered_sample)
    client = TestClient(app)
    assert client.get(f"/api/v0/resume/{CLAUDE}").status_code == 401
    response = client.get(f"/api/v0/resume/{CLAUDE}@line:1", headers=AUTH)
    assert response.status_code == 200
    assert response.json() == api.plan(CLAUDE, str(rendered_sample)).to_json()
    assert response.json()["argv"] == ["claude", "--resume", CLAUDE]
    assert not log.exists()
    unsupported = client.get("/api/v0/resume/e2b7c9d1", headers=AUTH)
    assert unsupported.status_code == 200 and unsupported.json()["supported"] is False
    missing = client.get("/api/v0/resume/nope-nothing", headers=AUTH)
    assert missing.status_code == 404 and missing.json()["error"] == "NOT_FOUND"


def test_a_cline_session_resumes_with_the_cli(rendered_sample: Path) -> None:
    plan = api.plan("1795255200000_r7tkq", str(rendered_sample))
    assert plan.supported and plan.agent == "cline"
    assert plan.argv == ["cline", "--id", "1795255200000_r7tkq"]
    assert plan.cwd == str(rendered_sample / "src" / "notes-api")
