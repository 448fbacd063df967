"""worktree add/list/remove against real git repositories in temporary folders."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdex.api import worktrees as api
from agentdex.errors import (
    AgentdexError,
    ConflictError,
    LimitError,
    NotFoundError,
    UsageError,
)
from agentdex.worktrees import validate
from agentdex.worktrees.manage import WorktreeDirtyError
from conftest import SRC_DIR, git


def _by_path(repo: Path) -> dict[str, dict[str, object]]:
    return {str(w["path"]): w for w in api.list_worktrees(repo)}


def test_add_existing_and_new_branches_as_siblings(git_repo: Path) -> None:
    git(git_repo, "branch", "feature/Auth")
    created = api.add_worktree("feature/Auth", repo=git_repo)
    target = git_repo.parent / "repo-wt-feature-auth"
    assert created["path"] == str(target) and created["branch"] == "feature/Auth"
    assert (target / "README.md").read_text() == "hello\n"
    new = api.add_worktree("exp/ui", create=True, base="main", repo=git_repo)
    assert new["path"] == str(git_repo.parent / "repo-wt-exp-ui")
    assert (
        git(git_repo, "rev-parse", "exp/ui").strip() == git(git_repo, "rev-parse", "main").strip()
    )
    listing = _by_path(git_repo)
    assert listing[str(git_repo)]["primary"] is True
    assert listing[str(target)]["primary"] is False
    assert listing[str(target)]["dirty"] is False and listing[str(target)]["dirty_file_count"] == 0


def test_list_reports_detached_dirty_and_prunable(git_repo: Path) -> None:
    detached = git_repo.parent / "det"
    git(git_repo, "worktree", "add", "-q", "--detach", str(detached))
    (detached / "a.txt").write_text("untracked")
    (detached / "README.md").write_text("modified\n")
    gone = git_repo.parent / "gone"
    git(git_repo, "worktree", "add", "-q", "-b", "gone", str(gone))
    subprocess.run(["rm", "-rf", str(gone)], check=True)
    listing = _by_path(git_repo)
    det = listing[str(detached)]
    head = git(git_repo, "rev-parse", "HEAD").strip()
    assert det["detached"] is True and det["branch"] is None
    assert det["label"] == head[:7] and det["head"] == head[:7]
    assert det["dirty"] is True and det["dirty_file_count"] == 2
    assert listing[str(gone)]["prunable"] is True
    assert listing[str(gone)]["dirty"] is None  # no folder: git cannot tell


def test_refusals_have_distinct_errors(git_repo: Path) -> None:
    api.add_worktree("feat/x", create=True, repo=git_repo)
    with pytest.raises(UsageError):
        api.add_worktree("bad..name", create=True, repo=git_repo)
    with pytest.raises(UsageError):
        api.add_worktree("-dash", create=True, repo=git_repo)
    with pytest.raises(NotFoundError, match="does not exist"):
        api.add_worktree("nope", repo=git_repo)
    with pytest.raises(NotFoundError, match="base ref"):
        api.add_worktree("other", create=True, base="no-such-ref", repo=git_repo)
    with pytest.raises(ConflictError, match=r"already checked out at .*repo-wt-feat-x"):
        api.add_worktree("feat/x", repo=git_repo)
    with pytest.raises(ConflictError, match=r"already checked out at .*repo$"):
        api.add_worktree("main", repo=git_repo)
    # feat-X sanitizes to the same folder as feat/x
    with pytest.raises(ConflictError, match=r"target folder already exists.*'feat/x'"):
        api.add_worktree("feat-X", create=True, repo=git_repo)
    assert git(git_repo, "branch", "--list", "feat-X") == ""  # nothing half-created


def test_maximum_from_config(git_repo: Path) -> None:
    Path(os.environ["AGENTDEX_CONFIG"]).write_text("[worktrees]\nmax = 1\n")
    api.add_worktree("one", create=True, repo=git_repo)
    with pytest.raises(LimitError, match="maximum 1"):
        api.add_worktree("two", create=True, repo=git_repo)


def test_remove_refuses_primary_and_dirty_then_forces(git_repo: Path) -> None:
    created = api.add_worktree("wip", create=True, repo=git_repo)
    path = str(created["path"])
    (Path(path) / "x.txt").write_text("x")
    (Path(path) / "README.md").write_text("edited\n")
    with pytest.raises(ConflictError, match="primary"):
        api.remove_worktree(str(git_repo), repo=git_repo)
    with pytest.raises(WorktreeDirtyError) as dirty:
        api.remove_worktree(path, repo=git_repo)
    assert dirty.value.dirty_file_count == 2 and dirty.value.exit_code == 4
    assert Path(path).is_dir()
    result = api.remove_worktree(path + "/", force=True, repo=git_repo)
    assert result["removed"]["path"] == path and not Path(path).exists()
    assert path not in _by_path(git_repo)
    # the branch survives the worktree
    assert git(git_repo, "branch", "--list", "wip").strip() == "wip"


def test_path_validation(git_repo: Path, tmp_path: Path) -> None:
    created = api.add_worktree("v", create=True, repo=git_repo)
    path = str(created["path"])
    (Path(path) / "sub").mkdir()
    for bad in (f"{path}/../repo-wt-v", path + "\0", ""):
        with pytest.raises(UsageError):
            validate.validate_worktree_path(git_repo, bad)
    for outside in (f"{path}/sub", str(tmp_path), path + "-other"):
        with pytest.raises(NotFoundError):
            validate.validate_worktree_path(git_repo, outside)
    assert validate.validate_worktree_path(git_repo, path).branch == "v"
    # relative paths are made absolute against the current directory, not normalized
    old = os.getcwd()
    os.chdir(git_repo.parent)
    try:
        assert validate.validate_worktree_path(git_repo, "repo-wt-v").path == path
    finally:
        os.chdir(old)


def test_cache_ttl_and_invalidation(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTDEX_WORKTREE_CACHE_TTL", "300")
    validate.invalidate()
    before = validate.cached_worktrees(git_repo)
    git(git_repo, "worktree", "add", "-q", "-b", "outside", str(git_repo.parent / "outside"))
    assert validate.cached_worktrees(git_repo) == before  # served from cache within the TTL
    assert len(validate.cached_worktrees(git_repo, refresh=True)) == 2
    api.add_worktree("inside", create=True, repo=git_repo)  # add invalidates
    assert len(validate.cached_worktrees(git_repo)) == 3
    monkeypatch.setenv("AGENTDEX_WORKTREE_CACHE_TTL", "0")
    git(git_repo, "worktree", "add", "-q", "-b", "later", str(git_repo.parent / "later"))
    assert len(validate.cached_worktrees(git_repo)) == 4


def test_concurrent_adds_in_threads_exactly_one_wins(git_repo: Path) -> None:
    git(git_repo, "branch", "race")
    outcomes: list[object] = []
    barrier = threading.Barrier(4)

    def attempt() -> None:
        barrier.wait()
        try:
            outcomes.append(api.add_worktree("race", repo=git_repo)["path"])
        except AgentdexError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=attempt) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    wins = [o for o in outcomes if isinstance(o, str)]
    losses = [o for o in outcomes if isinstance(o, ConflictError)]
    assert len(wins) == 1 and len(losses) == 3, outcomes
    assert all("already checked out" in o.message for o in losses)


def test_concurrent_adds_in_processes_exactly_one_wins(git_repo: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(SRC_DIR))
    argv = [sys.executable, "-m", "agentdex", "worktree", "add", "racy/branch", "--new"]
    procs = [
        subprocess.Popen(
            [*argv, "--repo", str(git_repo)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [(p.wait(60), p.stderr.read() if p.stderr else "") for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 4, 4, 4], results
    assert len(api.list_worktrees(git_repo)) == 2


def test_cli_exit_codes_and_json(
    git_repo: Path, run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    import json

    ok = run_cli("worktree", "add", "feat/cli", "--new", "--json", cwd=git_repo)
    assert ok.returncode == 0, ok.stderr
    created = json.loads(ok.stdout)["created"]
    assert created["path"].endswith("repo-wt-feat-cli") and created["branch"] == "feat/cli"
    cases = [
        (("worktree", "add", "bad name"), 2, "invalid branch name"),
        (("worktree", "add", "missing"), 3, "does not exist"),
        (("worktree", "add", "feat/cli"), 4, "already checked out"),
        (("worktree", "add", "feat-cli", "--new"), 4, "target folder already exists"),
        (("worktree", "remove", str(git_repo)), 4, "primary"),
        (("worktree", "remove", "/nowhere/at/all"), 3, "not a worktree"),
    ]
    for args, code, message in cases:
        result = run_cli(*args, cwd=git_repo)
        assert result.returncode == code, (args, result.stderr)
        assert result.stderr.startswith("agentdex: ") and message in result.stderr
        assert "Traceback" not in result.stderr
    Path(created["path"], "dirty.txt").write_text("x")
    dirty = run_cli("worktree", "remove", created["path"], cwd=git_repo)
    assert dirty.returncode == 4 and "1 uncommitted or untracked" in dirty.stderr
    listed = json.loads(run_cli("worktree", "list", "--json", cwd=git_repo).stdout)["worktrees"]
    assert [w["dirty_file_count"] for w in listed] == [0, 1]
    Path(os.environ["AGENTDEX_CONFIG"]).write_text("[worktrees]\nmax = 1\n")
    over = run_cli("worktree", "add", "another", "--new", cwd=git_repo)
    assert over.returncode == 5 and "maximum 1" in over.stderr
    outside = run_cli("worktree", "list", cwd=git_repo.parent)
    assert outside.returncode == 3 and "not inside a git repository" in outside.stderr


def test_locked_prunable_and_linked_worktree_as_repo(git_repo: Path) -> None:
    locked = str(api.add_worktree("locked", create=True, repo=git_repo)["path"])
    git(git_repo, "worktree", "lock", "--reason", "usb disk", locked)
    with pytest.raises(ConflictError, match=r"locked \(usb disk\)"):
        api.remove_worktree(locked, force=True, repo=git_repo)
    assert Path(locked).is_dir()
    # any worktree names the repository; new siblings still go beside the primary
    from_linked = api.add_worktree("sibling", create=True, repo=locked)
    assert from_linked["path"] == str(git_repo.parent / "repo-wt-sibling")
    # a worktree whose folder vanished is prunable and can still be removed
    gone = str(from_linked["path"])
    subprocess.run(["rm", "-rf", gone], check=True)
    assert _by_path(git_repo)[gone]["prunable"] is True
    assert api.remove_worktree(gone, repo=git_repo)["removed"]["path"] == gone
    assert gone not in _by_path(git_repo)
