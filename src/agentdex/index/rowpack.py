"""A record's locator and time in fewer bytes in SQLite rows, read back by name.

The index's ``record_rows`` and the archive's ``entries`` hold one row per
record (1.25 million at 1 GB in each). Two of their columns were stored
wider than what they say:

* ``locator``: nearly every record of a JSON Lines store is ``line:N`` or
  ``line:N#M`` (~8 bytes of text). Stored in ``loc`` as one integer
  (:func:`pack_locator`, 2-3 bytes); any other locator stays text there.
* ``timestamp``: a REAL is 8 bytes; an agent's times are whole milliseconds,
  stored in ``ts`` as an integer count of them (6 bytes) when that reads
  back as exactly the same float; any other time stays a REAL there.

``locator`` and ``timestamp`` are virtual generated columns over ``loc`` and
``ts`` (:func:`columns`), so every query reads them by name as before; an
INSERT writes ``loc, ts`` (:func:`pack_locator`, :func:`pack_time`). ``loc``
and ``ts`` have no type: SQLite keeps what it is given (an integer or text,
an integer or a REAL) with no conversion.
"""

from __future__ import annotations

import re

#: ``line:N`` (N without leading zeros) and ``line:N#M`` with M < ``_PARTS``
_LINE = re.compile(r"line:(0|[1-9][0-9]{0,14})(?:#(0|[1-9][0-9]?))?")
_PARTS = 16
#: integers up to this size read back as exact floats (a time in ms, a locator's code)
_EXACT = 2**53

#: SQL of ``locator`` from ``loc``: even integers are ``line:N`` (N = loc / 2), odd ones
#: ``line:N#M`` (loc = (N * 16 + M) * 2 + 1), text is the locator itself
LOCATOR_SQL = (
    "CASE WHEN typeof(loc) = 'integer' THEN CASE WHEN loc & 1 = 0 THEN 'line:' || (loc >> 1)"
    " ELSE 'line:' || (loc >> 5) || '#' || ((loc >> 1) & 15) END ELSE loc END"
)
#: SQL of ``timestamp`` from ``ts``: an integer is milliseconds, anything else the time
TIMESTAMP_SQL = "CASE WHEN typeof(ts) = 'integer' THEN ts / 1000.0 ELSE ts END"


def pack_locator(locator: object) -> int | str:
    """The stored ``loc`` of a locator: an integer for ``line:N`` / ``line:N#M``, else the
    locator as text (what the ``TEXT`` column it replaces kept)."""
    if not isinstance(locator, str):
        return str(locator)
    if locator.startswith("line:"):
        # most locators: ``line:N`` (what the regex below takes, without it)
        digits = locator[5:]
        if (
            digits.isdigit()
            and digits.isascii()
            and len(digits) <= 15
            and (digits[0] != "0" or len(digits) == 1)
        ):
            return int(digits) << 1
    found = _LINE.fullmatch(locator) if locator.startswith("line:") else None
    if found is None:
        return locator
    line = int(found.group(1))
    part = found.group(2)
    if part is None:
        return line << 1 if line < _EXACT else locator
    index = int(part)
    if index >= _PARTS or line >= _EXACT >> 5:
        return locator
    return (((line << 4) | index) << 1) | 1


def unpack_locator(loc: int | str) -> str:
    """The locator of a stored ``loc`` (what :data:`LOCATOR_SQL` computes)."""
    if isinstance(loc, str):
        return loc
    if loc & 1 == 0:
        return f"line:{loc >> 1}"
    return f"line:{loc >> 5}#{(loc >> 1) & 15}"


def pack_time(timestamp: object) -> int | float | str | None:
    """The stored ``ts`` of a record time: whole milliseconds as an integer when they read
    back (``ms / 1000``) as exactly the same float, else the time as it is (None: none)."""
    if timestamp is None or isinstance(timestamp, str):
        return timestamp
    if isinstance(timestamp, bool) or not isinstance(timestamp, int | float):
        return str(timestamp)
    try:
        ms = round(timestamp * 1000)
    except (OverflowError, ValueError):  # inf, nan
        return timestamp
    if -_EXACT < ms < _EXACT and ms / 1000 == timestamp:
        return ms
    return timestamp


def unpack_time(ts: object) -> object:
    """The record time of a stored ``ts`` (what :data:`TIMESTAMP_SQL` computes)."""
    if isinstance(ts, int) and not isinstance(ts, bool):
        return ts / 1000
    return ts


def columns() -> str:
    """The column definitions that replace ``timestamp REAL, locator TEXT NOT NULL`` in a
    ``CREATE TABLE`` (``ts``, ``loc`` stored; ``timestamp``, ``locator`` virtual)."""
    return (
        "ts, loc NOT NULL,"
        f" timestamp REAL GENERATED ALWAYS AS ({TIMESTAMP_SQL}) VIRTUAL,"
        f" locator TEXT GENERATED ALWAYS AS ({LOCATOR_SQL}) VIRTUAL"
    )


#: the columns :func:`columns` replaces, as the stores' earlier ``CREATE TABLE`` wrote them
WIDE = "timestamp REAL,\n            locator TEXT NOT NULL,"


def narrowed(ddl: str, *also: tuple[str, str]) -> str:
    """``ddl`` (a ``CREATE TABLE`` of record rows as the stores wrote it before) with
    :data:`WIDE` replaced by :func:`columns`, and each ``(old, new)`` of ``also``."""
    for old, new in ((WIDE, columns() + ","), *also):
        if old not in ddl:
            raise ValueError(f"not in the table's definition: {old!r}")
        ddl = ddl.replace(old, new)
    return ddl
