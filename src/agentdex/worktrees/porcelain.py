"""Parse ``git worktree list --porcelain -z`` and ``git status --porcelain -z``.

The ``-z`` forms are used so paths with newlines or quotes come through
verbatim: git's NUL-separated output is the source of truth for paths.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class WorktreeEntry:
    """One record of ``git worktree list --porcelain``."""

    path: str
    head: str | None = None
    branch: str | None = None  # short name (refs/heads/ stripped); None when detached
    detached: bool = False
    bare: bool = False
    locked: bool = False
    locked_reason: str | None = None
    prunable: bool = False
    prunable_reason: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def parse_worktree_list(output: bytes) -> list[WorktreeEntry]:
    """Records are NUL-terminated attribute lines, separated by an empty attribute."""
    entries: list[WorktreeEntry] = []
    current: WorktreeEntry | None = None
    for raw in output.split(b"\0"):
        line = _decode(raw)
        if not line:
            if current is not None:
                entries.append(current)
                current = None
            continue
        key, _, value = line.partition(" ")
        if key == "worktree":
            if current is not None:
                entries.append(current)
            current = WorktreeEntry(path=value)
            continue
        if current is None:
            continue  # attribute before any 'worktree' line: not in git's format, ignore
        if key == "HEAD":
            current.head = value
        elif key == "branch":
            current.branch = value.removeprefix("refs/heads/")
        elif key == "detached":
            current.detached = True
        elif key == "bare":
            current.bare = True
        elif key == "locked":
            current.locked, current.locked_reason = True, value or None
        elif key == "prunable":
            current.prunable, current.prunable_reason = True, value or None
        else:
            current.extra[key] = value
    if current is not None:
        entries.append(current)
    return entries


def parse_status(output: bytes) -> list[str]:
    """Paths reported by ``git status --porcelain=v1 -z`` (renames count once)."""
    paths: list[str] = []
    fields = output.split(b"\0")
    i = 0
    while i < len(fields):
        item = fields[i]
        i += 1
        if len(item) < 4:
            continue
        status, path = item[:2], item[3:]
        paths.append(_decode(path))
        if status[:1] in (b"R", b"C") or status[1:2] in (b"R", b"C"):
            i += 1  # the rename/copy source follows as its own field
    return paths
