"""What this machine would send: its index's conversations, as team rows, excluded ones left out.

Read through the index's reader (one SQLite read snapshot, :class:`Engine`) and
the archive's reader (tombstones). A conversation is (agent, session id); its
records come in index order. Each record gets:

* ``rkey``: who it is, stable across rebuilds: the source file (its original
  path, also for records only the archive still holds), the locator, and an
  ordinal among records sharing both;
* ``rhash``: what it says: the text hash and every field a search or a
  transcript shows, and the redaction rule set's id (a new rule set re-sends).

A conversation's ``digest`` hashes its records' keys and hashes in order: equal
digests mean nothing to send. Computing it reads no text.

A record is excluded when its project, working directory or worktree is one of
``[team] exclude`` or inside one (path prefix, as ``project:/path`` matches).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdex.index.files import ARCHIVED_PREFIX

#: the columns read per record (no text): the ``records`` view and the file's path
COLUMNS = (
    "r.id, r.block_id, r.agent, r.store, r.session_id, r.role, r.kind, r.timestamp, r.model,"
    " r.cwd, r.project, r.branch, r.worktree, r.host, r.locator, r.tlen, r.thash, f.path"
)
(
    ID,
    BLOCK,
    AGENT,
    STORE,
    SESSION,
    ROLE,
    KIND,
    TS,
    MODEL,
    CWD,
    PROJECT,
    BRANCH,
    WORKTREE,
    HOST,
    LOCATOR,
    TLEN,
    THASH,
    PATH,
) = range(18)


def _h64(*parts: object) -> int:
    """A signed 63-bit hash (a PostgreSQL bigint) of ``parts``."""
    data = "\x1f".join("" if p is None else str(p) for p in parts).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") >> 1


@dataclass(slots=True)
class LocalRecord:
    row: tuple[Any, ...]
    rkey: bytes
    rhash: int
    source_path: str
    source_gone: bool


@dataclass(slots=True)
class Conversation:
    agent: str
    session_id: str
    records: list[LocalRecord] = field(default_factory=list)
    digest: str = ""
    title: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.agent, self.session_id)

    def summary(self) -> dict[str, Any]:
        """Counts and times for the ``conversations`` row (the rule of ``agentdex sessions``)."""
        rows = [r.row for r in self.records]
        times = [row[TS] for row in rows if row[TS] is not None]
        first = rows[0] if rows else None
        return {
            "title": self.title,
            "project": first[PROJECT] if first else None,
            "cwd": first[CWD] if first else None,
            "records": len(rows),
            "prompts": sum(1 for row in rows if row[KIND] == "prompt"),
            "replies": sum(
                1 for row in rows if row[ROLE] == "assistant" and row[KIND] == "message"
            ),
            "tool_events": sum(1 for row in rows if row[KIND] in ("tool_call", "tool_result")),
            "first_ts": min(times) if times else None,
            "last_ts": max(times) if times else None,
            "source_gone": any(r.source_gone for r in self.records),
        }


def _inside(path: str | None, roots: tuple[str, ...]) -> bool:
    if not path:
        return False
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def context_excluded(
    exclude: Iterable[Path | str],
) -> Callable[[str | None, str | None, str | None], bool]:
    """``excluded(project, cwd, worktree)``: is a record with these paths left home?"""
    roots = tuple(str(Path(p).expanduser()).rstrip("/") or "/" for p in exclude)

    def excluded(project: str | None, cwd: str | None, worktree: str | None) -> bool:
        return bool(roots) and (
            _inside(project, roots) or _inside(cwd, roots) or _inside(worktree, roots)
        )

    return excluded


def excluded_predicate(exclude: Iterable[Path | str]) -> Callable[[tuple[Any, ...]], bool]:
    by_paths = context_excluded(exclude)

    def excluded(row: tuple[Any, ...]) -> bool:
        return by_paths(row[PROJECT], row[CWD], row[WORKTREE])

    return excluded


#: above this share of the conversations, one ordered pass beats a query per conversation
ONE_PASS_SHARE = 0.2


def _rows(db: sqlite3.Connection, only: set[tuple[str, str]] | None) -> Iterator[tuple[Any, ...]]:
    """Record rows in (agent, session, id) order: all, or just those of ``only``."""
    select = f"SELECT {COLUMNS} FROM records r JOIN files f ON f.id = r.file_id"
    if only is None:
        yield from db.execute(select + " ORDER BY r.agent, r.session_id, r.id")
        return
    total = db.execute("SELECT count(*) FROM contexts").fetchone()[0] or 1
    if len(only) > ONE_PASS_SHARE * total:
        for row in db.execute(select + " ORDER BY r.agent, r.session_id, r.id"):
            if (row[AGENT], row[SESSION]) in only:
                yield row
        return
    for agent, session in sorted(only):
        yield from db.execute(
            select + " WHERE r.session_id = ? AND r.agent = ? ORDER BY r.id", (session, agent)
        )


def conversations(
    db: sqlite3.Connection,
    *,
    exclude: Iterable[Path | str] = (),
    redaction_id: str = "",
    forgotten: set[tuple[str, str]] | None = None,
    only: set[tuple[str, str]] | None = None,
) -> Iterator[Conversation]:
    """Every conversation of the index (excluded records left out), in (agent, session) order.

    ``only``: just these conversations (those whose digest is not known yet).
    """
    excluded = excluded_predicate(exclude)
    titles = {(a, s): t for a, s, t in db.execute("SELECT agent, session_id, title FROM titles")}
    current: Conversation | None = None
    seen: dict[tuple[str, str], int] = {}
    for row in _rows(db, only):
        if excluded(row):
            continue
        if current is None or (row[AGENT], row[SESSION]) != current.key:
            if current is not None and current.records:
                yield _finish(current)
            current = Conversation(row[AGENT], row[SESSION])
            current.title = titles.get(current.key)
            seen = {}
        if forgotten and current.key in forgotten:
            continue
        path = row[PATH]
        gone = path.startswith(ARCHIVED_PREFIX)
        source = path[len(ARCHIVED_PREFIX) :] if gone else path
        ident = (source, row[LOCATOR])
        ordinal = seen.get(ident, 0)
        seen[ident] = ordinal + 1
        rkey = hashlib.blake2b(
            f"{source}\x1f{row[LOCATOR]}\x1f{ordinal}".encode("utf-8", "surrogatepass"),
            digest_size=16,
        ).digest()
        rhash = _h64(
            redaction_id,
            row[THASH],
            row[TLEN],
            row[STORE],
            row[ROLE],
            row[KIND],
            repr(row[TS]),
            row[MODEL],
            row[CWD],
            row[PROJECT],
            row[BRANCH],
            row[WORKTREE],
            row[HOST],
            row[LOCATOR],
            source,
            gone,
        )
        current.records.append(LocalRecord(row, rkey, rhash, source, gone))
    if current is not None and current.records:
        yield _finish(current)


def _finish(conv: Conversation) -> Conversation:
    digest = hashlib.blake2b(digest_size=16)
    digest.update((conv.title or "").encode("utf-8", "surrogatepass"))
    for record in conv.records:
        digest.update(record.rkey)
        digest.update(record.rhash.to_bytes(8, "big"))
    conv.digest = digest.hexdigest()
    return conv


def clean_text(text: str) -> str:
    """Text as PostgreSQL can hold it: no NUL, no lone surrogates (each becomes U+FFFD)."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text
