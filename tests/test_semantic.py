"""Search by meaning end to end: embed, hybrid/lexical/semantic, why, similar, consistency.

Real model (the pinned ONNX wheel), real index, real CLI processes where the
surface matters. The recall numbers are measured by bench/semantic_eval.py;
here each behaviour is checked on a handful of conversations.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from semantic_support import DOCKER, MIGRATION, NOTES, PHOTOS, THROTTLE, TWIN, write_history


def _json(done: Any) -> dict[str, Any]:
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _sessions(data: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for r in data["results"]:
        if r["session_id"] not in out:
            out.append(r["session_id"])
    return out


@pytest.fixture
def embedded(home: Path, run_cli: Any) -> dict[str, Any]:
    """The small history, indexed and embedded by ``agentdex index --semantic --json``."""
    write_history(home)
    done = run_cli("index", "--semantic", "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["semantic"]


def test_index_semantic_embeds_everything_once(embedded: dict[str, Any]) -> None:
    # 12 prompts and replies; NOTES and TWIN share their prompt word for word
    assert embedded["eligible"] == 12
    assert embedded["embedded"] == 12
    assert embedded["fraction"] == 1.0
    assert embedded["run"]["texts_embedded"] == 11
    assert embedded["vectors"] == 11
    assert embedded["problem"] is None
    assert embedded["model"] == "minilm-l6-v2-int8-dq"  # int8 products


def test_hybrid_finds_a_problem_described_in_other_words(embedded: Any, run_cli: Any) -> None:
    query = "where did we deal with the upstream service throttling us"
    lexical = _json(run_cli("search", "--lexical", "--json", query))
    assert lexical["results"] == []
    assert lexical["stats"]["search_mode"] == "lexical"
    hybrid = _json(run_cli("search", "--json", query))
    assert hybrid["stats"]["search_mode"] == "hybrid"
    assert _sessions(hybrid)[0] == THROTTLE
    why = hybrid["results"][0]["why"]
    assert why["match"] == "semantic" and why["terms"] == []
    assert 0.2 < why["similarity"] <= 1.0
    semantic = _json(run_cli("search", "--semantic", "--json", "pictures rotated wrongly"))
    assert _sessions(semantic)[0] == PHOTOS
    assert all(r["why"]["match"] == "semantic" for r in semantic["results"])


def test_an_exact_phrase_still_ranks_its_conversation_first(embedded: Any, run_cli: Any) -> None:
    for phrase, session in (
        ('"lock_timeout"', MIGRATION),
        ('"multi-stage build"', DOCKER),
        ("exif_transpose", PHOTOS),
        ('"Retry-After header"', THROTTLE),
    ):
        data = _json(run_cli("search", "--json", phrase))
        assert _sessions(data)[0] == session, phrase
        first = data["results"][0]["why"]
        assert first["match"] in ("exact", "both")
        assert first["terms"], first


def test_why_on_the_terminal_and_in_both_matches(embedded: Any, run_cli: Any) -> None:
    # one word alone is too far in meaning from a whole reply (0.195 < the 0.27 floor)
    data = _json(run_cli("search", "--json", "retry backoff"))
    top = data["results"][0]
    assert top["session_id"] == THROTTLE
    assert top["why"] == {
        "match": "both",
        "terms": ["retry", "backoff"],
        "similarity": pytest.approx(top["why"]["similarity"]),
    }
    assert top["why"]["similarity"] is not None
    shown = run_cli("search", "--semantic", "pictures rotated wrongly", env={"COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    assert PHOTOS in shown.stdout


def test_similar_lists_the_closest_conversations(embedded: Any, run_cli: Any) -> None:
    data = _json(run_cli("similar", NOTES, "--json"))
    sessions = [r["session_id"] for r in data["results"]]
    assert NOTES not in sessions
    assert sessions[0] == TWIN  # the same request, word for word
    assert MIGRATION in sessions[:3]  # the other orders-table change
    similarities = [r["similarity"] for r in data["results"]]
    assert similarities == sorted(similarities, reverse=True)
    assert all(0.15 <= s <= 1 for s in similarities)
    missing = run_cli("similar", "no-such-session", "--json")
    assert missing.returncode == 3


def test_a_missed_event_is_caught_up_by_the_next_fill(
    embedded: Any, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.api import archive
    from agentdex.ingest import events

    monkeypatch.setattr(events, "LISTENERS", [])  # an agentdex that did not listen
    archive.forget(archive.forget_plan(session=PHOTOS))
    data = _json(run_cli("search", "--semantic", "--json", "pictures rotated wrongly"))
    assert PHOTOS not in _sessions(data)  # never returned without a live record
    after = _json(run_cli("index", "--semantic", "--json", timeout=180))["semantic"]
    assert after["run"]["members_dropped"] == 2
    assert after["run"]["vectors_dropped"] == 2
    assert after["eligible"] == after["embedded"] == 10


def test_rebuild_reuses_vectors_and_forget_drops_them(
    embedded: Any, run_cli: Any, home: Path
) -> None:
    rebuilt = _json(run_cli("index", "--full", "--semantic", "--json", timeout=180))["semantic"]
    assert rebuilt["embedded"] == 12
    assert rebuilt["run"]["texts_embedded"] == 0  # every text was already embedded
    # the rebuild linked every record to its vector (semantic/link.py): nothing left to fill
    assert rebuilt["run"]["records_done"] == 0
    assert rebuilt["run"]["embedded_before"] == 12
    forgot = run_cli("forget", "--session", PHOTOS, "--yes", "--json")
    assert forgot.returncode == 0, forgot.stderr
    # forget told the vectors (ingest/events.py): they are gone at once
    status = _json(run_cli("index", "--json"))["semantic"]
    assert status["eligible"] == status["embedded"] == 10
    assert status["vectors"] == 9  # 11 distinct texts less PHOTOS' two
    data = _json(run_cli("search", "--semantic", "--json", "pictures rotated wrongly"))
    assert PHOTOS not in _sessions(data)
    after = _json(run_cli("index", "--semantic", "--json", timeout=180))["semantic"]
    assert after["run"]["texts_embedded"] == 0
    assert after["run"]["members_dropped"] == after["run"]["vectors_dropped"] == 0
    folder = next((home.parent / "agentdex-data").rglob("semantic"))
    db = sqlite3.connect(folder / "vectors.db")
    orphans = db.execute(
        "SELECT count(*) FROM keys WHERE ckey NOT IN (SELECT ckey FROM members)"
    ).fetchone()[0]
    db.close()
    assert orphans == 0


def test_no_embeddings_means_lexical_and_semantic_says_so(home: Path, run_cli: Any) -> None:
    write_history(home)
    data = _json(run_cli("search", "--json", "backoff"))
    assert data["stats"]["search_mode"] == "lexical"
    assert data["results"][0]["why"] == {"match": "exact", "terms": ["backoff"], "similarity": None}
    done = run_cli("search", "--semantic", "backoff")
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [
        "agentdex: no embeddings yet: run `agentdex index --semantic`"
    ]
    assert run_cli("search", "--lexical", "--semantic", "x").returncode == 2


def test_the_mcp_tool_declares_a_mode_and_the_library_takes_it(embedded: Any) -> None:
    # through a real server and MCP session: tests/test_semantic_title_surfaces.py
    from agentdex.api.search import search
    from agentdex.mcp.tools.search import SEARCH

    assert SEARCH.properties["mode"]["enum"] == ["hybrid", "lexical", "semantic"]
    result = search("pictures rotated wrongly", mode="semantic", refresh_first=False)
    assert result.results[0]["session_id"] == PHOTOS
    assert result.stats["semantic"]["embedded_records"] == 12


def test_serve_fills_embeddings_in_the_background_while_idle(
    home: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time
    import urllib.request

    from hardening_support import served

    write_history(home)
    assert run_cli("index").returncode == 0
    monkeypatch.setenv("AGENTDEX_BACKGROUND_EMBED", "1")
    with served() as info:
        deadline = time.monotonic() + 90
        status: dict[str, Any] = {}
        while time.monotonic() < deadline:
            time.sleep(2)
            status = _json(run_cli("index", "--json"))["semantic"]
            if status["embedded"] == 12:
                break
        assert status["embedded"] == status["eligible"] == 12
        request = urllib.request.Request(
            info["url"] + "/api/v0/search?q=pictures%20rotated%20wrongly&mode=semantic",
            headers={"Authorization": f"Bearer {info['token']}"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            data = json.loads(response.read())
    assert data["results"][0]["session_id"] == PHOTOS
    assert data["results"][0]["why"]["match"] == "semantic"


@pytest.mark.parametrize("query", ["zzqqxx", "asdfghjkl", "blorp fnord"])
def test_a_query_that_means_nothing_finds_nothing(embedded: Any, run_cli: Any, query: str) -> None:
    # below the similarity floor (api/semantic.MIN_SIMILARITY): no match by meaning
    hybrid = run_cli("search", "--json", query)
    assert hybrid.returncode == 1, hybrid.stderr  # 1: no results
    data = json.loads(hybrid.stdout)
    assert data["results"] == []
    assert data["stats"]["search_mode"] == "hybrid"
    assert data["stats"]["semantic"]["embedded_records"] == 12
    semantic = _json(run_cli("search", "--semantic", "--json", query))
    assert semantic["results"] == []
    # while a real question in other words still finds its conversation
    found = _json(run_cli("search", "--json", "sideways pictures from phones"))
    assert found["results"][0]["session_id"] == PHOTOS


def test_a_page_reads_the_text_of_its_own_results_only(embedded: Any) -> None:
    """Hybrid search reads text and snippets for the page it returns, not for every
    candidate of both halves: a short page is the head of a long one, field for field,
    and every result of it carries its text, snippet, ``why`` and highlight spans."""
    from agentdex.api import search as api

    for query in ("upstream service throttling Retry-After", "build image docker", "exif"):
        long = api.search(query, mode="hybrid", limit=50, refresh_first=False)
        assert long.stats["search_mode"] == "hybrid"
        for size in (1, 3):
            short = api.search(query, mode="hybrid", limit=size, refresh_first=False)
            assert short.results == long.results[:size], (query, size)
            assert short.highlights == long.highlights[:size]
        assert len(long.highlights) == len(long.results)
        lexical = {
            r["ref"]: r
            for r in api.search(query, mode="lexical", limit=50, refresh_first=False).results
        }
        for item, spans in zip(long.results, long.highlights, strict=True):
            assert item["text"] and item["snippet"], item
            if item["why"]["match"] == "semantic":
                assert spans == [] and item["why"]["terms"] == []
                continue
            # a word match: text, snippet and terms as lexical search gives them
            same = lexical[item["ref"]]
            assert (item["text"], item["snippet"]) == (same["text"], same["snippet"])
            assert item["why"]["terms"] == same["why"]["terms"] and item["why"]["terms"]
            assert spans


def test_a_semantic_hit_whose_metadata_is_gone_leaves_its_place_to_the_next(
    embedded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Semantic hits read full metadata for the records they keep only; one whose
    metadata row does not come back is skipped and the next candidate counts, as when
    every candidate's metadata was read first."""
    from agentdex.api import search as api
    from agentdex.search.engine import Engine

    query = "upstream service throttling Retry-After"
    every = api.search(query, mode="semantic", limit=None, refresh_first=False).results
    assert len(every) >= 2
    gone = {(every[0]["session_id"], every[0]["locator"])}
    real = Engine.hits
    asked: list[int] = []

    def without(self: Engine, ids: Any) -> Any:
        ids = list(ids)
        asked.append(len(ids))
        return [h for h in real(self, ids) if (h.session_id, h.locator) not in gone]

    monkeypatch.setattr(Engine, "hits", without)
    rest = api.search(query, mode="semantic", limit=None, refresh_first=False).results
    assert [r["ref"] for r in rest] == [r["ref"] for r in every[1:]]
    assert len(asked) >= 2  # read again after the first went missing
