"""Read-only access to agent stores: JSONL streaming, capped JSON, SQLite.

Every byte agentdex reads from an agent's store goes through here, so the
two store rules live in one place: never open a secret, never write or
lock. JSONL is streamed line by line with byte offsets (memory stays flat
however large the file); SQLite is opened so that the agent's WAL is seen
and not a byte or mtime of the store changes, ``-shm`` included
(:func:`connect_readonly`).
"""

from __future__ import annotations

import fnmatch
import os
import re
import sqlite3
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentdex.nesting import MAX_NESTING, cut_deep, may_be_deeper

#: Lines longer than this are skipped with a diagnostic instead of decoded.
MAX_LINE_BYTES = 32 * 1024 * 1024
#: Whole-document JSON files larger than this are skipped with a diagnostic.
MAX_JSON_BYTES = 256 * 1024 * 1024
#: Diagnostics kept per run (the count keeps going).
MAX_DIAGNOSTICS = 200
#: Distinct unrecognised (what, name, version) kept per run; sightings are always counted.
MAX_DRIFT = 500

#: Names that are secrets wherever they appear. Matched case-insensitively.
SECRET_NAMES = (
    "auth.json",
    ".credentials.json",
    "credentials",
    "credentials.*",
    "credentials*.json",
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    ".netrc",
    "oauth_creds.json",
    "google_accounts.json",
)
#: all of SECRET_NAMES as one pattern: discovery tests every store file it finds
_SECRET_NAME = re.compile("|".join(fnmatch.translate(name) for name in SECRET_NAMES))


#: Diagnostics (besides those starting "unreadable") that mean a store could not be read
#: *this time*: locked, busy, an I/O error. The index retries such a file next run.
TRANSIENT_SQLITE = (
    "database is locked",
    "database is busy",
    "database table is locked",
    "disk i/o error",
    "unable to open database file",
)


def is_read_failure(message: str) -> bool:
    """Does this diagnostic say the file could not be read (as opposed to parsed)?"""
    lowered = message.lower()
    return lowered.startswith("unreadable") or any(mark in lowered for mark in TRANSIENT_SQLITE)


def is_one_of(value: object, names: Collection[object]) -> bool:
    """``value in names`` for a value read from a file: a list or an object (unhashable)
    where a type name belongs is never one of them, and never a TypeError."""
    try:
        return value in names
    except TypeError:
        return False


class SecretPathError(PermissionError):
    """Raised when code tries to open a path that names a secret."""


def is_secret(path: str | os.PathLike[str]) -> bool:
    """True when the file name is one agentdex must never open.

    >>> is_secret("/home/u/.codex/auth.json"), is_secret("/p/.env.local"), is_secret("/p/a.jsonl")
    (True, True, False)
    """
    name = os.path.basename(os.fspath(path)).lower()
    return _SECRET_NAME.match(name) is not None


def guard(path: str | os.PathLike[str]) -> None:
    """Refuse secrets before any open."""
    if is_secret(path):
        raise SecretPathError(f"refusing to open a secret: {os.fspath(path)}")


@dataclass(slots=True)
class Diagnostic:
    path: str
    locator: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "locator": self.locator, "message": self.message}


@dataclass(slots=True)
class Drift:
    """Something an agent wrote that its parser does not recognise (format drift).

    ``what`` says which vocabulary it is missing from: ``record type``,
    ``subtype``, ``part type``, ``content block``, ``field``... (the agent's own
    words where it has them); ``name`` is the value or field name seen;
    ``version`` is the agent version the file says wrote it ("" when it says
    none). ``count`` counts every sighting; ``path``/``locator`` are the first.
    """

    what: str
    name: str
    version: str
    count: int
    path: str
    locator: str

    def to_json(self) -> dict[str, object]:
        return {
            "what": self.what,
            "name": self.name,
            "version": self.version,
            "count": self.count,
            "path": self.path,
            "locator": self.locator,
        }


