"""A rebuild keeps search by meaning working: the new generation's records are linked
to the vectors their text already has (semantic/link.py), with no fill and no model.

Real index, real model, real CLI processes; the vectors are embedded once by
``index --semantic`` and every later step must not embed anything again.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from semantic_support import PHOTOS, THROTTLE, write_history

QUERY = "where did we deal with the upstream service throttling us"


def _json(done: Any) -> dict[str, Any]:
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _store_generation(home: Path) -> str:
    folder = next((home.parent / "agentdex-data").rglob("semantic"))
    db = sqlite3.connect(folder / "vectors.db")
    try:
        return str(db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
    finally:
        db.close()


def _current_generation(home: Path) -> str:
    index = next((home.parent / "agentdex-data").rglob("CURRENT")).parent
    return (index / "CURRENT").read_text().strip()


@pytest.fixture
def embedded(home: Path, run_cli: Any) -> dict[str, Any]:
    write_history(home)
    done = run_cli("index", "--semantic", "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["semantic"]
    assert data["embedded"] == data["eligible"] == 12
    return data


def _throttle_first(run_cli: Any, *args: str) -> dict[str, Any]:
    data = _json(run_cli("search", "--json", *args, QUERY))
    assert data["stats"]["search_mode"] == ("semantic" if "--semantic" in args else "hybrid")
    assert data["results"], data["stats"]
    top = data["results"][0]
    assert top["session_id"] == THROTTLE
    assert top["why"]["match"] == "semantic"
    return data


def test_a_rebuild_links_the_vectors_at_once(embedded: Any, run_cli: Any, home: Path) -> None:
    before = _current_generation(home)
    rebuilt = _json(run_cli("index", "--full", "--json", timeout=180))
    assert _current_generation(home) != before  # a new generation, records numbered anew
    # the rebuild's own status already counts every record as embedded: linked, not filled
    status = rebuilt["semantic"]
    assert status["embedded"] == status["eligible"] == 12
    assert status["vectors"] == 11
    assert _store_generation(home) == _current_generation(home)
    # hybrid finds the conversation by meaning right away (no fallback to lexical)
    data = _throttle_first(run_cli)
    assert data["stats"]["semantic"]["embedded_records"] == 12
    assert "notes" not in data["stats"] or not any(
        "no embedded record" in n for n in data["stats"]["notes"]
    )
    # and a fill afterwards has nothing left to do
    after = _json(run_cli("index", "--semantic", "--json", timeout=180))["semantic"]["run"]
    assert after["texts_embedded"] == 0
    assert after["linked"] == 0 and after["records_done"] == 0


def test_a_missed_rebuild_event_is_linked_by_the_first_search(
    embedded: Any, run_cli: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.api.index import refresh
    from agentdex.ingest import events

    monkeypatch.setattr(events, "LISTENERS", [])  # an agentdex that did not listen
    refresh(home=str(home), full=True)
    assert _store_generation(home) != _current_generation(home)
    data = _throttle_first(run_cli, "--semantic")
    assert data["stats"]["semantic"]["embedded_records"] == 12
    assert _store_generation(home) == _current_generation(home)


def test_a_rewritten_message_is_not_linked_to_its_old_vector(
    embedded: Any, run_cli: Any, home: Path
) -> None:
    (path,) = home.rglob(f"{PHOTOS}.jsonl")
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    first["message"]["content"] = "Invoices print with the wrong currency symbol in PDF exports."
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n")
    status = _json(run_cli("index", "--full", "--json", timeout=180))["semantic"]
    # the archive keeps the message as it was: 13 records, the new text has no vector yet
    assert status["eligible"] == 13
    assert status["embedded"] == 12
    query = "invoices show the wrong currency sign"
    data = _json(run_cli("search", "--semantic", "--json", query))
    assert all("invoices" not in r["snippet"].lower() for r in data["results"])
    after = _json(run_cli("index", "--semantic", "--json", timeout=180))["semantic"]
    assert after["run"]["texts_embedded"] == 1
    assert after["embedded"] == after["eligible"] == 13
    data = _json(run_cli("search", "--semantic", "--json", query))
    assert data["results"][0]["session_id"] == PHOTOS
    assert "invoices" in data["results"][0]["snippet"].lower()


def test_a_first_build_is_linked_once_complete(embedded: Any, home: Path) -> None:
    """A rebuild a search started is current while it runs (index/coverage.py): linking
    waits until it is complete, then the first search by meaning links it."""
    from agentdex.api.index import refresh
    from agentdex.index import coverage
    from agentdex.index.store import Location, connect, index_root
    from agentdex.semantic.link import relink
    from agentdex.semantic.model import DEFAULT

    refresh(home=str(home), full=True)
    root = index_root(None, home=str(home))
    gen = Location(root).current()
    assert gen is not None
    db = connect(gen)
    db.execute("BEGIN")
    coverage.write(db, coverage.BuildCoverage(bytes=1, bytes_total=2))
    db.execute("COMMIT")
    db.close()
    # mark the vectors as linked to the generation before, as a first build leaves them
    vectors = sqlite3.connect(next(root.rglob("vectors.db")))
    vectors.execute("UPDATE meta SET value = 'gen-before' WHERE key = 'generation'")
    vectors.commit()
    vectors.close()
    assert relink(root, DEFAULT.id) is None  # still building: nothing linked yet
    assert _store_generation(home) == "gen-before"
    db = connect(gen)
    db.execute("BEGIN")
    coverage.write(db, None)
    db.execute("COMMIT")
    db.close()
    assert relink(root, DEFAULT.id) == 12
    assert _store_generation(home) == gen.name
