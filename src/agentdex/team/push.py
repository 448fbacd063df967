"""``team push``: make the team database hold exactly this machine's conversations.

Incremental: the database keeps each conversation's digest
(:mod:`agentdex.team.local`); only conversations whose digest differs are
sent, and within one only the records that are new or changed (by key and
hash); records the machine no longer has are deleted, and so are conversations
(forgotten ones leave a tombstone row). A second push with nothing changed
sends nothing.

Batched and crash-safe: changed conversations are grouped into batches (up to
``batch_records`` records or ``batch_bytes`` of text); one batch is one
transaction that writes its conversations' rows *and* their digests, so a push
killed at any point (SIGKILL, a lost network) leaves whole conversations as of
this push or as of the last one, never a half, and the next push, comparing
digests, sends exactly what is still missing. ``agentdex.pushes`` logs every
push; one that never finished reads ``interrupted``.

One push per machine at a time: a session-level advisory lock (released by the
server when a killed client's connection drops).

Privacy: every text and title passes ``redact`` before it is sent; records of
excluded projects are never read past their metadata.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from agentdex.errors import ConflictError
from agentdex.index.scores import level_of
from agentdex.team import schema
from agentdex.team.connect import TeamPermission, talking
from agentdex.team.local import (
    BLOCK,
    ID,
    TS,
    Conversation,
    LocalRecord,
    clean_text,
)
from agentdex.team.survey import Key, Survey

BATCH_RECORDS = 5000
BATCH_BYTES = 16 << 20
RECORD_COLUMNS = (
    "machine, agent, store, session_id, rkey, rhash, position, role, kind, ts, model, cwd,"
    " project, branch, worktree, host, source_path, locator, source_gone, tlen, thash, level, text"
)


@dataclass(slots=True)
class PushResult:
    machine: str
    url: str
    conversations_local: int = 0
    conversations_sent: int = 0
    conversations_unchanged: int = 0
    conversations_removed: int = 0
    records_added: int = 0
    records_removed: int = 0
    bytes_sent: int = 0
    batches: int = 0
    tombstones: int = 0
    redactions: int = 0
    seconds: float = 0.0
    push_id: int | None = None
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


Redact = Callable[[str], tuple[str, int]]
TextOf = Callable[[int, int], str]


class Pusher:
    """One push of one machine over one connection (see the module docstring)."""

    def __init__(
        self,
        conn: Any,
        *,
        masked: str,
        machine: str,
        text_of: TextOf,
        redact: Redact,
        batch_records: int = BATCH_RECORDS,
        batch_bytes: int = BATCH_BYTES,
        progress: Callable[[PushResult], None] | None = None,
    ) -> None:
        self.conn = conn
        self.masked = masked
        self.machine = machine
        self.text_of = text_of
        self.redact = redact
        self.batch_records = batch_records
        self.batch_bytes = batch_bytes
        self.progress = progress
        self.result = PushResult(machine=machine, url=masked)
        self._batch: list[Conversation] = []
        self._batch_size = 0

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[Any]:
        """One transaction (committed, or rolled back whole), errors as one line."""
        with talking(self.masked, doing), self.conn.transaction(), self.conn.cursor() as cur:
            yield cur

    # -- the steps ------------------------------------------------------------------------------
    def begin(self) -> None:
        """Check the schema, take the machine's lock, claim its name, log the push."""
        with talking(self.masked, "starting the push"), self.conn.cursor() as cur:
            schema.check(cur, masked=self.masked)
            cur.execute(
                "SELECT pg_try_advisory_lock(hashtext('agentdex push'), hashtext(%s))",
                (self.machine,),
            )
            if not cur.fetchone()[0]:
                raise ConflictError(
                    f"another push from machine {self.machine!r} is running; try again when it ends"
                )
            cur.execute(
                "INSERT INTO agentdex.machines (machine) VALUES (%s)"
                " ON CONFLICT (machine) DO NOTHING",
                (self.machine,),
            )
            cur.execute(
                "SELECT owner, owner = current_user FROM agentdex.machines WHERE machine = %s",
                (self.machine,),
            )
            owner, mine = cur.fetchone()
            if not mine:
                raise TeamPermission(
                    f"machine name {self.machine!r} belongs to the role {owner!r}; this machine"
                    " pushes under its own name (AGENTDEX_MACHINE or [team] machine)"
                )
            cur.execute(
                "UPDATE agentdex.pushes SET status = 'interrupted'"
                " WHERE machine = %s AND status = 'running'",
                (self.machine,),
            )
            cur.execute(
                "INSERT INTO agentdex.pushes (machine) VALUES (%s) RETURNING id", (self.machine,)
            )
            self.result.push_id = cur.fetchone()[0]

    def server_digests(self) -> dict[tuple[str, str], str]:
        with talking(self.masked, "reading what was pushed"), self.conn.cursor() as cur:
            cur.execute(
                "SELECT agent, session_id, digest FROM agentdex.conversations WHERE machine = %s",
                (self.machine,),
            )
            return {(a, s): d for a, s, d in cur.fetchall()}

    def tombstones(
        self, forgotten: Iterable[tuple[str, str]], pushed: set[tuple[str, str]]
    ) -> None:
        """Forgotten conversations: a tombstone row, and their rows go (one transaction)."""
        pairs = sorted(set(forgotten))
        if not pairs:
            return
        with self._transaction("pushing tombstones") as cur:
            cur.executemany(
                "INSERT INTO agentdex.tombstones (machine, agent, session_id)"
                " VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(self.machine, a, s) for a, s in pairs],
            )
            gone = [(a, s) for a, s in pairs if (a, s) in pushed]
            for agent, session in gone:
                cur.execute(
                    "DELETE FROM agentdex.conversations"
                    " WHERE machine = %s AND agent = %s AND session_id = %s",
                    (self.machine, agent, session),
                )
        self.result.tombstones = len(pairs)

    def add(self, conv: Conversation) -> None:
        """Queue a changed conversation; sends a batch when it is full."""
        self._batch.append(conv)
        self._batch_size += sum(r.row[15] for r in conv.records)  # tlen
        if (
            sum(len(c.records) for c in self._batch) >= self.batch_records
            or self._batch_size >= self.batch_bytes
        ):
            self.flush()

    def flush(self) -> None:
        if not self._batch:
            return
        batch, self._batch, self._batch_size = self._batch, [], 0
        with self._transaction("pushing") as cur:
            self._send(cur, batch)
        self.result.batches += 1
        self.result.conversations_sent += len(batch)
        if self.progress is not None:
            self.progress(self.result)

    def remove(self, keys: Iterable[tuple[str, str]]) -> None:
        """Delete conversations this machine no longer has (their records cascade)."""
        keys = sorted(keys)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            with self._transaction("removing conversations") as cur:
                cur.execute(
                    "WITH gone AS (DELETE FROM agentdex.conversations c"
                    " USING unnest(%s::text[], %s::text[]) AS k(agent, session_id)"
                    " WHERE c.machine = %s AND c.agent = k.agent"
                    " AND c.session_id = k.session_id RETURNING c.records)"
                    " SELECT count(*), coalesce(sum(records), 0) FROM gone",
                    ([a for a, _ in chunk], [s for _, s in chunk], self.machine),
                )
                count, records = cur.fetchone()
            self.result.conversations_removed += count
            self.result.records_removed += int(records)

    def finish(self) -> None:
        with talking(self.masked, "finishing the push"), self.conn.cursor() as cur:
            r = self.result
            cur.execute(
                "UPDATE agentdex.pushes SET status = 'done', finished_at = now(),"
                " conversations = %s, records_added = %s, records_removed = %s, bytes = %s"
                " WHERE id = %s",
                (
                    r.conversations_sent + r.conversations_removed,
                    r.records_added,
                    r.records_removed,
                    r.bytes_sent,
                    r.push_id,
                ),
            )
            cur.execute(
                "UPDATE agentdex.machines SET last_push = now() WHERE machine = %s",
                (self.machine,),
            )
            cur.execute(
                "SELECT pg_advisory_unlock(hashtext('agentdex push'), hashtext(%s))",
                (self.machine,),
            )

    # -- one batch -----------------------------------------------------------------------------
    def _send(self, cur: Any, batch: list[Conversation]) -> None:
        agents = [c.agent for c in batch]
        sessions = [c.session_id for c in batch]
        cur.execute(
            "SELECT r.agent, r.session_id, r.rkey, r.rhash, r.position, r.id"
            " FROM agentdex.records r"
            " JOIN unnest(%s::text[], %s::text[]) AS k(agent, session_id)"
            " ON r.agent = k.agent AND r.session_id = k.session_id WHERE r.machine = %s",
            (agents, sessions, self.machine),
        )
        existing: dict[tuple[str, str, bytes], tuple[int, int, int]] = {}
        for agent, session, rkey, rhash, position, rid in cur.fetchall():
            existing[(agent, session, bytes(rkey))] = (rhash, position, rid)
        stale: list[int] = []
        fresh: list[tuple[Conversation, int, LocalRecord]] = []
        for conv in batch:
            keep: set[bytes] = set()
            for position, record in enumerate(conv.records):
                old = existing.get((conv.agent, conv.session_id, record.rkey))
                if old is not None and old[0] == record.rhash and old[1] == position:
                    keep.add(record.rkey)
                else:
                    fresh.append((conv, position, record))
            for (agent, session, rkey), (_, _, rid) in existing.items():
                if agent == conv.agent and session == conv.session_id and rkey not in keep:
                    stale.append(rid)
        for conv in batch:
            summary = conv.summary()
            title = summary["title"]
            if title:
                title, count = self.redact(clean_text(title))
                self.result.redactions += count
            cur.execute(
                "INSERT INTO agentdex.conversations (machine, agent, session_id, digest, title,"
                " project, cwd, records, prompts, replies, tool_events, first_ts, last_ts,"
                " source_gone) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (machine, agent, session_id) DO UPDATE SET digest = excluded.digest,"
                " title = excluded.title, project = excluded.project, cwd = excluded.cwd,"
                " records = excluded.records, prompts = excluded.prompts,"
                " replies = excluded.replies, tool_events = excluded.tool_events,"
                " first_ts = excluded.first_ts, last_ts = excluded.last_ts,"
                " source_gone = excluded.source_gone, pushed_at = now()",
                (
                    self.machine,
                    conv.agent,
                    conv.session_id,
                    conv.digest,
                    title,
                    summary["project"],
                    summary["cwd"],
                    summary["records"],
                    summary["prompts"],
                    summary["replies"],
                    summary["tool_events"],
                    summary["first_ts"],
                    summary["last_ts"],
                    summary["source_gone"],
                ),
            )
        if stale:
            cur.execute("DELETE FROM agentdex.records WHERE id = ANY(%s)", (stale,))
            self.result.records_removed += len(stale)
        if not fresh:
            return
        # COPY cannot write a table under row-level security: the rows go to a temporary
        # table (this session's, emptied at commit), then in with one checked INSERT
        cur.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS adx_incoming ON COMMIT DELETE ROWS AS"
            f" SELECT {RECORD_COLUMNS} FROM agentdex.records WITH NO DATA"
        )
        with cur.copy(f"COPY adx_incoming ({RECORD_COLUMNS}) FROM STDIN") as copy:
            for conv, position, record in fresh:
                row = record.row
                text, count = self.redact(clean_text(self.text_of(row[ID], row[BLOCK])))
                self.result.redactions += count
                lower = text.lower().encode("utf-8")
                self.result.bytes_sent += len(text.encode("utf-8"))
                copy.write_row(
                    (
                        self.machine,
                        conv.agent,
                        row[3],
                        conv.session_id,
                        record.rkey,
                        record.rhash,
                        position,
                        row[5],
                        row[6],
                        row[TS],
                        row[8],
                        row[9],
                        row[10],
                        row[11],
                        row[12],
                        row[13],
                        record.source_path,
                        row[14],
                        record.source_gone,
                        len(lower),
                        row[16],
                        level_of(row[6], row[5], len(lower)),
                        text,
                    )
                )
        cur.execute(
            f"INSERT INTO agentdex.records ({RECORD_COLUMNS})"
            f" SELECT {RECORD_COLUMNS} FROM adx_incoming"
        )
        self.result.records_added += len(fresh)


