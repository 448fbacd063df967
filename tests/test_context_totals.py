"""The writer sums added records' ``context_stats`` in Python (``AddedTotals``): the rows
must equal the GROUP BY over the records that it replaces, whatever the times, roles and
kinds (unknown ones, text and NaN times, archived files) and however records are spread
over commits, files and contexts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentdex.index.context_stats import _TOTALS
from agentdex.index.files import ARCHIVED_HIGH, ARCHIVED_LOW, ARCHIVED_PREFIX
from agentdex.index.segments import prepare
from agentdex.index.writer import IndexWriter
from agentdex.records import Record

TIMES: list[object] = [
    None,
    1_700_000_000.123,  # whole milliseconds: stored as an integer
    1_700_000_000.1234567,  # not: stored as a REAL
    1_600_000_000,
    float("inf"),
]
#: the times a build's records mostly have: none, or whole milliseconds (integers)
WHOLE_MS: list[object] = [None, 1_700_000_000.123, 1_600_000_000, 1_650_000_000.5]
#: times a context's sums are taken from its rows for instead (rare: one record in 50)
ODD_TIMES: list[object] = [
    float("nan"),  # SQLite keeps NULL
    "2026-01-01",  # a parser's text: SQLite compares text above numbers
    True,
]
ROLES_KINDS = [
    ("user", "prompt"),
    ("assistant", "message"),
    ("assistant", "tool_call"),
    ("tool", "tool_result"),
    ("assistant", "reasoning"),
    ("plugin-role", "message"),  # unknown role: kept as text
    ("assistant", "plugin-kind"),  # unknown kind
]


def _stats(writer: IndexWriter) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    stored = writer.db.execute("SELECT * FROM context_stats ORDER BY context_id").fetchall()
    summed = writer.db.execute(
        f"{_TOTALS} GROUP BY r.context_id ORDER BY r.context_id", (ARCHIVED_LOW, ARCHIVED_HIGH)
    ).fetchall()
    return stored, summed


@pytest.mark.parametrize("runs", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_summed_totals_equal_the_group_by_over_the_records(
    tmp_path: Path, seed: int, runs: bool
) -> None:
    """``runs``: records come in runs of one context and file, as a cold build's do (whole
    blocks of one context: ``AddedTotals`` sums those by columns)."""
    rnd = random.Random(seed)
    gen = tmp_path / "gen-000001"
    gen.mkdir()
    writer = IndexWriter(gen)
    try:
        if seed % 2:
            writer.start_bulk_load()
        writer.defer_postings()  # no tantivy: it takes no NaN or infinite time
        files = [
            writer.new_file(path, "claude-code", "claude-code.transcripts", None)
            for path in ("/a.jsonl", "/b.jsonl", f"{ARCHIVED_PREFIX}/c.jsonl")
        ]
        where = ("s1", "/w/a", files[0])
        for batch in range(4):
            for n in range(rnd.randrange(1, 400)):
                role, kind = rnd.choice(
                    ROLES_KINDS[:5] if runs and rnd.random() < 0.9 else ROLES_KINDS
                )
                if not runs or rnd.random() < 0.03:
                    where = (
                        rnd.choice(("s1", "s2", "s3")),
                        rnd.choice(("/w/a", "/w/b")),
                        rnd.choice(files),
                    )
                record = Record(
                    agent="claude-code",
                    store="claude-code.transcripts",
                    source_path="/a.jsonl",
                    locator=f"line:{n + 1}",
                    session_id=where[0],
                    role=role,  # type: ignore[arg-type]
                    kind=kind,  # type: ignore[arg-type]
                    text="x" * rnd.randrange(1, 3000),  # some blocks sealed, some open
                    timestamp=rnd.choice(  # type: ignore[arg-type]
                        ODD_TIMES
                        if seed >= 3 and rnd.random() < 0.02
                        else WHOLE_MS
                        if runs and rnd.random() < 0.95
                        else TIMES
                    ),
                    cwd=where[1],
                    offset=n,
                )
                writer.add(prepare(record), where[2])
            if batch == 2:  # records deleted in the batch that added them: summed again
                writer.delete_records(files[1], None)
            writer.commit()
            stored, summed = _stats(writer)
            assert stored == summed
            assert stored  # the check compared rows
    finally:
        writer.close(True)
