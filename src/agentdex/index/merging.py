"""The small tantivy segments at the end of a new generation's build merged into one:
tantivy's own merge, made to fire.

A term-set count costs per term per segment (docs/performance.md, s7-seg), and a
1 GB first build ends with ~9 segments. tantivy-py has no merge call and no
merge-policy setting, and tantivy's default ``LogMergePolicy`` merges a
*level* only once it holds at least eight segments (tantivy's
``src/indexer/log_merge_policy.rs``): the segments are sorted by ``max_doc``
(documents written, deleted ones included), largest first, and a level is a
run of them whose log2 of *live* documents (at least 10,000) stays within
0.75 of the log2 of the run's first one. A segment with the largest
``max_doc`` and one live document therefore opens a level at log2(10,000),
the lowest there is, and every other segment falls in it: with eight or
more segments in all, the commit that adds it starts one merge of them all.
A segment with fewer documents than the largest few (and more than any
other) leaves those in a level of their own instead, merged with nothing: done
for up to six that each hold at least a sixteenth of the records
(:func:`placeholders_for`). A 1 GB build's heap flushes are such segments
(``postings.HEAP_BYTES``), and tantivy merged none of them during the build:
the merge takes only the small segments its commits cut, ~1/5 of the records,
where rewriting them all would cost what tantivy's merges in the writer did.

After a new generation's build has committed and closed its tantivy writer,
a child process (its own tantivy writer, one indexing thread) does that:

1. while fewer than seven segments would stand beside the one made in 2.,
   it re-adds one of the build's last records as a segment of its own
   (deletes its document, adds it again, commits);
2. deletes the last record's document, adds one more placeholder document
   (``file`` 0: no file row has that id) than the largest segment merged
   holds,
   deletes the placeholders, adds the last record again and commits;
3. waits for the merge that commit starts, keeping the pages it maps out of
   its resident set (:class:`~agentdex.index.memory.MappedPages`).

Every commit holds the build's records exactly once (a record re-added in a
commit replaces its deleted copy in that same commit), so a search at any
moment sees what it saw before, and killing the child at any point loses
nothing (a merge cut short leaves its inputs, and its files are collected by
the next writer, which also re-adds the records the child re-added:
:func:`readd_left`). The merge only makes counts faster: a child that fails
leaves the postings as the build left them, and the build goes on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

    from agentdex.index.postings import PostingsWriter
    from agentdex.index.segments import BlockFile

#: a new generation's build that ends with more segments than this is merged into one
MERGE_ABOVE = 2
#: tantivy's LogMergePolicy merges a level of at least this many segments
POLICY_MIN_SEGMENTS = 8
#: tantivy's LogMergePolicy: segments under this many documents count as this many, and a
#: level holds the segments within this log2 of its first one's documents
POLICY_MIN_LAYER = 10_000
POLICY_LEVEL_LOG = 0.75
#: a build's largest segments (at most this many) each holding at least this share of its
#: records are left out of the merge (:func:`placeholders_for`): a 1 GB build's heap flushes
#: (``postings.HEAP_BYTES``) are ~1/7 of it each and tantivy merges none of them during the
#: build, so the child merges only the small segments its commits cut
KEEP_SHARE = 1 / 16
KEEP_MOST = 6
#: a segment opens a level above the placeholders' one (``POLICY_MIN_LAYER``) only with
#: more live documents than this
KEEP_LIVE_FLOOR = int(POLICY_MIN_LAYER * 2**POLICY_LEVEL_LOG) + 1
#: the ``file`` of the placeholder documents (file row ids start at 1)
PLACEHOLDER_FILE = 0
#: ``meta`` key: the ids of the records a merge child re-adds, until the merge is done
READDED = "merge_readded"
#: the child's indexing heap: the placeholders are a few bytes each, and must fill one segment
CHILD_HEAP_BYTES = 64 << 20
#: file-backed memory the child may hold beyond its start before it hands the postings pages
#: its merge reads back: wider than the writer's (``memory.MAPPED_SLACK_BYTES``, 4 MB): at 4
#: MB the child re-read so many pages that its 1 GB merge took ~5 s more (16.1-16.8 against
#: 11.1-11.6 CPU-s, two quiet sittings; measured when the pages handed back also left the
#: page cache, ``MADV_PAGEOUT``); its ~95-115 MB are not the writer's peak
CHILD_MAPPED_SLACK_BYTES = 16 << 20
_CHILD = "--child"
#: the last byte the writer sends (a child that reads to the end without it writes nothing)
_END = b"\n\0"


def segment_sizes(postings: Path) -> list[int]:
    """``max_doc`` of each segment in the postings' committed ``meta.json`` (largest first)."""
    return [size for size, _ in segment_docs(postings)]