def run_push(
    pusher: Pusher,
    survey: Survey,
    read: Callable[[set[Key]], Iterable[Conversation]],
    forgotten: Iterable[tuple[str, str]],
) -> PushResult:
    """The whole push: tombstones, changed conversations in batches, removals, the log.

    ``survey`` names every local conversation (:mod:`agentdex.team.survey`); only
    those whose digest is unknown, or differs from the server's, are ``read``.
    """
    started = time.perf_counter()
    pusher.begin()
    pushed = pusher.server_digests()
    pusher.tombstones(forgotten, set(pushed))
    pushed = pusher.server_digests() if pusher.result.tombstones else pushed
    result = pusher.result
    result.conversations_local = len(survey.signatures)
    need = {
        k for k in survey.signatures if k not in survey.known or survey.known[k] != pushed.get(k)
    }
    result.conversations_unchanged = len(survey.signatures) - len(need)
    for conv in read(need) if need else ():
        survey.known[conv.key] = conv.digest
        if pushed.get(conv.key) == conv.digest:
            result.conversations_unchanged += 1
            continue
        pusher.add(conv)
    pusher.flush()
    pusher.remove(set(pushed) - set(survey.signatures))
    pusher.finish()
    result.seconds = round(time.perf_counter() - started, 3)
    return result


