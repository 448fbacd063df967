"""What is embedded and how the fill runs (issue 20, item 2), each checked on its own:
newest first, long messages in chunks, the progress bar and the coverage that
``index``/``doctor`` report, lexical search and indexing never waiting for a fill,
``ui`` and ``mcp`` filling while idle, ``archive prune`` dropping vectors; and the
sign-bit prefilter of a big store (item 3) giving the exact path's answer.

Real model, real index, real CLI processes; a small history (tests/semantic_support.py).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_support import server_env, write_claude_session
from semantic_support import NOTES, PHOTOS, TWIN, slow_fill, write_history
from ui_support import UI_COMMAND


def _data(home: Path) -> Path:
    return home.parent / "agentdex-data"


def _vectors_db(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(next(_data(home).rglob("semantic")) / "vectors.db")


def _index_db(home: Path) -> sqlite3.Connection:
    newest = sorted(_data(home).rglob("gen-*/index.db"))[-1]
    return sqlite3.connect(f"file:{newest}?mode=ro", uri=True)


def _status(run_cli: Any) -> dict[str, Any]:
    done = run_cli("index", "--json")
    assert done.returncode == 0, done.stderr
    semantic: dict[str, Any] = json.loads(done.stdout)["semantic"]
    return semantic


def test_the_fill_embeds_the_newest_messages_first(home: Path, run_cli: Any) -> None:
    write_history(home)  # one conversation a day, TWIN the newest, then NOTES
    assert run_cli("index").returncode == 0
    from agentdex.api.semantic import embed_missing

    first = embed_missing(max_records=4)
    assert first.records_done == 4 and not first.complete
    db = _vectors_db(home)
    rids = [r for (r,) in db.execute("SELECT rid FROM members")]
    db.close()
    index = _index_db(home)
    marks = ",".join("?" * len(rids))
    sessions = {
        s for (s,) in index.execute(f"SELECT session_id FROM records WHERE id IN ({marks})", rids)
    }
    index.close()
    assert sessions == {TWIN, NOTES}
    status = _status(run_cli)
    assert (status["embedded"], status["eligible"]) == (4, 12)
    assert status["fraction"] == pytest.approx(4 / 12, abs=1e-3)


def test_a_long_message_is_embedded_in_chunks_and_found_by_a_later_one(
    home: Path, run_cli: Any
) -> None:
    # ~200 tokens of routine talk first: what it was about comes in the second chunk
    filler = " ".join(
        f"Step {i}: I read the module, ran the unit tests and checked the logs again."
        for i in range(14)
    )
    tail = (
        " Finally the real cause: the nightly invoice export wrote its CSV with Windows line"
        " endings, so the bank's importer rejected every row after the header."
    )
    session = "5e3a0000-0000-4000-8000-0000000000c1"
    write_history(home)
    write_claude_session(
        home,
        session,
        home / "work" / "long",
        [("user", "It failed again overnight, have a look."), ("assistant", filler + tail)],
        start="2026-10-09T09:00",
    )
    done = run_cli("index", "--semantic", "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["semantic"]["run"]
    assert run["chunks_embedded"] >= run["texts_embedded"] + 1  # the long reply: 2+ chunks
    found = run_cli(
        "search", "--semantic", "--json", "bank rejected our export because of CRLF line endings"
    )
    assert found.returncode == 0, found.stderr
    top = json.loads(found.stdout)["results"][0]
    assert top["session_id"] == session and top["kind"] == "message", top


def test_progress_bar_on_a_terminal_and_coverage_in_index_and_doctor(
    home: Path, run_cli: Any
) -> None:
    from corpus_support import on_terminal

    write_history(home)
    assert run_cli("index").returncode == 0
    before = json.loads(run_cli("doctor", "--json").stdout)["semantic"]
    assert (before["eligible"], before["embedded"], before["fraction"]) == (12, 0, 0.0)
    code, screen = on_terminal(server_env(), "index", "--semantic", columns=100)
    assert code == 0, screen
    # the bar (drawn on stderr while it runs), then the summary line
    assert "embedding" in screen and "/12 messages" in screen, screen
    assert "Embeddings: 12 of 12 messages (100%)" in screen, screen
    piped = run_cli("index", "--semantic")  # off a terminal: no bar
    assert "embedding" not in piped.stderr and "━" not in piped.stderr, piped.stderr
    after = json.loads(run_cli("doctor", "--json").stdout)["semantic"]
    assert (after["eligible"], after["embedded"], after["fraction"]) == (12, 12, 1.0)
    # with no vector store the records and titles were counted, not read: the same counts
    assert before["titles"] == after["titles"] and before["vectors"] == 0 < after["vectors"]
    human = run_cli("doctor", env={"COLUMNS": "200"})
    assert "12 of 12 messages (100%)" in human.stdout, human.stdout


def test_lexical_search_and_indexing_never_wait_for_a_fill(home: Path, run_cli: Any) -> None:
    write_history(home)
    assert run_cli("index").returncode == 0
    # 1 record a commit, 10 s after each: ~2 minutes in all, however loaded the machine
    proc = slow_fill(1, 10.0)
    try:
        assert proc.stdout is not None
        while int(proc.stdout.readline() or 99) < 1:  # one batch committed
            pass
        assert proc.poll() is None  # still filling
        write_claude_session(
            home,
            "5e3a0000-0000-4000-8000-0000000000c2",
            home / "work" / "late",
            [("user", "Rotate the staging TLS certificate before Friday.")],
            start="2026-10-10T09:00",
        )
        indexed = run_cli("index", "--json", timeout=60)
        lexical = run_cli("search", "--lexical", "--json", "staging TLS certificate", timeout=60)
        hybrid = run_cli("search", "--json", "exif_transpose", timeout=60)
        # all three answered while the fill was still running (it needs ~100 s more)
        assert proc.poll() is None, "the fill ended before the searches: nothing was shown"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["refresh"]["records_added"] == 1
    assert json.loads(lexical.stdout)["results"][0]["text"].startswith("Rotate the staging")
    assert json.loads(hybrid.stdout)["results"][0]["session_id"] == PHOTOS


def _wait_embedded(run_cli: Any, want: int) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        time.sleep(2)
        status = _status(run_cli)
        if status["embedded"] >= want:
            break
    return status


def test_mcp_fills_embeddings_while_idle(home: Path, run_cli: Any) -> None:
    from mcp_support import json_of, stdio_session

    write_history(home)
    assert run_cli("index").returncode == 0
    assert _status(run_cli)["embedded"] == 0

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with stdio_session(env={"AGENTDEX_BACKGROUND_EMBED": "1"}) as session:
            status = await asyncio.to_thread(_wait_embedded, run_cli, 12)
            found = json_of(
                await session.call_tool(
                    "search", {"query": "pictures rotated wrongly", "mode": "semantic"}
                )
            )
        return status, found

    status, found = asyncio.run(scenario())
    assert status["embedded"] == status["eligible"] == 12
    assert found["results"][0]["session_id"] == PHOTOS


def test_ui_fills_embeddings_while_idle(home: Path, run_cli: Any, tmp_path: Path) -> None:
    write_history(home)
    assert run_cli("index").returncode == 0
    workspace = tmp_path / "ws"
    workspace.mkdir()
    proc = subprocess.Popen(
        [*UI_COMMAND, "--workspace", str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=server_env({"AGENTDEX_BACKGROUND_EMBED": "1"}),
        cwd=str(workspace),
    )
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["url"].startswith("http://127.0.0.1:")
        status = _wait_embedded(run_cli, 12)
    finally:
        proc.terminate()
        proc.wait(15)
    assert status["embedded"] == status["eligible"] == 12


def test_archive_prune_drops_the_vectors_of_what_it_removes(home: Path, run_cli: Any) -> None:
    write_history(home)
    done = run_cli("index", "--semantic", "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    # the agent deletes PHOTOS' transcript: only agentdex's archive keeps it
    gone = next(home.rglob(f"{PHOTOS}.jsonl"))
    gone.unlink()
    assert run_cli("index").returncode == 0
    kept = run_cli("search", "--semantic", "--json", "pictures rotated wrongly")
    assert json.loads(kept.stdout)["results"][0]["session_id"] == PHOTOS  # archived, found
    pruned = run_cli("archive", "prune", "--older-than", "0d", "--json")
    assert pruned.returncode == 0, pruned.stderr
    assert [c["session_id"] for c in json.loads(pruned.stdout)["conversations"]] == [PHOTOS]
    # prune told the vectors at once: PHOTOS' two texts and their vectors are gone
    status = _status(run_cli)
    assert status["eligible"] == status["embedded"] == 10
    assert status["vectors"] == 9
    db = _vectors_db(home)
    orphans = db.execute(
        "SELECT count(*) FROM keys WHERE ckey NOT IN (SELECT ckey FROM members)"
    ).fetchone()[0]
    db.close()
    assert orphans == 0
    data = json.loads(run_cli("search", "--semantic", "--json", "pictures rotated wrongly").stdout)
    assert PHOTOS not in {r["session_id"] for r in data["results"]}
    again = _status(run_cli)
    assert again["embedded"] == again["eligible"] == 10


def test_the_prefilter_of_a_big_store_finds_what_the_exact_scan_does(
    home: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``EXACT_MAX`` vectors only the ``PREFILTER`` nearest by sign bits are scored
    exactly: shrunk to this store, the answers stay those of scoring every vector."""
    write_history(home)
    assert run_cli("index", "--semantic").returncode == 0
    from agentdex.api.search import search
    from agentdex.semantic import query

    queries = [
        "pictures rotated wrongly",
        "where did we deal with the upstream service throttling us",
        "shrink the docker image",
        "table locked during a schema change",
    ]

    def answers() -> list[list[tuple[str, float]]]:
        out = []
        for text in queries:
            result = search(text, mode="semantic", refresh_first=False)
            out.append([(r["ref"], round(r["why"]["similarity"], 4)) for r in result.results])
        return out

    exact = answers()
    assert all(exact), exact
    monkeypatch.setattr(query, "EXACT_MAX", 4)  # 11 vectors: past it
    monkeypatch.setattr(query, "PREFILTER", 8)
    calls: list[int] = []
    real = query._candidates

    def counted(rows: Any, vector: Any) -> Any:
        picked = real(rows, vector)
        calls.append(len(picked))
        return picked

    monkeypatch.setattr(query, "_candidates", counted)
    prefiltered = answers()
    assert calls and all(n == 8 for n in calls), calls  # the prefilter ran, kept 8 of 11
    # the best of each answer is the same record at the same similarity
    assert [a[0] for a in prefiltered] == [a[0] for a in exact]
