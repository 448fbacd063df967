"""The first-page path (many candidates) answers like the brute-force oracle too.

tests/test_search_oracle.py checks the whole-answer path; here the thresholds
that choose it are set to zero, so every query streams its candidates level
by level and stops early, and the results must still be exactly the oracle's
(with a limit larger than the corpus, every match is taken).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agentdex.api import search as api
from agentdex.search import run as search_run
from test_index_fixtures import ROWS, register, store_dir, write_file
from test_search_oracle import REGEXES, corpora, oracle, queries


@pytest.fixture(autouse=True)
def _first_page_always(monkeypatch: pytest.MonkeyPatch) -> None:
    register()
    monkeypatch.setattr(search_run, "FULL_EXACT", 0)
    monkeypatch.setattr(search_run, "FULL_VERIFIED", 0)
    monkeypatch.setattr(search_run, "PAGE", 2)


def _found(root: Path, query: str, case: str, word: bool, regex: bool) -> set:
    result = api.search(
        query,
        root=root,
        refresh_first=False,
        case=case,
        word=word,
        regex=regex,
        limit=10_000,
        dedup=False,
    )
    assert result.stats["mode"] in ("first-page", "scan") or result.stats["candidates"] == 0
    return {(r["session_id"], r["locator"]) for r in result.results}


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)
@given(data=st.data(), recs=corpora)
def test_first_page_path_equals_brute_force(home: Path, data: st.DataObject, recs: list) -> None:
    work = Path(tempfile.mkdtemp(dir=home))
    try:
        fake_home, root = work / "home", work / "index"
        write_file(store_dir(fake_home) / "corpus.jsonl", recs)
        api.refresh(root, home=str(fake_home), rows=ROWS)
        for _ in range(5):
            query, case, word, regex = data.draw(queries(recs))
            expected = oracle(recs, query, case, word, regex)
            assert _found(root, query, case, word, regex) == expected, (query, case, word)
        for pattern in data.draw(st.lists(st.sampled_from(REGEXES), min_size=1, max_size=2)):
            case = data.draw(st.sampled_from(["smart", "insensitive", "sensitive"]))
            expected = oracle(recs, pattern, case, False, True)
            assert _found(root, pattern, case, False, True) == expected, (pattern, case)
    finally:
        shutil.rmtree(work, ignore_errors=True)
