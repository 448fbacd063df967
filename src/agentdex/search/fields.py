"""Field filters as SQL over the ``records`` table (and ``files`` for ``path:``)."""

from __future__ import annotations

import os
import sqlite3

from agentdex.index.files import ARCHIVED_PREFIX, original_path
from agentdex.search.query import Field

#: ``files.path`` as the source path: records kept from the archive match their original path
_SOURCE_PATH_SQL = (
    f"(CASE WHEN substr(path, 1, {len(ARCHIVED_PREFIX)}) = '{ARCHIVED_PREFIX}'"
    f" THEN substr(path, {len(ARCHIVED_PREFIX) + 1}) ELSE path END)"
)

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
        inner, params = _path_sql(_SOURCE_PATH_SQL, value)
        return f"file_id IN (SELECT id FROM files WHERE {inner})", params
    if name in _SUBSTRING_COLUMNS:
        return f"adx_icontains({_SUBSTRING_COLUMNS[name]}, ?)", [value.lower()]
    if name == "since":
        return "timestamp >= ?", [field.time]
    if name == "until":
        return "timestamp <= ?", [field.time]
    raise AssertionError(f"unhandled field {name}")


def field_matches_value(field: Field, value: str) -> bool:
    """Does one stored value (of the field's column) satisfy ``field``? Same rules as the SQL."""
    name, wanted = field.name, field.value
    if name in ("agent", "role", "kind"):
        return value == wanted
    if name == "session":
        return value.startswith(wanted)
    if name in _PATH_COLUMNS or name == "path":
        if is_path_value(wanted):
            prefix = normalize_path_value(wanted)
            sep = "/" if "/" in prefix or not prefix.startswith("\\") else "\\"
            with_sep = prefix if prefix.endswith(sep) else prefix + sep
            return value == prefix or value.startswith(with_sep)
        return wanted.lower() in value.lower()
    if name in _SUBSTRING_COLUMNS:
        return wanted.lower() in value.lower()
    raise AssertionError(f"{name}: not a value field")


#: field name -> the ``records`` column it reads, for checking one record in Python
FIELD_COLUMNS = {
    "agent": "agent",
    "role": "role",
    "kind": "kind",
    "session": "session_id",
    "project": "project",
    "cwd": "cwd",
    "worktree": "worktree",
    "branch": "branch",
    "model": "model",
    "host": "host",
    "path": "path",
}


def field_matches(field: Field, values: dict[str, object]) -> bool:
    """Does one record (its columns, ``path`` = source file, ``timestamp``) satisfy ``field``?"""
    if field.name in ("since", "until"):
        ts = values.get("timestamp")
        if not isinstance(ts, int | float) or field.time is None:
            return False
        return ts >= field.time if field.name == "since" else ts <= field.time
    value = values.get(FIELD_COLUMNS[field.name])
    if field.name == "path" and isinstance(value, str):
        value = original_path(value)
    return isinstance(value, str) and field_matches_value(field, value)


def path_file_ids(db: sqlite3.Connection, value: str) -> list[int]:
    """Ids of indexed source files whose path satisfies ``path:value``."""
    field = Field("path", value)
    return [
        fid
        for fid, path in db.execute("SELECT id, path FROM files")
        if field_matches_value(field, original_path(path))
    ]
