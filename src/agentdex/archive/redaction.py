"""Mask the secrets an archive kept from before redaction (``[privacy] redact``, on by default).

The archive outlives its sources, so an archive written by an agentdex that
did not redact (or with ``redact = false``) would keep every secret it ever
saw. When redaction is on and the archive's ``meta.redacted`` is not 1,
the refresh passes every text, raw source line and title through
:func:`agentdex.secrets.redact` once: the chunks are rewritten into a new
file (the old file, with the secrets, is deleted after the commit), the keys
of changed records are computed again from their new text (a record that
now equals another is kept once), and ``redacted`` is set in the same
transaction. A raw line that is no longer JSON after masking is dropped.
"""

from __future__ import annotations

from agentdex.archive.keys import record_key
from agentdex.archive.shared import drop_links, move_into_chunks
from agentdex.archive.store import RAW, ArchiveStore
from agentdex.index.segments import text_hash
from agentdex.secrets import redact


def mask_piece(kind: int, piece: bytes) -> bytes | None:
    """A text or raw line (``kind``) with its secrets masked; None: a raw line that is no
    longer JSON once masked (dropped)."""
    text = piece.decode("utf-8", "surrogatepass" if kind != RAW else "surrogateescape")
    masked, findings = redact(text)
    if not findings:
        return piece
    if kind == RAW:
        import orjson

        data = masked.encode("utf-8", "surrogateescape")
        try:
            orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        return data
    return masked.encode("utf-8", "surrogatepass")


def is_redacted(store: ArchiveStore) -> bool:
    return store.meta_int("redacted", 0) == 1


def redact_archive(store: ArchiveStore) -> int:
    """Mask every secret the archive holds (texts, raw lines, titles); how many records
    changed. Runs its own transaction; the caller holds the writer lock."""

    def rekey() -> int:
        changed = sorted(store.transformed)
        rows = []
        for start in range(0, len(changed), 500):
            part = changed[start : start + 500]
            rows += store.db.execute(
                "SELECT e.id, c.agent, c.session_id, e.role, e.kind, e.timestamp,"
                " e.text_chunk, e.text_start, e.text_size"
                " FROM entries e JOIN contexts c ON c.id = e.context_id"
                f" WHERE e.id IN ({','.join('?' * len(part))})",
                part,
            ).fetchall()
        for entry_id, agent, session, role, kind, timestamp, chunk, start, size in rows:
            text = store.text(chunk, start, size)
            data = text.encode("utf-8", "surrogatepass")
            lower = text.lower().encode("utf-8", "surrogatepass")
            key = record_key(agent, session, role, kind, timestamp, text_hash(data), len(lower))
            clash = store.db.execute("SELECT id FROM entries WHERE key = ?", (key,)).fetchone()
            if clash is not None and clash[0] != entry_id:
                store.db.execute("DELETE FROM entries WHERE id = ?", (entry_id,))
            else:
                store.db.execute("UPDATE entries SET key = ? WHERE id = ?", (key, entry_id))
        titles = store.db.execute("SELECT agent, session_id, title FROM titles").fetchall()
        for agent, session, title in titles:
            masked, findings = redact(title)
            if findings:
                store.db.execute(
                    "UPDATE titles SET title = ? WHERE agent = ? AND session_id = ?",
                    (masked, agent, session),
                )
        store.set_meta("redacted", 1)
        return len(rows)

    def mask_shared_then_rekey() -> int:
        # texts the archive shares with an index built without redaction: masked copies
        # go into its chunks (the next rebuild points the live ones at masked blocks)
        files = [str(r[0]) for r in store.db.execute("SELECT DISTINCT file FROM blocks")]
        move_into_chunks(store, files, mask_piece)
        store.sync()
        return rekey()

    changed = store.rewrite_all(mask_piece, mask_shared_then_rekey)
    drop_links(store)
    return changed
