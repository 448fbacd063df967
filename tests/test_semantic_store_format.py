"""The vector store's format: sign bits derived from the 4-bit vectors (not stored),
members that name their key's text hash instead of repeating it, and the named
migrations that bring an older store there (semantic/migrations.py), killed or not.

Real model, real index, real CLI processes, real SQLite; the older store is made
from a current one the way agentdex wrote it before (a ``bits`` file per folder,
``members.thash`` NOT NULL and filled on every row, no migration marks).
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hardening_support import child_env
from mcp_support import write_claude_session
from semantic_support import CONVERSATIONS, NOTES, TWIN, write_history

# NOTES' prompt in capitals: the same content key (keys are of the lower-cased text),
# another text hash (the index hashes the text as written)
SHOUT = "5e3a0000-0000-4000-8000-0000000000f1"
SHOUT_PROMPT = CONVERSATIONS[NOTES][0][1].upper()
QUERIES = [
    "pictures rotated wrongly",
    "where did we deal with the upstream service throttling us",
    "shrink the docker image",
    "a new optional field on the orders table",
]


def _json(done: Any) -> dict[str, Any]:
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def embedded(home: Path, run_cli: Any) -> Path:
    """The small history plus SHOUT, indexed and embedded; returns the store's folder."""
    write_history(home)
    write_claude_session(
        home,
        SHOUT,
        home / "work" / "shout",
        [("user", SHOUT_PROMPT), ("assistant", "Added; the API returns it too.")],
        start="2026-10-30T09:00",
    )
    done = run_cli("index", "--semantic", "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["semantic"]
    assert data["embedded"] == data["eligible"] == 14
    return next((home.parent / "agentdex-data").rglob("semantic"))


def _answers() -> list[list[tuple[str, float]]]:
    """Search by meaning in this process (a reader: it never migrates the store)."""
    from agentdex.api.search import search

    out = []
    for text in QUERIES:
        result = search(text, mode="semantic", refresh_first=False)
        out.append([(r["ref"], round(r["why"]["similarity"], 4)) for r in result.results])
    assert all(out), out
    return out


def _index_thash(home: Path) -> dict[int, int]:
    index = next((home.parent / "agentdex-data").rglob("CURRENT")).parent
    gen = index / (index / "CURRENT").read_text().strip()
    db = sqlite3.connect(gen / "index.db")
    try:
        return dict(db.execute("SELECT id, thash FROM record_rows"))
    finally:
        db.close()


def _members(folder: Path) -> list[tuple[int, int | None, int]]:
    """(rid, members.thash as stored, the thash a reader takes) of every member."""
    db = sqlite3.connect(folder / "vectors.db")
    try:
        return db.execute(
            "SELECT m.rid, m.thash, coalesce(m.thash, k.thash) FROM members m"
            " LEFT JOIN keys k ON k.ckey = m.ckey"
        ).fetchall()
    finally:
        db.close()


def _meta(folder: Path) -> dict[str, str]:
    db = sqlite3.connect(folder / "vectors.db")
    try:
        return dict(db.execute("SELECT key, value FROM meta"))
    finally:
        db.close()


def _thash_not_null(folder: Path) -> bool:
    db = sqlite3.connect(folder / "vectors.db")
    try:
        info = {row[1]: row[3] for row in db.execute("PRAGMA table_info(members)")}
        return bool(info["thash"])
    finally:
        db.close()


def _as_older_store(folder: Path) -> None:
    """Rewrite a current store as agentdex wrote it before m001/m002."""
    from agentdex.semantic import store

    db = sqlite3.connect(folder / "vectors.db", isolation_level=None)
    try:
        n, name = store.committed_rows(db), store.vfile(db)
        rows = store.map_rows(folder, name, n, 384)
        signs = np.packbits(store.unpack4(rows.q4, rows.scale) > 0, axis=1)
        (folder / name / "bits").write_bytes(signs.tobytes())
        db.executescript(
            """
            BEGIN;
            CREATE TABLE old_members (rid INTEGER PRIMARY KEY, ckey INTEGER NOT NULL,
                                      thash INTEGER NOT NULL, tlen INTEGER);
            INSERT INTO old_members SELECT m.rid, m.ckey, coalesce(m.thash, k.thash),
                coalesce(m.tlen, k.tlen) FROM members m LEFT JOIN keys k ON k.ckey = m.ckey;
            DROP TABLE members;
            ALTER TABLE old_members RENAME TO members;
            CREATE INDEX members_ckey ON members(ckey);
            DELETE FROM meta WHERE key LIKE 'migration.%';
            COMMIT;
            """
        )
    finally:
        db.close()


def test_members_name_their_keys_hash_unless_their_text_differs(
    embedded: Path, home: Path, run_cli: Any
) -> None:
    assert not list(embedded.glob("vec-*/bits"))  # nothing stores the sign bits
    live = _index_thash(home)
    members = _members(embedded)
    assert len(members) == 14
    # every member reads as its record's own text hash; only the prompt(s) whose text
    # differs in case from the one its key was embedded from store theirs
    assert all(effective == live[rid] for rid, _, effective in members)
    own = [rid for rid, stored, _ in members if stored is not None]
    assert 1 <= len(own) <= 2, members
    assert {live[rid] for rid in own}.isdisjoint(
        {live[rid] for rid, stored, _ in members if stored is None}
    )
    # a rebuild numbers the records anew; the link writes the members the same way
    rebuilt = _json(run_cli("index", "--full", "--semantic", "--json", timeout=180))["semantic"]
    assert rebuilt["run"]["texts_embedded"] == 0 and rebuilt["embedded"] == 14
    live = _index_thash(home)
    relinked = _members(embedded)
    assert all(effective == live[rid] for rid, _, effective in relinked)
    assert sum(stored is None for _, stored, _ in relinked) == 14 - len(own)
    # the three prompts share one vector (a search shows it once: --no-dedup shows all),
    # each found through it with its own text hash, the capitalised one too
    query = "a notes column on orders"
    data = _json(run_cli("search", "--semantic", "--no-dedup", "--json", query))
    assert {NOTES, TWIN, SHOUT} <= {r["session_id"] for r in data["results"]}
    for session in (NOTES, TWIN, SHOUT):
        data = _json(run_cli("search", "--semantic", "--json", f"session:{session} {query}"))
        assert data["results"] and data["results"][0]["session_id"] == session
    # forgetting NOTES keeps the vector SHOUT and TWIN still hold
    assert run_cli("forget", "--session", NOTES, "--yes", "--json").returncode == 0
    data = _json(run_cli("search", "--semantic", "--no-dedup", "--json", query))
    found = {r["session_id"] for r in data["results"]}
    assert NOTES not in found and {TWIN, SHOUT} <= found
    after = _json(run_cli("index", "--semantic", "--json", timeout=180))["semantic"]
    assert after["run"]["texts_embedded"] == 0
    assert after["eligible"] == after["embedded"] == 12


def test_an_older_store_is_upgraded_by_the_first_writer(
    embedded: Path, home: Path, run_cli: Any
) -> None:
    before = _answers()
    nulls = sum(stored is None for _, stored, _ in _members(embedded))
    _as_older_store(embedded)
    size_before = (embedded / "vectors.db").stat().st_size
    assert _thash_not_null(embedded) and list(embedded.glob("vec-*/bits"))
    assert _answers() == before  # today's reader reads the older format as it is
    assert list(embedded.glob("vec-*/bits"))  # and a reader changes nothing
    run = _json(run_cli("index", "--semantic", "--json", timeout=180))["semantic"]
    assert run["run"]["texts_embedded"] == 0 and run["embedded"] == 14
    meta = _meta(embedded)
    assert meta["migration.m001_signs_from_q4"] == meta["migration.m002_member_hashes_once"]
    assert "vacuum" not in meta
    assert not list(embedded.glob("vec-*/bits"))
    assert not _thash_not_null(embedded)
    live = _index_thash(home)
    members = _members(embedded)
    assert all(effective == live[rid] for rid, _, effective in members)
    assert sum(stored is None for _, stored, _ in members) == nulls
    assert (embedded / "vectors.db").stat().st_size <= size_before
    assert _answers() == before


@pytest.mark.parametrize("point", ["copy", "vacuum"])
def test_a_migration_killed_midway_leaves_a_store_that_finishes_later(
    embedded: Path, home: Path, run_cli: Any, point: str
) -> None:
    """SIGKILL inside m002's transaction (the copy made, not committed) or after its
    commit, in the VACUUM that gives the space back: the store reads the same, and the
    next writer finishes the migration."""
    before = _answers()
    nulls = sum(stored is None for _, stored, _ in _members(embedded))
    _as_older_store(embedded)
    code = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from agentdex.semantic import migrations, store\n"
        "def die(*_):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "if sys.argv[1] == 'copy':\n"
        "    real = migrations.set_meta\n"
        "    def set_meta(db, key, value):\n"
        "        if key == 'migration.m002_member_hashes_once':\n"
        "            die()\n"
        "        real(db, key, value)\n"
        "    migrations.set_meta = set_meta\n"
        "else:\n"
        "    migrations._vacuum = die\n"
        "store.connect(Path(sys.argv[2]), create=True)\n"
        "print('not killed')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, point, str(embedded)],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, (done.stdout, done.stderr)
    meta = _meta(embedded)
    assert "migration.m001_signs_from_q4" in meta  # committed before m002 began
    assert not list(embedded.glob("vec-*/bits"))
    if point == "copy":
        assert "migration.m002_member_hashes_once" not in meta
        assert _thash_not_null(embedded)  # the old table, whole
    else:
        assert meta["migration.m002_member_hashes_once"] == "done"
        assert meta["vacuum"] == "1"
        assert not _thash_not_null(embedded)
    assert len(_members(embedded)) == 14
    assert _answers() == before
    run = _json(run_cli("index", "--semantic", "--json", timeout=180))["semantic"]
    assert run["run"]["texts_embedded"] == 0 and run["embedded"] == 14
    meta = _meta(embedded)
    assert meta["migration.m002_member_hashes_once"] == "done" and "vacuum" not in meta
    live = _index_thash(home)
    members = _members(embedded)
    assert all(effective == live[rid] for rid, _, effective in members)
    assert sum(stored is None for _, stored, _ in members) == nulls
    assert _answers() == before


# -- the sign bits ---------------------------------------------------------------------------


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_sign_bits_are_the_signs_of_the_stored_values_in_the_querys_order() -> None:
    from agentdex.semantic import store
    from agentdex.semantic.signs import query_signs, sign_bits

    rng = np.random.default_rng(4)
    vectors = _unit(rng, 300)
    q4, scale = store.quantize4(vectors)
    values = store.unpack4(q4, scale)
    bits = sign_bits(q4)
    assert bits.shape == (300, 48)
    for row, value in zip(bits, values, strict=True):
        # the row's bits are what query_signs makes of its stored (4-bit) values
        assert np.array_equal(row, query_signs(value))
    # and a vector is nearest to itself: only values that rounded to 0 differ
    for vector, value, row in zip(vectors[:20], values[:20], bits[:20], strict=True):
        apart = int(np.unpackbits(row ^ query_signs(vector)).sum())
        assert apart == int(((vector > 0) & (value == 0)).sum())


def test_signs_are_kept_per_file_and_only_new_rows_are_derived(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.semantic import signs, store

    monkeypatch.setattr(signs, "SIGNS", signs.SignCache())
    derived: list[tuple[int, int]] = []
    real = signs.signs_in_chunks

    def counted(q4: Any, start: int, end: int) -> Any:
        derived.append((start, end))
        return real(q4, start, end)

    monkeypatch.setattr(signs, "signs_in_chunks", counted)
    folder = tmp_path / "semantic"
    db = store.connect(folder, create=True)
    assert db is not None
    rng = np.random.default_rng(9)

    def append(n: int) -> None:
        appender = store.Appender(folder, db, 384)
        appender.append(_unit(rng, n), list(range(appender.rows, appender.rows + n)))
        appender.sync()
        store.set_meta(db, "rows", appender.rows)
        appender.close()

    def fresh_signs() -> Any:
        rows = store.read_rows(folder, db, 384)
        assert rows is not None
        return rows.signs(), signs.sign_bits(np.asarray(rows.q4))

    append(100)
    got, want = fresh_signs()
    assert np.array_equal(got, want) and derived == [(0, 100)]
    got, want = fresh_signs()  # mapped again (as the resident remaps): nothing derived
    assert np.array_equal(got, want) and derived == [(0, 100)]
    append(40)
    got, want = fresh_signs()
    assert np.array_equal(got, want) and derived == [(0, 100), (100, 140)]
    # the file rewritten in place (same name, same inode) with other vectors: derived anew
    other, _ = store.quantize4(_unit(rng, 140))
    q4 = folder / store.vfile(db) / "q4"
    with q4.open("r+b") as out:
        out.write(other.tobytes())
    got, want = fresh_signs()
    assert np.array_equal(got, want) and np.array_equal(want, signs.sign_bits(other))
    assert derived[-1] == (0, 140)
    db.close()
