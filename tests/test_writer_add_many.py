"""A parse worker's file of records added at once (``IndexWriter.add_many`` and
``ArchiveWriter.offer_many`` over its wire tuples) stores what adding and offering each
record as a :class:`Prepared` stores: the same record rows, contexts, blocks and texts,
postings, and archive entries. Real SQLite generations, archives and ``text.blocks`` files
in temporary folders."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import tantivy

from agentdex.archive.store import ArchiveStore, open_reader
from agentdex.archive.writer import ArchiveWriter
from agentdex.index.columns import Columns
from agentdex.index.segments import prepare
from agentdex.index.writer import IndexWriter
from agentdex.ingest.pipeline import ArchiveParts, Wire, from_wire, prepare_batch
from agentdex.records import Record
from test_index_text_dictionary import read_all

TEXTS = (
    "Retry the Upload with Backoff; the ServerError came from src/api/Client.py line",
    "ünïcode ß and İ change length when lower-cased, ΑΣ ends in a final sigma",
    "한국어 text: its UTF-8 holds the byte 0xED",
    # a lone surrogate (a transcript decoded with surrogateescape): before it was left out
    # of the characters terms start with, its commit raised UnicodeEncodeError (text_chars)
    "a lone surrogate \udcff in a transcript",
    "a NUL \x00 inside a record",
    "",
    "def handle_request(self, Request):\n    return self.Router.dispatch(Request)" * 40,
)


def _wires(tmp_path: Path, count: int) -> list[Wire]:
    """Records of three conversations interleaved (runs of a context and returns to one
    seen before), each text among ``TEXTS``, a few records repeated (archived once)."""
    rng = random.Random(11)
    contexts = [("s1", "/a"), ("s2", "/b"), ("s1", "/c")]
    parts = ArchiveParts(str(tmp_path / "none.jsonl"), jsonl=False, redact=False)
    wires: list[Wire] = []
    context = contexts[0]
    for i in range(count):
        if rng.random() < 0.1:
            context = rng.choice(contexts)
        text = rng.choice(TEXTS) + ("" if rng.random() < 0.05 else f" #{i % 700}")
        record = Record(
            agent="claude-code",
            store="claude-code.projects",
            session_id=context[0],
            locator=f"line:{i % 700}",
            source_path=str(tmp_path / "none.jsonl"),
            role=rng.choice(("user", "assistant")),
            kind=rng.choice(("prompt", "message", "tool_result")),
            text=text,
            timestamp=1767323045.5 + i % 700,
            cwd=context[1],
            offset=i,
        )
        wires.append(parts.add_to(prepare(record)))
    return wires


def _build(root: Path, wires: list[Wire], *, many: bool) -> None:
    gen = root / "gen-000001"
    gen.mkdir(parents=True)
    index = IndexWriter(gen)
    archive = ArchiveWriter(
        ArchiveStore(root, write=True), redact=False, gen=gen, block_rows=index.block_rows
    )
    index.before_commit.append(lambda _index: archive.commit())
    files = [wires[: len(wires) // 3], wires[len(wires) // 3 :]]
    for n, part in enumerate(files):
        file_id = index.new_file(f"/f{n}.jsonl", "claude-code", "claude-code.projects", None)
        archive.begin_source(f"/f{n}.jsonl", jsonl=False)
        if many:
            columns = Columns.from_rows(part)
            archive.offer_many(columns, index.add_many(columns, file_id))
        else:
            for prepared in from_wire(part):
                archive.offer(prepared, index.add(prepared, file_id))
        index.commit()
    archive.close(True)
    archive.store.close()
    index.close(True)


def _rows(db: Path, query: str) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(db)
    try:
        return connection.execute(query).fetchall()
    finally:
        connection.close()


def test_a_file_added_at_once_stores_what_each_record_added_alone_stores(tmp_path: Path) -> None:
    wires = _wires(tmp_path, 1500)
    _build(tmp_path / "one", wires, many=False)
    _build(tmp_path / "many", wires, many=True)
    queries = {
        "gen-000001/index.db": (
            "SELECT * FROM record_rows ORDER BY id",
            "SELECT * FROM contexts ORDER BY id",
            "SELECT id, first_id, count, lower_size, original_size FROM blocks ORDER BY id",
            "SELECT * FROM context_stats ORDER BY 1, 2",
            "SELECT * FROM meta WHERE key IN ('text_chars', 'postings_rid', 'archived_rid')",
        ),
        "archive/archive.db": (
            "SELECT id, key, context_id, source_id, rk, role_x, kind_x, ts, loc, offset,"
            " text_chunk, text_start, text_size, raw_chunk, raw_start, raw_size FROM entries"
            " ORDER BY id",
            "SELECT * FROM contexts ORDER BY id",
            "SELECT id, offset, lower_size, original_size, count FROM blocks ORDER BY id",
        ),
    }
    for name, statements in queries.items():
        for query in statements:
            one = _rows(tmp_path / "one" / name, query)
            assert one, query
            assert _rows(tmp_path / "many" / name, query) == one, query
    texts = read_all(tmp_path / "many" / "gen-000001")
    assert texts == read_all(tmp_path / "one" / "gen-000001")
    # and what each record is, read back without the code under test
    prepared = from_wire(wires)
    assert texts == [(p.text, p.lower) for p in prepared]
    index_rows = _rows(
        tmp_path / "many" / "gen-000001" / "index.db",
        "SELECT c.session_id, c.cwd, r.offset, r.tlen, r.thash FROM record_rows r"
        " JOIN contexts c ON c.id = r.context_id ORDER BY r.id",
    )
    assert index_rows == [
        (p.meta[2], p.meta[7], p.meta[13], len(p.lower), p.thash) for p in prepared
    ]
    first: dict[int | None, Any] = {}
    for p in prepared:
        first.setdefault(p.key, p)
    assert 0 < len(first) < len(wires)  # repeated records archived once
    store = open_reader(tmp_path / "many")
    assert store is not None
    entries = _rows(
        tmp_path / "many" / "archive" / "archive.db",
        "SELECT e.key, c.session_id, c.cwd, e.offset, e.text_chunk, e.text_start, e.text_size"
        " FROM entries e JOIN contexts c ON c.id = e.context_id ORDER BY e.id",
    )
    assert [row[0] for row in entries] == list(first)
    for key, session, cwd, offset, chunk, start, size in entries:
        p = first[key]
        assert (session, cwd, offset) == (p.meta[2], p.meta[7], p.meta[13])
        assert size == len(p.text.encode("utf-8", "surrogatepass"))
        assert store.text(chunk, start, size) == p.text
    for name in ("one", "many"):
        postings = tantivy.Index.open(str(tmp_path / name / "gen-000001" / "postings"))
        postings.reload()
        searcher = postings.searcher()
        assert searcher.num_docs == len(wires)
        term = tantivy.Query.term_query(postings.schema, "text", "servererror")
        found = searcher.search(term, 1).count  # type: ignore[attr-defined]
        assert found == sum("ServerError" in str(w[2]) for w in wires)


def test_a_lone_surrogate_is_not_among_the_characters_terms_start_with(tmp_path: Path) -> None:
    """tantivy sees ``?`` for it (``rust_safe``); in ``text_chars`` SQLite could not store it."""
    record = Record(
        agent="claude-code",
        store="claude-code.projects",
        session_id="s1",
        locator="line:1",
        source_path=str(tmp_path / "none.jsonl"),
        role="user",
        kind="prompt",
        text="Ünï \udcff x",
        timestamp=1767323045.5,
    )
    parts = ArchiveParts(str(tmp_path / "none.jsonl"), jsonl=False, redact=False)
    (wire,) = prepare_batch([record], (), parts)
    assert set(str(wire[10])) == set(prepare(record).chars) == {"ü", "ï"}
    assert wire[4] == prepare(record).postings_text == "ünï ? x"


def test_files_with_and_without_stored_roles_in_one_block_keep_every_column(
    tmp_path: Path,
) -> None:
    """A block holding records of known roles and kinds (their rows inserted with the two
    NULLs in the statement) and of a role and kind stored as text (all twelve columns
    bound) keeps each record's role, kind, time, locator and offset, in order."""
    gen = tmp_path / "gen-000001"
    gen.mkdir()
    index = IndexWriter(gen)
    expected: list[tuple[object, ...]] = []
    try:
        index.defer_postings()
        for n, (role, kind) in enumerate(
            [("user", "prompt"), ("critic", "verdict"), ("assistant", "message")]
        ):
            file_id = index.new_file(f"/f{n}.jsonl", "claude-code", "claude-code.projects", None)
            records = [
                Record(
                    agent="claude-code",
                    store="claude-code.projects",
                    session_id=f"s{n}",
                    locator=f"line:{i + 1}",
                    source_path=f"/f{n}.jsonl",
                    role=role,  # type: ignore[arg-type]
                    kind=kind,  # type: ignore[arg-type]
                    text=f"record {i} of file {n}",
                    timestamp=None if i == 1 else 1_700_000_000.25 + i,
                    offset=10 * i,
                )
                for i in range(3)
            ]
            index.add_many(Columns.from_rows([prepare(r) for r in records]), file_id)
            expected += [
                (file_id, r.role, r.kind, r.timestamp, r.locator, r.offset) for r in records
            ]
        index.commit()
        stored = index.db.execute(
            "SELECT file_id, role, kind, timestamp, locator, offset FROM record_rows ORDER BY id"
        ).fetchall()
        blocks = index.db.execute("SELECT count(*) FROM blocks").fetchone()[0]
    finally:
        index.close(True)
    assert blocks == 1  # the three files' records share one block
    assert stored == expected