def segment_docs(postings: Path) -> list[tuple[int, int]]:
    """``(max_doc, live documents)`` of each committed segment, by ``max_doc``, largest first."""
    try:
        meta = json.loads((postings / "meta.json").read_bytes())
    except (OSError, ValueError):
        return []
    docs = []
    for segment in meta.get("segments", ()):
        deletes = segment.get("deletes") or {}
        size = int(segment["max_doc"])
        docs.append((size, size - int(deletes.get("num_deleted_docs") or 0)))
    return sorted(docs, reverse=True)


def placeholders_for(docs: list[tuple[int, int]]) -> tuple[int, int]:
    """How many placeholder documents the merge's level segment gets, and how many of the
    build's largest segments it leaves as they are (0 to :data:`KEEP_MOST`), for segments
    ``docs`` (:func:`segment_docs`).

    The largest segments each holding at least :data:`KEEP_SHARE` of the live documents
    stay out of the merge: the placeholders' segment then sorts right after the kept ones
    (fewer documents than they, more than any other) and opens the level below theirs, so
    tantivy merges every other segment into one and leaves them (the build's heap
    flushes: merging them would rewrite most of the records for a few segments fewer).
    Two kept segments of the same size leave no room between them for the placeholders'
    one: both are kept or neither. With none kept the placeholders' segment sorts first
    and everything is merged."""
    total = sum(live for _, live in docs)
    kept = 0
    for count in range(1, min(KEEP_MOST, len(docs) - 2) + 1):  # at least two left to merge
        live = docs[count - 1][1]
        if live < KEEP_SHARE * total or live < 2 * KEEP_LIVE_FLOOR:
            break
        # the placeholders' segment (one more than docs[count]) must sort after the kept ones
        if docs[count - 1][0] >= docs[count][0] + 2:
            kept = count
    return docs[kept][0] + 1, kept


