"""Which conversations a push must read, from the index's rows alone (no record read).

A conversation's digest (:mod:`agentdex.team.local`) needs every record's
metadata and hash: 1.25 M records took minutes to read and hash. Most of a
second push is unchanged, and the index says so cheaply:

* record rows are never changed in place (a changed transcript's records are
  deleted and written again, with new ids), and neither are ``contexts`` rows
  (agent, session, paths, model: a new combination is a new row);
* so per context, ``(count, sum of ids, newest id)`` (one pass over the
  ``record_rows_context`` index, no table read) changes whenever its records
  do; the one thing that changes under a record without a new id is its
  file's ``path`` (a source deleted and kept by the archive: ``archived:``),
  so a file whose path changed marks its contexts changed.

A conversation's **signature** hashes its contexts' triples, its title, the
generation and the settings that shape what is sent (redaction rules, excluded
projects). A :class:`Memo` (a JSON file beside the index) remembers, from the
last push or status, each signature's digest and record count; a conversation
whose signature is remembered needs no reading at all. The memo is a cache of
facts about this index only: a lost or stale memo costs time, never rows (a
remembered digest is still compared with the server's).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdex.team.local import Conversation, context_excluded

Key = tuple[str, str]
MEMO_FORMAT = 1


@dataclass(slots=True)
class Survey:
    """Every conversation a push would send: its signature, record count, and digest if known."""

    signatures: dict[Key, str] = field(default_factory=dict)
    records: dict[Key, int] = field(default_factory=dict)
    known: dict[Key, str] = field(default_factory=dict)

    def unknown(self) -> set[Key]:
        return set(self.signatures) - set(self.known)


def generation_of(db: sqlite3.Connection) -> str:
    """The generation this connection reads (its file path and the file's inode)."""
    path = next((row[2] for row in db.execute("PRAGMA database_list") if row[1] == "main"), "")
    try:
        inode = os.stat(path).st_ino if path else 0
    except OSError:
        inode = 0
    return f"{path}#{inode}"


class Memo:
    """Signature -> (digest, records) from an earlier run on this index (see the module doc)."""

    def __init__(self, path: Path | None, header: dict[str, Any]) -> None:
        self.path = path
        self.header = header
        self.entries: dict[str, list[Any]] = {}
        self.files: dict[str, str] = {}
        if path is None:
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or data.get("header") != header:
            return
        entries, files = data.get("entries"), data.get("files")
        if isinstance(entries, dict) and isinstance(files, dict):
            self.entries, self.files = entries, files

    def save(self, survey: Survey, files: dict[str, str]) -> None:
        """Write what is known now (atomically; a failure only costs the next run time)."""
        if self.path is None:
            return
        from agentdex.paths import ensure_private_dir, open_private

        entries = {
            sig: [survey.known[key], survey.records[key]]
            for key, sig in survey.signatures.items()
            if key in survey.known
        }
        data = {"header": self.header, "files": files, "entries": entries}
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        try:
            ensure_private_dir(self.path.parent)
            with open_private(tmp) as out:
                out.write(json.dumps(data, separators=(",", ":")).encode("utf-8", "surrogatepass"))
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)


def _file_paths(db: sqlite3.Connection) -> dict[str, str]:
    out = {}
    for fid, path in db.execute("SELECT id, path FROM files"):
        out[str(fid)] = hashlib.blake2b(
            path.encode("utf-8", "surrogatepass"), digest_size=8
        ).hexdigest()
    return out


def survey(
    db: sqlite3.Connection, *, exclude: Iterable[Path | str], memo: Memo
) -> tuple[Survey, dict[str, str]]:
    """Every conversation's signature and count; digests the memo already knows.

    Returns the survey and the files' path hashes (for :meth:`Memo.save`).
    """
    excluded = context_excluded(exclude)
    contexts: dict[int, Key] = {}
    for cid, agent, session, cwd, project, worktree in db.execute(
        "SELECT id, agent, session_id, cwd, project, worktree FROM contexts"
    ):
        if not excluded(project, cwd, worktree):
            contexts[cid] = (agent, session)
    files = _file_paths(db)
    moved = [int(fid) for fid, h in files.items() if memo.files.get(fid, h) != h]
    dirty: set[int] = set()
    for fid in moved:
        dirty.update(
            cid
            for (cid,) in db.execute(
                "SELECT DISTINCT context_id FROM record_rows WHERE file_id = ?", (fid,)
            )
        )
    parts: dict[Key, list[tuple[int, int, int, int]]] = {}
    counts: dict[Key, int] = {}
    for cid, count, total, newest in db.execute(
        "SELECT context_id, count(*), sum(id), max(id) FROM record_rows GROUP BY context_id"
    ):
        key = contexts.get(cid)
        if key is None:
            continue
        parts.setdefault(key, []).append((cid, count, total, newest))
        counts[key] = counts.get(key, 0) + count
    titles = {(a, s): t for a, s, t in db.execute("SELECT agent, session_id, title FROM titles")}
    dirty_keys = {contexts[c] for c in dirty if c in contexts}
    out = Survey()
    for key, triples in parts.items():
        text = json.dumps([memo.header, titles.get(key), sorted(triples)], separators=(",", ":"))
        sig = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        out.signatures[key] = sig
        out.records[key] = counts[key]
        entry = memo.entries.get(sig)
        if entry is not None and key not in dirty_keys and entry[1] == counts[key]:
            out.known[key] = str(entry[0])
    return out, files


def learn(result: Survey, conversations: Iterable[Conversation]) -> None:
    """Take the digests of conversations read in full into the survey."""
    for conv in conversations:
        if conv.key in result.signatures:
            result.known[conv.key] = conv.digest
