"""Conversation titles are embedded: a search by meaning finds a conversation by its title.

End to end through the CLI in a temp home (real model, real index): a conversation
whose messages say nothing about the query, titled with what it was about, is found
by ``--semantic`` and reported as its first prompt with ``why.title``; ``forget``
takes its title's vector away at once.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from semantic_support import TITLE, TITLED, write_history, write_titled
from semantic_support import TITLE_QUERY as QUERY


def _json(done: Any) -> dict[str, Any]:
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_a_conversation_is_found_by_its_title_and_forget_drops_it(home: Path, run_cli: Any) -> None:
    write_history(home)
    write_titled(home)
    done = run_cli("index", "--semantic", "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["semantic"]["run"]
    assert run["titles_done"] == 1

    data = _json(run_cli("search", "--semantic", "--json", QUERY))
    top = data["results"][0]
    assert top["session_id"] == TITLED
    assert top["why"]["match"] == "semantic"
    assert top["why"]["title"] == TITLE
    assert top["why"]["similarity"] >= 0.27
    # reported as the conversation's first prompt, a record that exists
    assert top["kind"] == "prompt" and top["text"] == "ok, go ahead with what we agreed"
    # its messages alone do not say it: no hit of this conversation without the title
    assert all("title" in r["why"] for r in data["results"] if r["session_id"] == TITLED)
    hybrid = _json(run_cli("search", "--json", QUERY))
    assert hybrid["results"][0]["session_id"] == TITLED

    again = _json(run_cli("index", "--semantic", "--json", timeout=180))["semantic"]
    assert again["run"]["titles_done"] == again["run"]["texts_embedded"] == 0  # nothing to redo
    assert again["titles"] == again["titles_embedded"] == 1
    from agentdex.cli.search import why_text  # the terminal's heading (piped output is TSV)

    assert why_text(top["why"]) == f"meaning {top['why']['similarity']:.2f} (title)"

    forgot = run_cli("forget", "--session", TITLED, "--yes", "--json")
    assert forgot.returncode == 0, forgot.stderr
    folder = next((home.parent / "agentdex-data").rglob("semantic"))
    db = sqlite3.connect(folder / "vectors.db")
    try:
        # forget told the vectors: the title's member and its vector went at once
        assert db.execute("SELECT count(*) FROM title_members").fetchone()[0] == 0
        orphans = db.execute(
            "SELECT count(*) FROM keys WHERE ckey NOT IN (SELECT ckey FROM members)"
        ).fetchone()[0]
        assert orphans == 0
    finally:
        db.close()
    data = _json(run_cli("search", "--semantic", "--json", QUERY))
    assert TITLED not in {r["session_id"] for r in data["results"]}
    status = _json(run_cli("index", "--json"))["semantic"]
    assert status["titles"] == status["titles_embedded"] == 0
    # a rebuild and a fill do not bring it back
    rebuilt = _json(run_cli("index", "--full", "--semantic", "--json", timeout=180))
    assert rebuilt["semantic"]["run"]["titles_done"] == 0
    data = _json(run_cli("search", "--semantic", "--json", QUERY))
    assert TITLED not in {r["session_id"] for r in data["results"]}
