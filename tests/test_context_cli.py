"""``agentdex context`` forms, as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from context_helpers import SRC, write


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = (tmp_path / "ws").resolve()
    write(path / "AGENTS.md", "# Shop rules\n")
    write(path / ".mcp.json", '{"mcpServers": {"gh": {"command": "x", "env": {"T": "SECRET"}}}}')
    return path


def test_dir_json(run_cli, ws: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("context", str(ws), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["workspace"] == str(ws) and out["resource_count"] == 2
    assert "SECRET" not in result.stdout


def test_bare_form_uses_cwd_and_renders_a_tree(run_cli, ws: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("context", cwd=ws)
    assert result.returncode == 0, result.stderr
    assert "Instruction files" in result.stdout and "Shop rules" in result.stdout
    assert "servers: gh" in result.stdout and "SECRET" not in result.stdout


def test_directory_named_add(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "add" / "CLAUDE.md", "# in add\n")
    result = run_cli("context", "./add", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["resources"][0]["name"] == "in add"
    explicit = run_cli("context", "show", "add", "--json", cwd=tmp_path)
    assert json.loads(explicit.stdout)["resource_count"] == 1


def test_add_sources_remove(run_cli, ws: Path, home: Path) -> None:  # type: ignore[no-untyped-def]
    # A file with a name no walk recognizes: only the user source reports it.
    write(home / ".gemini" / "team" / "house-style.md", "# team\n")
    added = run_cli("context", "add", "~/.gemini/team/house-style.md", "--json", cwd=ws)
    assert added.returncode == 0, added.stderr
    path = json.loads(added.stdout)["path"]
    assert path == str((home / ".gemini" / "team" / "house-style.md").resolve())
    listed = json.loads(run_cli("context", "sources", "--json", cwd=ws).stdout)
    assert [s["path"] for s in listed["sources"]] == [path]
    snapshot = json.loads(run_cli("context", str(ws), "--json").stdout)
    assert any(r["scope"] == "source" for r in snapshot["resources"])
    assert run_cli("context", "remove", path).returncode == 0
    again = run_cli("context", "remove", path)
    assert again.returncode == 3 and again.stderr.startswith("agentdex: ")


@pytest.mark.parametrize("bad", ["relative/x", "/etc", "~/../etc", "~/.ssh"])
def test_add_refuses_bad_paths(run_cli, ws: Path, bad: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("context", "add", bad, cwd=ws)
    assert result.returncode == 2
    assert result.stderr.startswith("agentdex: ") and "Traceback" not in result.stderr


def test_errors_are_one_line(run_cli, tmp_path: Path, ws: Path) -> None:  # type: ignore[no-untyped-def]
    missing = run_cli("context", str(tmp_path / "nope"))
    assert missing.returncode == 3 and missing.stderr.count("\n") == 1
    not_dir = run_cli("context", str(ws / "AGENTS.md"))
    assert not_dir.returncode == 3 and "not a directory" in not_dir.stderr


def test_watch_reprints_on_change(ws: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentdex",
            "context",
            str(ws),
            "--watch",
            "--json",
            "--max-updates",
            "2",
            "--debounce",
            "0.05",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        write(ws / "CLAUDE.md", "# added while watching\n")
        second = json.loads(proc.stdout.readline())
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert second["version"] > first["version"]
    assert str(ws / "CLAUDE.md") in {r["source"] for r in second["resources"]}
