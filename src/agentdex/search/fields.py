"""Field filters as SQL over the ``records`` table (and ``files`` for ``path:``)."""

from __future__ import annotations

import os
import sqlite3

from agentdex.search.query import Field

_SUBSTRING_COLUMNS = {"branch": "branch", "model": "model", "host": "host"}
_PATH_COLUMNS = {"project": "project", "cwd": "cwd", "worktree": "worktree"}


def is_path_value(value: str) -> bool:
    """Absolute (or ``~``) values match as a path prefix; others as a substring."""
    return value.startswith(("/", "~", "\\\\")) or (len(value) > 2 and value[1:3] in (":\\", ":/"))


def normalize_path_value(value: str) -> str:
    value = os.path.expanduser(value)
    return value.rstrip("/\\") or value[:1]


def icontains(haystack: str | None, needle: str) -> int:
    return 1 if haystack is not None and needle in haystack.lower() else 0


def register_functions(db: sqlite3.Connection) -> None:
    db.create_function("adx_icontains", 2, icontains, deterministic=True)


def _path_sql(column: str, value: str) -> tuple[str, list[object]]:
    if is_path_value(value):
        prefix = normalize_path_value(value)
        sep = "/" if "/" in prefix or not prefix.startswith("\\") else "\\"
        with_sep = prefix if prefix.endswith(sep) else prefix + sep
        return (
            f"({column} = ? OR substr({column}, 1, ?) = ?)",
            [prefix, len(with_sep), with_sep],
        )
    return f"adx_icontains({column}, ?)", [value.lower()]


def field_sql(field: Field) -> tuple[str, list[object]]:
    """A WHERE fragment (over ``records``) and its parameters."""
    name, value = field.name, field.value
    if name in ("agent", "role", "kind"):
        return f"{name} = ?", [value]
    if name == "session":
        return "substr(session_id, 1, ?) = ?", [len(value), value]
    if name in _PATH_COLUMNS:
        return _path_sql(_PATH_COLUMNS[name], value)
    if name == "path":
        inner, params = _path_sql("path", value)
        return f"file_id IN (SELECT id FROM files WHERE {inner})", params
    if name in _SUBSTRING_COLUMNS:
        return f"adx_icontains({_SUBSTRING_COLUMNS[name]}, ?)", [value.lower()]
    if name == "since":
        return "timestamp >= ?", [field.time]
    if name == "until":
        return "timestamp <= ?", [field.time]
    raise AssertionError(f"unhandled field {name}")
