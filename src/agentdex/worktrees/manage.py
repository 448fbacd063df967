"""List, add and remove worktrees, serialized per repository by a lock file.

``git worktree add`` is not safe against itself for the same branch, so add
and remove hold an exclusive ``fcntl.flock`` on
``<data dir>/locks/worktrees-<hash of primary path>.lock`` while they check
state and run git: of two concurrent adds of one branch, exactly one wins
and the other sees the branch checked out.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agentdex.errors import ConflictError, LimitError, NotFoundError, UsageError
from agentdex.paths import data_dir, ensure_private_dir
from agentdex.worktrees.git import first_line, run_git, toplevel
from agentdex.worktrees.naming import sibling_path
from agentdex.worktrees.porcelain import WorktreeEntry, parse_status
from agentdex.worktrees.validate import (
    cached_worktrees,
    fetch_worktrees,
    invalidate,
    validate_worktree_path,
)

LOCK_TIMEOUT_SECONDS = 60.0
#: checking out or deleting a big tree takes longer than a query
CHECKOUT_TIMEOUT_SECONDS = 300.0


class WorktreeDirtyError(ConflictError):
    """Removing would lose uncommitted work; carries the dirty-file count."""

    code = "WORKTREE_DIRTY"

    def __init__(self, message: str, dirty_file_count: int) -> None:
        super().__init__(message)
        self.dirty_file_count = dirty_file_count


@dataclass(slots=True)
class WorktreeInfo:
    """A worktree as agentdex reports it (``--json`` shape in :meth:`to_json`)."""

    path: str
    branch: str | None
    head: str | None
    primary: bool
    detached: bool
    bare: bool
    locked: bool
    prunable: bool
    prunable_reason: str | None
    dirty: bool | None
    dirty_file_count: int | None

    @property
    def label(self) -> str:
        """Branch name, or the short hash when detached."""
        if self.branch:
            return self.branch
        return (self.head or "")[:7] or "(unknown)"

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "branch": self.branch,
            "label": self.label,
            "head": (self.head or "")[:7] or None,
            "head_full": self.head,
            "primary": self.primary,
            "detached": self.detached,
            "bare": self.bare,
            "locked": self.locked,
            "prunable": self.prunable,
            "prunable_reason": self.prunable_reason,
            "dirty": self.dirty,
            "dirty_file_count": self.dirty_file_count,
        }


def dirty_files(path: str) -> list[str] | None:
    """Changed and untracked files in a worktree; None when git cannot tell (missing dir)."""
    if not os.path.isdir(path):
        return None
    proc = run_git(path, "status", "--porcelain=v1", "-z", "--untracked-files=all", check=False)
    if proc.returncode != 0:
        return None
    return parse_status(proc.stdout)


def _info(entry: WorktreeEntry, primary: bool, with_status: bool) -> WorktreeInfo:
    files = dirty_files(entry.path) if with_status and not entry.bare else None
    return WorktreeInfo(
        path=entry.path,
        branch=entry.branch,
        head=entry.head,
        primary=primary,
        detached=entry.detached,
        bare=entry.bare,
        locked=entry.locked,
        prunable=entry.prunable,
        prunable_reason=entry.prunable_reason,
        dirty=None if files is None else bool(files),
        dirty_file_count=None if files is None else len(files),
    )


def list_worktrees(repo: Path, *, with_status: bool = True) -> list[WorktreeInfo]:
    """Every worktree of ``repo``'s repository, primary first, with dirty state."""
    entries = fetch_worktrees(toplevel(repo))
    return [_info(e, i == 0, with_status) for i, e in enumerate(entries)]


