"""Sibling folder names for worktrees: ``<repo-dir-name>-wt-<sanitized-branch>``."""

from __future__ import annotations

import re
from pathlib import Path

MAX_SANITIZED_LENGTH = 50
FALLBACK_NAME = "worktree"
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9_-]+")
_DASH_RUN = re.compile(r"-{2,}")


def sanitize_branch(branch: str) -> str:
    """A folder-safe, lowercase form of ``branch``.

    >>> sanitize_branch("feature/Auth")
    'feature-auth'
    >>> sanitize_branch("a//b..c")
    'a-b-c'
    >>> sanitize_branch("///")
    'worktree'
    """
    name = _UNSAFE_RUN.sub("-", branch)
    name = _DASH_RUN.sub("-", name).strip("-").lower()
    name = name[:MAX_SANITIZED_LENGTH].strip("-")
    return name or FALLBACK_NAME


def sibling_path(primary: Path, branch: str) -> Path:
    """Where ``branch``'s worktree goes: beside the primary worktree."""
    return primary.parent / f"{primary.name}-wt-{sanitize_branch(branch)}"