def pending(
    conn: Any,
    masked: str,
    machine: str,
    survey: Survey,
    read: Callable[[set[Key]], Iterable[Conversation]],
) -> dict[str, Any]:
    """What a push would do now, and what the last pushes did (``team status``)."""
    with talking(masked, "reading the push status"), conn.cursor() as cur:
        schema.check(cur, masked=masked)
        cur.execute(
            "SELECT agent, session_id, digest, records FROM agentdex.conversations"
            " WHERE machine = %s",
            (machine,),
        )
        pushed = {(a, s): (d, n) for a, s, d, n in cur.fetchall()}
        cur.execute(
            "SELECT id, started_at, finished_at, status, conversations, records_added,"
            " records_removed, bytes FROM agentdex.pushes WHERE machine = %s"
            " ORDER BY id DESC LIMIT 5",
            (machine,),
        )
        names = (
            "id",
            "started_at",
            "finished_at",
            "status",
            "conversations",
            "records_added",
            "records_removed",
            "bytes",
        )
        recent = []
        for row in cur.fetchall():
            item = dict(zip(names, row, strict=True))
            for key in ("started_at", "finished_at"):
                if item[key] is not None:
                    item[key] = item[key].isoformat()
            recent.append(item)
        cur.execute("SELECT owner FROM agentdex.machines WHERE machine = %s", (machine,))
        owner = cur.fetchone()
    changed = new = records_pending = 0
    seen = set(survey.signatures)
    local_records = sum(survey.records.values())
    unread = {k for k in seen if k in pushed and survey.known.get(k) != pushed[k][0]}
    for conv in read(unread) if unread else ():
        survey.known[conv.key] = conv.digest
    for conv_key in sorted(seen):
        old = pushed.get(conv_key)
        count = survey.records[conv_key]
        if old is None:
            new += 1
            records_pending += count
        elif old[0] != survey.known.get(conv_key):
            changed += 1
            records_pending += abs(count - old[1]) or 1
    removed = len(set(pushed) - seen)
    return {
        "machine": machine,
        "url": masked,
        "owner": owner[0] if owner else None,
        "conversations_local": len(seen),
        "records_local": local_records,
        "conversations_pushed": len(pushed),
        "records_pushed": sum(n for _, n in pushed.values()),
        "pending": {
            "conversations_new": new,
            "conversations_changed": changed,
            "conversations_removed": removed,
            "records_about": records_pending,
        },
        "up_to_date": not (new or changed or removed),
        "pushes": recent,
    }
