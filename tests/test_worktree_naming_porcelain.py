"""Sibling-folder naming and the porcelain parsers, fed by real git output."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from agentdex.worktrees.naming import sanitize_branch, sibling_path
from agentdex.worktrees.porcelain import parse_status, parse_worktree_list
from conftest import git


def test_sanitize_examples_from_the_design_record() -> None:
    assert sanitize_branch("feature/auth") == "feature-auth"
    assert sanitize_branch("bugfix-42") == "bugfix-42"
    assert sanitize_branch("experiment/ui") == "experiment-ui"
    assert sanitize_branch("Feature//Auth..v2") == "feature-auth-v2"
    assert sanitize_branch("/-lead-and-trail-/") == "lead-and-trail"
    assert sanitize_branch("日本語") == "worktree"
    assert sanitize_branch("a" * 80) == "a" * 50
    # truncation must not leave a trailing dash
    assert sanitize_branch("a" * 49 + "/b") == "a" * 49
    assert sibling_path(Path("/w/my-repo"), "feature/auth") == Path("/w/my-repo-wt-feature-auth")


@given(st.text(max_size=120))
def test_sanitize_is_always_a_safe_folder_name(branch: str) -> None:
    name = sanitize_branch(branch)
    assert 1 <= len(name) <= 50
    assert all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
    assert name == name.lower()
    assert not name.startswith("-") and not name.endswith("-") and "--" not in name


def _porcelain(repo: Path) -> bytes:
    return subprocess.run(
        ["git", "worktree", "list", "--porcelain", "-z"], cwd=repo, capture_output=True, check=True
    ).stdout


def test_parse_real_worktree_list_with_detached_locked_and_prunable(git_repo: Path) -> None:
    base = git_repo.parent
    git(git_repo, "worktree", "add", "-q", "-b", "feat/slash", str(base / "wt-slash"))
    git(git_repo, "worktree", "add", "-q", "--detach", str(base / "wt-detached"))
    git(git_repo, "worktree", "add", "-q", "-b", "gone", str(base / "wt-gone"))
    git(git_repo, "worktree", "lock", "--reason", "on a usb disk", str(base / "wt-slash"))
    shutil.rmtree(base / "wt-gone")
    entries = parse_worktree_list(_porcelain(git_repo))
    by_path = {e.path: e for e in entries}
    assert entries[0].path == str(git_repo) and entries[0].branch == "main"
    slash = by_path[str(base / "wt-slash")]
    assert slash.branch == "feat/slash" and slash.locked and slash.locked_reason == "on a usb disk"
    detached = by_path[str(base / "wt-detached")]
    assert detached.detached and detached.branch is None
    assert detached.head == git(git_repo, "rev-parse", "HEAD").strip()
    gone = by_path[str(base / "wt-gone")]
    assert gone.prunable and gone.prunable_reason


def test_parse_path_with_newline_and_spaces(git_repo: Path) -> None:
    odd = git_repo.parent / "odd name\nwith newline"
    git(git_repo, "worktree", "add", "-q", "-b", "odd", str(odd))
    paths = [e.path for e in parse_worktree_list(_porcelain(git_repo))]
    assert str(odd) in paths


def test_parse_status_counts_renames_once(git_repo: Path) -> None:
    (git_repo / "new file.txt").write_text("x")
    (git_repo / "README.md").write_text("changed\n")
    git(git_repo, "mv", "README.md", "RENAMED.md")
    out = subprocess.run(
        ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all"],
        cwd=git_repo,
        capture_output=True,
        check=True,
    ).stdout
    assert sorted(parse_status(out)) == ["RENAMED.md", "new file.txt"]
    assert parse_status(b"") == []