def _lock_path(primary: str) -> Path:
    digest = hashlib.sha256(primary.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return ensure_private_dir(data_dir() / "locks") / f"worktrees-{digest}.lock"


@contextlib.contextmanager
def repository_lock(primary: str, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the per-repository lock; ConflictError if it stays busy for ``timeout``."""
    fd = os.open(_lock_path(primary), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() > deadline:
                    raise ConflictError(
                        "another worktree add/remove is still running for this repository"
                    ) from exc
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)  # closing releases the flock


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: git check-ref-format --branch's rules, plus no leading '-', '@' or HEAD (the HTTP
#: API publishes this very pattern, so a name it accepts is one git accepts).
#: ``(?![\s\S])`` is the end of the name in Python and in JSON Schema alike.
BRANCH_NAME = re.compile(
    r"^(?!-)(?!@(?![\s\S]))(?!HEAD(?![\s\S]))(?!\.)(?!/)"
    r"(?![\s\S]*\.\.)(?![\s\S]*@\{)(?![\s\S]*//)(?![\s\S]*/\.)"
    r"(?![\s\S]*\.lock(?:/|(?![\s\S])))(?![\s\S]*[./](?![\s\S]))"
    r"[^\x00-\x20\x7f~^:?*\[\\]+(?![\s\S])"
)


def check_branch_name(repo: Path, branch: str) -> None:
    """UsageError unless git accepts ``branch`` as a plain branch name."""
    if not BRANCH_NAME.search(branch):
        raise UsageError(f"invalid branch name: {branch!r}")
    proc = run_git(repo, "check-ref-format", "--branch", branch, check=False)
    if proc.returncode != 0 or proc.stdout.decode("utf-8", "replace").strip() != branch:
        raise UsageError(f"invalid branch name: {branch!r}")


def _branch_exists(repo: Path, branch: str) -> bool:
    proc = run_git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False)
    return proc.returncode == 0


def add_worktree(
    repo: Path,
    branch: str,
    *,
    create: bool = False,
    base: str | None = None,
    max_worktrees: int = 8,
) -> WorktreeInfo:
    """Create the sibling worktree for ``branch``; see docs for the refusal codes."""
    top = toplevel(repo)
    check_branch_name(top, branch)
    if base is not None and not create:
        raise UsageError("--base only makes sense with --new")
    if base is not None and (not base or base.startswith("-") or _CONTROL.search(base)):
        raise UsageError(f"invalid start point: {base!r}")
    primary = fetch_worktrees(top)[0].path
    with repository_lock(primary):
        entries = fetch_worktrees(top)
        for entry in entries:
            if entry.branch == branch:
                raise ConflictError(f"branch '{branch}' is already checked out at {entry.path}")
        linked = len(entries) - 1
        if linked >= max_worktrees:
            raise LimitError(
                f"repository already has {linked} linked worktrees (maximum {max_worktrees});"
                " remove one or raise [worktrees] max"
            )
        exists = _branch_exists(top, branch)
        if create and exists:
            raise ConflictError(f"branch '{branch}' already exists; drop --new to check it out")
        if not create and not exists:
            raise NotFoundError(f"branch '{branch}' does not exist (use --new to create it)")
        if create and base is not None:
            ok = run_git(top, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}", check=False)
            if ok.returncode != 0:
                raise NotFoundError(f"base ref '{base}' does not exist")
        target = sibling_path(Path(primary), branch)
        if os.path.lexists(target):
            holder = next((e for e in entries if e.path == str(target)), None)
            why = f" (worktree of branch '{holder.branch}')" if holder and holder.branch else ""
            raise ConflictError(f"target folder already exists: {target}{why}")
        args = ["worktree", "add"]
        args += ["-b", branch, str(target), base or "HEAD"] if create else [str(target), branch]
        proc = run_git(top, *args, check=False, timeout=CHECKOUT_TIMEOUT_SECONDS)
        invalidate(primary)
        if proc.returncode != 0:
            raise ConflictError(f"git worktree add failed: {first_line(proc.stderr)}")
        for i, entry in enumerate(fetch_worktrees(top)):
            if entry.path == str(target):
                return _info(entry, i == 0, with_status=True)
    raise ConflictError(f"git reported success but {target} is not in the worktree list")


def remove_worktree(repo: Path, path: str, *, force: bool = False) -> WorktreeInfo:
    """Remove a linked worktree; refuses the primary and (without force) a dirty one."""
    top = toplevel(repo)
    entry = validate_worktree_path(top, path)
    primary = cached_worktrees(top)[0].path
    if entry.path == primary:
        raise ConflictError(f"refusing to remove the primary worktree: {entry.path}")
    with repository_lock(primary):
        entries = fetch_worktrees(top)
        current = next((e for e in entries if e.path == entry.path), None)
        if current is None:
            invalidate(primary)
            raise NotFoundError(f"not a worktree of this repository: {path}")
        info = _info(current, False, with_status=True)
        if current.locked:
            why = f" ({current.locked_reason})" if current.locked_reason else ""
            raise ConflictError(
                f"worktree is locked{why}: {entry.path}; run 'git worktree unlock' first"
            )
        if not force and info.dirty_file_count:
            raise WorktreeDirtyError(
                f"worktree has {info.dirty_file_count} uncommitted or untracked file(s):"
                f" {entry.path} (use --force to discard them)",
                info.dirty_file_count,
            )
        args = ["worktree", "remove", *(["--force"] if force else []), entry.path]
        proc = run_git(top, *args, check=False, timeout=CHECKOUT_TIMEOUT_SECONDS)
        invalidate(primary)
        if proc.returncode != 0:
            raise ConflictError(f"git worktree remove failed: {first_line(proc.stderr)}")
    return info