def start(
    gen: Path, db: sqlite3.Connection, block_file: BlockFile, *, nice: int = 0
) -> subprocess.Popen[bytes] | None:
    """Start merging ``gen``'s postings into one segment (beside the largest ones it keeps:
    :func:`placeholders_for`), when they hold more than :data:`MERGE_ABOVE` (None
    otherwise). The caller's tantivy writer must be closed, and
    stays so until :func:`wait`; the postings must hold every stored record (no tail).

    ``db`` is the writer's connection, inside its open transaction: the ids of the records
    the child re-adds are committed there first (:data:`READDED`), so that a writer after
    a child killed midway re-adds them once more (:func:`readd_left`). ``nice``: the child
    runs that many nice levels below this process (``termlist.child_input``)."""
    from agentdex.index import stored
    from agentdex.index.tail import postings_args

    docs = segment_docs(gen / "postings")
    if len(docs) <= MERGE_ABOVE:
        return None
    placeholders, kept = placeholders_for(docs)
    # the level merged holds the placeholders' segment and every segment not kept
    fillers = max(0, POLICY_MIN_SEGMENTS - 1 - (len(docs) - kept))
    last = db.execute(
        "SELECT id FROM record_rows ORDER BY id DESC LIMIT ?", (fillers + 1,)
    ).fetchall()
    if len(last) < fillers + 1:
        return None
    records = [
        postings_args(row, lowered)
        for row, lowered in stored.lowered_rows(db, block_file, last[-1][0])
    ]
    if len(records) != len(last):
        return None
    db.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        (READDED, json.dumps([args[0] for args in records])),
    )
    db.execute("COMMIT")
    db.execute("BEGIN IMMEDIATE")
    import agentdex

    env = dict(os.environ)
    # the child runs this very code, whatever the interpreter's own path says
    source = str(Path(agentdex.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    plan = {"placeholders": placeholders, "records": records, "segments": 1 + kept}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentdex.index.merging", _CHILD, str(gen), str(os.getpid())]
        + ([str(nice)] if nice > 0 else []),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    stdin, proc.stdin = proc.stdin, None  # written and closed here, not by communicate()
    assert stdin is not None
    try:
        stdin.write(json.dumps(plan).encode("utf-8", "surrogatepass") + _END)
        stdin.close()
    except OSError:  # the child is gone already: wait() reports it
        pass
    return proc


def wait(proc: subprocess.Popen[bytes], db: sqlite3.Connection) -> dict[str, Any]:
    """Wait for a merge :func:`start` began; what it did (``ok`` false: the postings stay as
    the build left them, and ``error`` says why). Once they are as planned, ``db``'s open
    transaction forgets the re-added records (:data:`READDED`)."""
    out, err = proc.communicate()
    lines = out.decode("utf-8", "replace").strip().splitlines()
    if proc.returncode == 0 and lines:
        try:
            report: dict[str, Any] = {"ok": True, **json.loads(lines[-1])}
        except ValueError:
            pass
        else:
            if report.get("segments_after") == report.get("segments_planned", 1):
                db.execute("DELETE FROM meta WHERE key = ?", (READDED,))
            return report
    tail = err.decode("utf-8", "replace").strip().splitlines()[-1:]
    return {"ok": False, "error": tail[0] if tail else f"exit status {proc.returncode}"}


def readd_left(writer: PostingsWriter, db: sqlite3.Connection, block_file: BlockFile) -> bool:
    """In a writer that just opened the postings: re-add the records a merge child that did
    not finish had re-added (in this writer's first postings commit).

    Its segment of one live record among deleted placeholders would otherwise stay, and
    put every segment in one level at each later commit: a merge of everything started
    by some small refresh. Re-adding those records again leaves that segment (and the
    single-record ones) without a live document, and a commit drops such segments. The
    caller forgets :data:`READDED` once that commit is made. Whether there was any."""
    from agentdex.index import stored
    from agentdex.index.tail import postings_args

    row = db.execute("SELECT value FROM meta WHERE key = ?", (READDED,)).fetchone()
    if row is None:
        return False
    rids = set(json.loads(row[0]))
    for rid in sorted(rids):
        _delete_record(writer, rid)
    if rids:
        for stored_row, lowered in stored.lowered_rows(db, block_file, min(rids)):
            if stored_row[0] > max(rids):
                break
            if stored_row[0] in rids:  # not deleted since: the journal's deletes came first
                writer.add(*postings_args(stored_row, lowered))
    return True


def _delete_record(writer: Any, rid: int) -> None:
    import tantivy

    only = tantivy.Query.range_query(
        writer.schema, "rid", tantivy.FieldType.Unsigned, rid, rid, True, True
    )
    writer.writer.delete_documents_by_query(only)


def commit_level(writer: PostingsWriter, records: list[Any], placeholders: int) -> None:
    """Steps 1 and 2 of the module docstring with a one-thread ``writer``: ``records`` are
    PostingsWriter.add's arguments of stored records (the last one goes in the segment of
    ``placeholders`` deleted placeholders; each other one in a segment of its own)."""
    import tantivy

    for args in records[:-1]:  # segments of their own, up to the policy's eight
        _delete_record(writer, args[0])
        writer.add(*args)
        writer.commit()
    last = records[-1]
    _delete_record(writer, last[0])
    # one Document added again and again (tantivy copies it each time): ~0.7 against ~1.7 s
    # of wall for 250,000 as JSON strings (docs/performance.md, s10-writer)
    placeholder = tantivy.Document()
    placeholder.add_unsigned("file", PLACEHOLDER_FILE)
    add = writer.writer.add_document
    for _ in range(placeholders):
        add(placeholder)
    writer.writer.delete_documents_by_query(
        tantivy.Query.term_query(writer.schema, "file", PLACEHOLDER_FILE)
    )
    writer.add(*last)
    writer.commit()


def _merge(gen: Path, plan: dict[str, Any]) -> dict[str, Any]:
    from agentdex.index.postings import PostingsWriter

    started, cpu = time.monotonic(), time.process_time()
    path = gen / "postings"
    before = len(segment_sizes(path))
    writer = PostingsWriter(path, heap_bytes=CHILD_HEAP_BYTES, threads=1)
    writer.mapped.slack = CHILD_MAPPED_SLACK_BYTES
    commit_level(writer, [tuple(args) for args in plan["records"]], int(plan["placeholders"]))
    # the merge runs in tantivy's threads; this one keeps the pages it maps out of memory
    done = threading.Event()
    failure: list[BaseException] = []

    def waiting() -> None:
        try:
            writer.close(wait_merges=True)
        except BaseException as exc:  # reported below
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=waiting, daemon=True).start()
    while not done.wait(0.25):
        writer.mapped.check()
    if failure:
        raise failure[0]
    return {
        "segments_before": before,
        "segments_after": len(segment_sizes(path)),
        "segments_planned": int(plan.get("segments", 1)),
        "cpu_s": round(time.process_time() - cpu, 2),
        "seconds": round(time.monotonic() - started, 2),
        "peak_rss_mb": _peak_rss_mb(),
    }


def _peak_rss_mb() -> float | None:
    """This process's own peak RSS (``VmHWM``: ``ru_maxrss`` would report the writer's,
    carried over the exec of a child it started), None off Linux."""
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _child(argv: list[str]) -> int:
    from agentdex.index.termlist import child_input

    given = child_input(argv, _END)
    if given is None:  # the writer died before it said everything: do nothing
        return 1
    print(json.dumps(_merge(given[0], json.loads(given[1]))))
    return 0


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == _CHILD:
        raise SystemExit(_child(sys.argv[2:]))
    raise SystemExit("usage: python -m agentdex.index.merging --child GEN PARENT_PID [NICE]")
