"""Sessions own their work directory: creation, isolation, listing, ids, worktree binding."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdex.api import sessions as api
from agentdex.api import worktrees as wt
from agentdex.errors import ConflictError, NotFoundError, UsageError
from agentdex.sessions import store

CliRun = Callable[..., subprocess.CompletedProcess[str]]


def test_new_session_starts_without_a_work_directory() -> None:
    session = api.new_session()
    assert session["working_directory"] is None and session["worktree"] is None
    assert re.fullmatch(r"s-\d{8}-\d{9}-[0-9a-f]{4}", session["id"])


def test_changing_one_session_never_changes_another(tmp_path: Path) -> None:
    a_dir, b_dir, c_dir = (tmp_path / n for n in ("a", "b", "c"))
    for d in (a_dir, b_dir, c_dir):
        d.mkdir()
    a = api.new_session(workdir=str(a_dir))
    b = api.new_session()
    api.set_workdir(a["id"], str(c_dir))
    assert api.show_session(b["id"])["working_directory"] is None
    api.set_workdir(b["id"], str(b_dir))
    assert api.show_session(a["id"])["working_directory"] == str(c_dir)
    fresh = api.new_session()
    assert fresh["working_directory"] is None  # no global "last used" directory
    cleared = api.set_workdir(a["id"], None)
    assert cleared["working_directory"] is None
    assert api.show_session(b["id"])["working_directory"] == str(b_dir)
    kinds = [e["type"] for e in api.show_session(a["id"])["events"]]
    assert kinds == ["start", "workdir-changed", "workdir-changed"]  # append-only history


def test_list_filters_by_directory_components(tmp_path: Path) -> None:
    (tmp_path / "proj" / "sub").mkdir(parents=True)
    (tmp_path / "projX").mkdir()
    top = api.new_session(workdir=str(tmp_path / "proj"))
    sub = api.new_session(workdir=str(tmp_path / "proj" / "sub"))
    api.new_session(workdir=str(tmp_path / "projX"))
    api.new_session()
    ids = [s["id"] for s in api.list_sessions(str(tmp_path / "proj"))["sessions"]]
    assert ids == [top["id"], sub["id"]]
    assert len(api.list_sessions()["sessions"]) == 4


def test_ids_sort_and_prefixes_resolve(tmp_path: Path) -> None:
    import time

    made = []
    for i in range(3):
        made.append(api.new_session(label=str(i))["id"])
        time.sleep(0.003)
    assert made == sorted(made) and len(set(made)) == 3
    for session_id in made:
        assert api.show_session(session_id)["id"] == session_id
    unique = made[0]
    assert store.resolve_id(unique).stem == unique
    with pytest.raises(ConflictError, match="ambiguous"):
        store.resolve_id("s-")
    with pytest.raises(NotFoundError):
        store.resolve_id("s-19990101")
    for bad in ("../etc", "s-*", "", "a/b"):
        with pytest.raises(UsageError):
            store.resolve_id(bad)


def test_unique_prefix_is_accepted(tmp_path: Path) -> None:
    session = api.new_session(label="only")
    assert api.show_session(session["id"][:4])["id"] == session["id"]  # "s-20" is unique


def test_workdir_must_exist(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        api.new_session(workdir=str(tmp_path / "missing"))
    session = api.new_session()
    with pytest.raises(NotFoundError):
        api.set_workdir(session["id"], str(tmp_path / "missing"))


def test_worktree_binding_and_detach_after_removal(git_repo: Path, tmp_path: Path) -> None:
    one = wt.add_worktree("feat/one", create=True, repo=git_repo)["path"]
    two = wt.add_worktree("feat/two", create=True, repo=git_repo)["path"]
    by_branch = api.new_session(worktree="feat/one", repo=str(git_repo))
    by_path = api.new_session(worktree=str(one), repo=str(git_repo))
    other = api.new_session(worktree="feat/two", repo=str(git_repo))
    assert by_branch["worktree"] == by_branch["working_directory"] == one
    assert by_path["worktree"] == one and other["worktree"] == two
    with pytest.raises(NotFoundError):
        api.new_session(worktree="feat/none", repo=str(git_repo))
    with pytest.raises(UsageError):
        api.new_session(worktree="feat/one", workdir=str(tmp_path), repo=str(git_repo))
    # moving inside the worktree keeps the binding, moving out drops it
    (Path(one) / "pkg").mkdir()
    inside = api.set_workdir(by_path["id"], str(Path(one) / "pkg"))
    assert inside["worktree"] == one
    # a dirty worktree is refused and nothing is detached
    (Path(one) / "pkg" / "f.txt").write_text("x")
    with pytest.raises(wt.WorktreeDirtyError):
        wt.remove_worktree(str(one), repo=git_repo)
    assert api.show_session(by_branch["id"])["worktree"] == one
    result = wt.remove_worktree(str(one), force=True, repo=git_repo)
    assert sorted(result["detached_sessions"]) == sorted([by_branch["id"], by_path["id"]])
    for session_id in (by_branch["id"], by_path["id"]):
        shown = api.show_session(session_id)
        assert shown["working_directory"] is None and shown["worktree"] is None
        assert shown["events"][-1]["reason"] == "worktree-removed"
    assert api.show_session(other["id"])["worktree"] == two


def test_cli_session_flow(tmp_path: Path, run_cli: CliRun) -> None:
    created = run_cli("session", "new", "--workdir", str(tmp_path), "--label", "demo", "--json")
    assert created.returncode == 0, created.stderr
    session_id = json.loads(created.stdout)["created"]["id"]
    listed = json.loads(run_cli("session", "list", "--workdir", str(tmp_path), "--json").stdout)
    assert [s["id"] for s in listed["sessions"]] == [session_id]
    cleared = run_cli("session", "workdir", session_id, "--clear", "--json")
    assert json.loads(cleared.stdout)["working_directory"] is None
    both = run_cli("session", "workdir", session_id, str(tmp_path), "--clear")
    assert both.returncode == 2 and both.stderr.startswith("agentdex: ")
    missing = run_cli("session", "show", "s-19990101")
    assert missing.returncode == 3 and "no session matches" in missing.stderr
    shown = json.loads(run_cli("session", "show", session_id, "--json").stdout)
    assert shown["label"] == "demo" and shown["working_directory"] is None
