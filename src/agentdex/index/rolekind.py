"""A record's role and kind as one small number in SQLite rows, read back by name.

The index's ``record_rows`` and the archive's ``entries`` hold one row per
record; the role and kind as text cost ~16 bytes a row (20 MB of each store
at 1 GB). They are stored as ``rk`` (:func:`agentdex.index.postings.role_kind`,
the number the postings filter on), and ``role``/``kind`` are virtual
generated columns computed from it, so every query reads them by name as
before. A role or kind agentdex does not know (a plugin's) is kept as text
in ``role_x``/``kind_x`` (NULL otherwise: no bytes).
"""

from __future__ import annotations

from agentdex.index.postings import role_kind
from agentdex.records import KINDS, ROLES

_ROLES = frozenset(ROLES)
_KINDS = frozenset(KINDS)


#: :func:`pack` of the (role, kind) string pairs met so far (a build meets a few dozen)
_PACKED: dict[tuple[str, str], tuple[int, str | None, str | None]] = {}


def pack(role: object, kind: object) -> tuple[int, str | None, str | None]:
    """``(rk, role_x, kind_x)``: the stored columns of a role and kind."""
    if type(role) is str and type(kind) is str:
        known = _PACKED.get((role, kind))
        if known is not None:
            return known
    role, kind = str(role), str(kind)
    packed = (
        role_kind(role, kind),
        None if role in _ROLES else role,
        None if kind in _KINDS else kind,
    )
    if len(_PACKED) < 4096:
        _PACKED[(role, kind)] = packed
    return packed


def _case(expr: str, names: tuple[str, ...]) -> str:
    whens = " ".join(f"WHEN {i} THEN '{name}'" for i, name in enumerate(names))
    return f"CASE {expr} {whens} END"


def columns() -> str:
    """The column definitions that replace ``role TEXT, kind TEXT`` in a ``CREATE TABLE``."""
    return (
        "rk INTEGER NOT NULL, role_x TEXT, kind_x TEXT,"
        f" role TEXT GENERATED ALWAYS AS (coalesce(role_x, {_case('rk >> 3', ROLES)})) VIRTUAL,"
        f" kind TEXT GENERATED ALWAYS AS (coalesce(kind_x, {_case('rk & 7', KINDS)})) VIRTUAL"
    )


def code_sql(role: str, kind: str) -> str:
    """SQL computing ``rk`` from text columns ``role`` and ``kind`` (a migration's copy)."""
    role_code = " ".join(f"WHEN '{name}' THEN {i}" for i, name in enumerate(ROLES))
    kind_code = " ".join(f"WHEN '{name}' THEN {i}" for i, name in enumerate(KINDS))
    return (
        f"(CASE {role} {role_code} ELSE {len(ROLES)} END) * 8"
        f" + (CASE {kind} {kind_code} ELSE {len(KINDS)} END)"
    )


def known_sql(column: str, names: tuple[str, ...]) -> str:
    """SQL: ``column`` when it is not one of ``names`` (kept as text), else NULL."""
    listed = ", ".join(f"'{name}'" for name in names)
    return f"CASE WHEN {column} IN ({listed}) THEN NULL ELSE {column} END"
