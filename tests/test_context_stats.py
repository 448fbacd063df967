"""The per-context totals ``sessions`` lists from agree with the records, whatever happened.

Every change a refresh can make to a conversation (new files, appends,
rewrites, truncation, a deleted source kept by the archive, ``forget``) is
applied to real files and indexed for real; after each one the listing read
from ``context_stats`` must equal the aggregate over every record (the
query ``sessions`` ran before the table existed, kept as the fallback).
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agentdex.api import search as api
from agentdex.api.archive import forget, forget_plan
from agentdex.api.conversations import _session_rows, _session_rows_from_records
from agentdex.api.index import reader
from agentdex.errors import NotFoundError
from agentdex.index.store import Location
from test_index_fixtures import ROWS, register, store_dir, write_file

SESSIONS = ("s1", "s2", "s3")
FILES = ("a.jsonl", "b.jsonl", "c.jsonl")
WHERES: list[tuple[str, list[object]]] = [
    ("1", []),
    ("session_id IN (?, ?)", ["s1", "s3"]),
    ("cwd = ? OR substr(cwd, 1, ?) = ?", ["/w/a", 5, "/w/a/"]),
]


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


records = st.lists(
    st.fixed_dictionaries(
        {
            "session": st.sampled_from(SESSIONS),
            "role": st.sampled_from(["user", "assistant", "tool"]),
            "kind": st.sampled_from(["prompt", "message", "tool_call", "tool_result", "reasoning"]),
            "text": st.text("abc xyz", min_size=1, max_size=12),
            "cwd": st.sampled_from(["/w/a", "/w/a/sub", "/w/b"]),
            "ts": st.one_of(st.none(), st.integers(1_700_000_000, 1_700_100_000)),
        }
    ),
    min_size=1,
    max_size=6,
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(FILES), records),
        st.tuples(st.just("append"), st.sampled_from(FILES), records),
        st.tuples(st.just("truncate"), st.sampled_from(FILES), st.integers(0, 4)),
        st.tuples(st.just("delete"), st.sampled_from(FILES), st.just(None)),
        st.tuples(st.just("forget"), st.sampled_from(SESSIONS), st.just(None)),
    ),
    min_size=1,
    max_size=6,
)


def _normalized(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows in one order, their store list as a set (``group_concat`` order is not defined)."""
    out = []
    for row in rows:
        stores = tuple(sorted(set((row[10] or "").split(","))))
        out.append((*row[:10], stores, bool(row[11])))
    return sorted(out, key=repr)


def assert_totals_match(root: Path, home: Path) -> int:
    with reader(root, str(home)) as engine:
        if engine is None:
            return 0
        for where, params in WHERES:
            got = _normalized(_session_rows(engine, where, params))
            want = _normalized(_session_rows_from_records(engine, where, params))
            assert got == want, where
        return len(_session_rows(engine, "1", []))


def _apply(step: tuple[str, str, Any], folder: Path, root: Path, home: Path) -> None:
    action, name, value = step
    path = folder / name
    if action == "write":
        write_file(path, value)
    elif action == "append":
        write_file(path, value, mode="ab")
    elif action == "truncate" and path.exists():
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:value]))
    elif action == "delete":
        path.unlink(missing_ok=True)
    elif action == "forget":
        try:
            plan = forget_plan(session=name, root=root, home=str(home))
        except NotFoundError:
            return
        forget(plan, root=root, home=str(home))


# no shrinking: each example indexes for real, and shrinking one took over five minutes
# (the failure report still shows the whole example and the seed to replay it)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(steps=operations)
def test_listing_totals_equal_the_record_aggregate(home: Path, steps: list[Any]) -> None:
    work = Path(tempfile.mkdtemp(dir=home))
    try:
        fake_home, root = work / "home", work / "index"
        folder = store_dir(fake_home)
        for step in steps:
            _apply(step, folder, root, fake_home)
            api.refresh(root, home=str(fake_home), rows=ROWS)
            assert_totals_match(root, fake_home)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_a_deleted_source_shows_as_gone_from_the_totals(home: Path) -> None:
    folder = store_dir(home)
    one = {"session": "s1", "role": "user", "kind": "prompt", "text": "hello", "ts": 1.7e9}
    write_file(folder / "a.jsonl", [one, {**one, "role": "assistant", "kind": "message"}])
    api.refresh(home=str(home), rows=ROWS)
    (folder / "a.jsonl").unlink()
    api.refresh(home=str(home), rows=ROWS)
    listed = api.conversations(home=str(home), refresh_first=False).conversations
    assert [(c["session_id"], c["prompts"], c["replies"], c["source_gone"]) for c in listed] == [
        ("s1", 1, 1, True)
    ]


def _drop_table(root: Path) -> None:
    """Make the current generation look like one written before ``context_stats`` existed."""
    gen = Location(root).current()
    assert gen is not None
    db = sqlite3.connect(gen / "index.db")
    try:
        db.execute("DROP TABLE context_stats")
        db.execute("DELETE FROM migrations WHERE name = 'm004_context_stats'")
        db.commit()
    finally:
        db.close()


def test_an_older_generation_is_listed_then_migrated(home: Path, tmp_path: Path) -> None:
    root = tmp_path / "index"
    folder = store_dir(home)
    rec = {"session": "s1", "role": "user", "kind": "prompt", "text": "one", "cwd": "/w/a"}
    write_file(folder / "a.jsonl", [rec, {**rec, "session": "s2"}])
    api.refresh(root, home=str(home), rows=ROWS)
    _drop_table(root)
    assert assert_totals_match(root, home) == 2  # the fallback aggregate
    write_file(folder / "a.jsonl", [{**rec, "session": "s3"}], mode="ab")
    api.refresh(root, home=str(home), rows=ROWS)  # the writer migrates, then adds
    gen = Location(root).current()
    assert gen is not None
    db = sqlite3.connect(gen / "index.db")
    try:
        assert db.execute("SELECT count(*) FROM context_stats").fetchone()[0] == 3
    finally:
        db.close()
    assert assert_totals_match(root, home) == 3
