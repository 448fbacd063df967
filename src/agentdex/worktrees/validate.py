"""Path validation against git's own worktree list, cached briefly per repository.

A path is accepted as a worktree only when it appears verbatim (after being
made absolute against the current directory, without resolving symlinks) in
``git worktree list --porcelain``: no normalization tricks, no prefix
matching. Paths with NUL or a ``..`` component are refused before git is asked.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from agentdex.errors import NotFoundError, UsageError
from agentdex.worktrees.git import run_git, toplevel
from agentdex.worktrees.porcelain import WorktreeEntry, parse_worktree_list

DEFAULT_TTL_SECONDS = 5.0

_lock = threading.Lock()
#: absolute directory asked about -> (fetched at, entries)
_cache: dict[str, tuple[float, list[WorktreeEntry]]] = {}


def cache_ttl() -> float:
    """``$AGENTDEX_WORKTREE_CACHE_TTL`` seconds, else 5."""
    raw = os.environ.get("AGENTDEX_WORKTREE_CACHE_TTL")
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_TTL_SECONDS
    except ValueError:
        return DEFAULT_TTL_SECONDS


def fetch_worktrees(repo: Path) -> list[WorktreeEntry]:
    """Ask git now (no cache). The first entry is the primary worktree."""
    proc = run_git(repo, "worktree", "list", "--porcelain", "-z")
    return parse_worktree_list(proc.stdout)


def cached_worktrees(repo: Path, *, refresh: bool = False) -> list[WorktreeEntry]:
    """The worktree list of ``repo``'s repository, at most ``cache_ttl()`` seconds old."""
    key = os.path.abspath(repo)  # a hit costs no git process at all
    now = time.monotonic()
    with _lock:
        hit = _cache.get(key)
        if hit and not refresh and now - hit[0] < cache_ttl():
            return list(hit[1])
    entries = fetch_worktrees(toplevel(repo))
    with _lock:
        _cache[key] = (time.monotonic(), entries)
    return list(entries)


def invalidate(primary: str | None = None) -> None:
    """Drop cached lists (all of them, or every key whose primary is ``primary``)."""
    with _lock:
        if primary is None:
            _cache.clear()
            return
        for key in [k for k, (_, e) in _cache.items() if e and e[0].path == primary]:
            del _cache[key]


def check_path_syntax(path: str) -> str:
    """Refuse NUL and ``..``; return the path made absolute (no symlink resolution)."""
    if not path or "\0" in path:
        raise UsageError("worktree path is empty or contains a NUL byte")
    if ".." in Path(path).parts:
        raise UsageError(f"worktree path must not contain '..': {path}")
    absolute = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    return absolute.rstrip(os.sep) or os.sep


def validate_worktree_path(repo: Path, path: str) -> WorktreeEntry:
    """The entry whose path is exactly ``path``; NotFoundError otherwise.

    A miss re-asks git once, so a worktree added outside agentdex is seen
    without waiting for the TTL.
    """
    wanted = check_path_syntax(path)
    for refresh in (False, True):
        for entry in cached_worktrees(repo, refresh=refresh):
            if entry.path == wanted:
                return entry
    raise NotFoundError(f"not a worktree of this repository: {path}")
