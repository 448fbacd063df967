"""Worktrees as the library API: list, add, remove (detaching bound sessions), resolve.

Surfaces call these; they return JSON-ready dicts (shapes in
``docs/worktrees-and-sessions.md``) and raise :mod:`agentdex.errors` classes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentdex.worktrees.manage import BRANCH_NAME, WorktreeDirtyError

#: The branch names agentdex (and git) accept, as a regular expression.
BRANCH_PATTERN = BRANCH_NAME.pattern

__all__ = [
    "BRANCH_PATTERN",
    "WorktreeDirtyError",
    "add_worktree",
    "list_worktrees",
    "remove_worktree",
    "resolve_worktree",
]


def _repo(repo: str | os.PathLike[str] | None) -> Path:
    return Path(repo) if repo is not None else Path.cwd()


def list_worktrees(repo: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """Every worktree of the repository containing ``repo`` (default: cwd), primary first."""
    from agentdex.worktrees import manage

    return [w.to_json() for w in manage.list_worktrees(_repo(repo))]


def add_worktree(
    branch: str,
    *,
    create: bool = False,
    base: str | None = None,
    repo: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Create ``<repo>-wt-<branch>`` beside the primary worktree; returns the new worktree."""
    from agentdex.config import load_config
    from agentdex.worktrees import manage

    limit = load_config().max_worktrees
    info = manage.add_worktree(_repo(repo), branch, create=create, base=base, max_worktrees=limit)
    return info.to_json()


def remove_worktree(
    path: str, *, force: bool = False, repo: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """Remove a linked worktree, then detach the sessions bound to it (only after git succeeded)."""
    from agentdex.sessions.store import detach_worktree
    from agentdex.worktrees import manage

    base = _repo(repo)
    if repo is None and os.path.isabs(path) and os.path.isdir(path):
        base = Path(path)  # a linked worktree names its own repository
    info = manage.remove_worktree(base, path, force=force)
    detached = detach_worktree(info.path)
    return {"removed": info.to_json(), "detached_sessions": detached}


def resolve_worktree(ref: str, repo: str | os.PathLike[str] | None = None) -> str:
    """The path of the worktree named by a branch (checked out somewhere) or by its path."""
    from agentdex.errors import NotFoundError
    from agentdex.worktrees.validate import cached_worktrees, validate_worktree_path

    base = _repo(repo)
    for refresh in (False, True):
        for entry in cached_worktrees(base, refresh=refresh):
            if entry.branch == ref:
                return entry.path
    looks_like_path = os.sep in ref and (os.path.isabs(ref) or ref.startswith("."))
    if looks_like_path or os.path.isdir(ref):
        return validate_worktree_path(base, ref).path
    raise NotFoundError(f"no worktree has branch '{ref}' checked out")
