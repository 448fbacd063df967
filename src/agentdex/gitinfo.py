"""Find the project, branch and worktree of a cwd without spawning git.

Reads ``.git`` entries and ``HEAD`` files directly and caches per
directory, so mapping a million records costs a handful of stats per
distinct cwd. A linked worktree is a folder whose ``.git`` is a *file*
pointing into ``<common-dir>/worktrees/<name>``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

#: A record's git placement. ``project`` is the git top-level containing the
#: cwd; ``worktree`` is set only for linked worktrees; ``repository`` is the
#: primary worktree's top-level (the same for every worktree of one repo).


@dataclass(frozen=True, slots=True)
class GitInfo:
    project: str | None
    branch: str | None
    worktree: str | None
    repository: str | None


NO_GIT = GitInfo(None, None, None, None)


def _read_small(path: str, limit: int = 4096) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def _branch_from_head(gitdir: str) -> str | None:
    head = _read_small(os.path.join(gitdir, "HEAD"))
    if head is None:
        return None
    head = head.strip()
    if head.startswith("ref:"):
        ref = head[4:].strip()
        return ref.removeprefix("refs/heads/")
    return head[:7] if head else None


@lru_cache(maxsize=65536)
def git_info(cwd: str) -> GitInfo:
    """Git placement of ``cwd`` (cached). Paths that do not exist give ``NO_GIT``."""
    if not cwd or not os.path.isabs(cwd):
        return NO_GIT
    path = os.path.normpath(cwd)
    while True:
        dotgit = os.path.join(path, ".git")
        try:
            is_dir = os.path.isdir(dotgit)
            is_file = not is_dir and os.path.isfile(dotgit)
        except OSError:
            is_dir = is_file = False
        if is_dir:
            return GitInfo(path, _branch_from_head(dotgit), None, path)
        if is_file:
            content = _read_small(dotgit) or ""
            if content.startswith("gitdir:"):
                gitdir = content[len("gitdir:") :].strip()
                if not os.path.isabs(gitdir):
                    gitdir = os.path.normpath(os.path.join(path, gitdir))
                branch = _branch_from_head(gitdir)
                parent = os.path.dirname(gitdir)
                if os.path.basename(parent) == "worktrees":
                    common = os.path.dirname(parent)
                    repository = os.path.dirname(common) if common.endswith(".git") else None
                    return GitInfo(path, branch, path, repository)
                # A submodule: its own project, not a linked worktree.
                return GitInfo(path, branch, None, path)
        parent = os.path.dirname(path)
        if parent == path:
            return NO_GIT
        path = parent