@dataclass(slots=True)
class Diagnostics:
    """Skips and oddities found while reading; capped, but always counted.

    :meth:`unrecognised` is the one way every parser reports format drift: a
    record type, part or field it does not know is counted per kind, name and
    agent version (``agentdex audit`` lists them), not logged per line.
    """

    items: list[Diagnostic] = field(default_factory=list)
    count: int = 0
    drift: dict[tuple[str, str, str], Drift] = field(default_factory=dict)

    def add(self, path: str | os.PathLike[str], locator: str, message: str) -> None:
        self.count += 1
        if len(self.items) < MAX_DIAGNOSTICS:
            self.items.append(Diagnostic(os.fspath(path), locator, message))

    def unrecognised(
        self,
        what: str,
        name: object,
        *,
        version: object = None,
        path: str | os.PathLike[str] = "",
        locator: str = "",
        count: int = 1,
    ) -> None:
        """Note ``count`` sightings of a ``what`` (``record type``, ``field``...) named ``name``
        this parser does not know, as written by agent ``version`` (None or "" when the file
        does not say)."""
        label = name if isinstance(name, str) else repr(name)
        key = (what, label[:200], version if isinstance(version, str) else "")
        found = self.drift.get(key)
        if found is not None:
            found.count += count
        elif len(self.drift) < MAX_DRIFT:
            self.drift[key] = Drift(*key, count, os.fspath(path), locator)


@dataclass(slots=True)
class JsonlLine:
    offset: int
    lineno: int
    value: Any
    complete: bool  # False for a last line with no trailing newline


class JsonlReader:
    """Stream JSON lines from ``start`` with offsets; skip bad lines with a diagnostic.

    After iteration, ``resume_offset``/``resume_line`` point just past the
    last newline-terminated line: where an append-only resume starts next
    time. A last line without a newline is yielded when it decodes (and
    stays before the resume point, so it is read again next time) and
    reported as incomplete when it does not.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        diagnostics: Diagnostics,
        *,
        start_offset: int = 0,
        start_line: int = 0,
    ) -> None:
        guard(path)
        self.path = os.fspath(path)
        self.diagnostics = diagnostics
        self.resume_offset = start_offset
        self.resume_line = start_line
        self.lines_read = 0
        self.bad_lines = 0

    def __iter__(self) -> Iterator[JsonlLine]:
        loads = orjson.loads
        offset = self.resume_offset
        lineno = self.resume_line
        with open(self.path, "rb") as handle:
            if offset:
                handle.seek(offset)
            readline = handle.readline
            while True:
                raw = readline(MAX_LINE_BYTES + 1)
                if not raw:
                    break
                start = offset
                lineno += 1
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    skipped = len(raw)
                    while raw and not raw.endswith(b"\n"):
                        raw = readline(1 << 20)
                        skipped += len(raw)
                    offset += skipped
                    self.diagnostics.add(
                        self.path, f"line:{lineno}", f"line of {skipped} bytes skipped (too long)"
                    )
                    self.bad_lines += 1
                    if raw.endswith(b"\n"):
                        self.resume_offset, self.resume_line = offset, lineno
                    continue
                offset += len(raw)
                complete = raw.endswith(b"\n")
                if complete:
                    self.resume_offset, self.resume_line = offset, lineno
                self.lines_read += 1
                # the line as read first: orjson takes the white space JSON allows around a
                # value, so a line that decodes so decodes stripped to the same value (a copy
                # of every line less); any other line is stripped and decoded as before
                try:
                    value = loads(raw)
                except orjson.JSONDecodeError:
                    raw = raw.strip()
                    if not raw:
                        continue
                    try:
                        value = loads(raw)
                    except orjson.JSONDecodeError as exc:
                        value = self._lenient(raw)
                        if value is None:
                            if complete:
                                self.bad_lines += 1
                                self.diagnostics.add(self.path, f"line:{lineno}", _not_json(exc))
                            else:
                                self.diagnostics.add(
                                    self.path, f"line:{lineno}", "incomplete last line; will retry"
                                )
                            continue
                # may_be_deeper inlined: one pass (a copy less the brackets) instead of
                # two counts and a call, for every line of every build (white space around
                # the value holds none)
                brackets = len(raw) - len(raw.translate(None, b"[{"))
                if brackets > MAX_NESTING and cut_deep(value):
                    self.diagnostics.add(self.path, f"line:{lineno}", _CUT)
                yield JsonlLine(start, lineno, value, complete)

    def _lenient(self, raw: bytes) -> Any:
        """Decode a line whose only fault is invalid UTF-8; None if it is not JSON at all."""
        try:
            text = raw.decode("utf-8", "replace")
            value = orjson.loads(text)
        except (orjson.JSONDecodeError, ValueError):
            return None
        self.diagnostics.add(self.path, "", "invalid UTF-8 replaced")
        return value


_CUT = f"values nested deeper than {MAX_NESTING} levels were cut"


def _not_json(exc: orjson.JSONDecodeError) -> str:
    if "depth" in str(exc) or "ecursion" in str(exc):
        return "nested too deeply to decode; skipped"
    return "not JSON; skipped"


def read_json(path: str | os.PathLike[str], diagnostics: Diagnostics) -> Any:
    """Decode a whole JSON document; ``None`` (with a diagnostic) when it cannot be.

    Containers nested deeper than ``MAX_NESTING`` levels are cut (with a
    diagnostic), so no parser walking the document can exhaust the stack.
    """
    guard(path)
    try:
        size = os.stat(path).st_size
        if size > MAX_JSON_BYTES:
            diagnostics.add(path, "", f"JSON file of {size} bytes skipped (too large)")
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        diagnostics.add(path, "", f"unreadable: {exc.strerror or exc}")
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        try:
            value = orjson.loads(data.decode("utf-8", "replace"))
        except (orjson.JSONDecodeError, ValueError):
            message = _not_json(exc)
            diagnostics.add(path, "", message if "deeply" in message else "not valid JSON; skipped")
            return None
    if may_be_deeper(data) and cut_deep(value):
        diagnostics.add(path, "", _CUT)
    return value


def connect_readonly(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """Open an agent's SQLite store for reading without changing a byte or mtime of it.

    * rollback-journal database: ``mode=ro`` (readers only take fcntl locks);
    * WAL database with no (or an empty) ``-wal``: ``mode=ro&immutable=1``,
      everything is in the main file and no ``-shm`` is touched;
    * WAL database with a ``-wal``: a ``mode=ro`` reader would write its read
      mark into the agent's ``-shm`` (new bytes, new mtime), and ``immutable``
      would not see the WAL. So the main file and its ``-wal`` are copied
      (plain reads) into a private directory, checked unchanged by the copy,
      and the copy is opened; it is deleted when the connection closes.
    """
    guard(path)
    source = Path(os.fspath(path)).absolute()
    if _is_wal(source):
        wal = Path(f"{source}-wal")
        try:
            has_wal = wal.stat().st_size > 0
        except FileNotFoundError:
            has_wal = False
        if has_wal:
            return _open_snapshot(source, wal)
        uri = source.as_uri() + "?mode=ro&immutable=1"
    else:
        uri = source.as_uri() + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=2.0, check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    return conn


#: Attempts at copying a WAL database that keeps changing under the copy.
SNAPSHOT_ATTEMPTS = 3


def _is_wal(path: Path) -> bool:
    """Is the header's file format version 2 (WAL)? False when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    return header.startswith(b"SQLite format 3\x00") and header[18:20] == b"\x02\x02"


class _SnapshotConnection(sqlite3.Connection):
    """A connection to a private copy; closing it deletes the copy."""

    snapshot_dir: str | None = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            _remove_snapshot(self.snapshot_dir)
            self.snapshot_dir = None


def _remove_snapshot(directory: str | None) -> None:
    if directory is not None:
        import shutil

        shutil.rmtree(directory, ignore_errors=True)


def _stamp(*paths: Path) -> tuple[tuple[int, int, int], ...]:
    out = []
    for item in paths:
        st = os.stat(item)
        out.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


def _open_snapshot(source: Path, wal: Path) -> sqlite3.Connection:
    """Copy ``source`` and its ``-wal`` privately and open the copy (see connect_readonly)."""
    import shutil
    import tempfile
    import weakref

    from agentdex.paths import data_dir, ensure_private_dir

    directory = tempfile.mkdtemp(prefix="sqlite-", dir=ensure_private_dir(data_dir() / "tmp"))
    copy = Path(directory) / source.name
    try:
        for _attempt in range(SNAPSHOT_ATTEMPTS):
            before = _stamp(source, wal)
            shutil.copyfile(source, copy)
            shutil.copyfile(wal, f"{copy}-wal")
            if _stamp(source, wal) == before:
                break
        else:
            raise sqlite3.OperationalError(
                "database is busy: it kept changing while being copied for reading"
            )
        conn = sqlite3.connect(
            copy, timeout=2.0, check_same_thread=False, factory=_SnapshotConnection
        )
    except BaseException:
        _remove_snapshot(directory)
        raise
    assert isinstance(conn, _SnapshotConnection)
    conn.snapshot_dir = directory
    weakref.finalize(conn, _remove_snapshot, directory)
    conn.execute("PRAGMA query_only = 1")
    return conn
