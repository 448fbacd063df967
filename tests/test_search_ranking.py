"""Ranking priors, recency, deduplication and --here / --only-here."""

from __future__ import annotations

import re
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentdex.api import search as api
from agentdex.search.ranking import _whole_occurrence, base_score
from test_index_fixtures import ROWS, register, store_dir, write_file

NOW = 1_767_323_045.0


def test_prior_and_recency_order() -> None:
    prompt = base_score("prompt", "user", NOW, 100, NOW)
    prose = base_score("message", "assistant", NOW, 100, NOW)
    tool = base_score("tool_result", "tool", NOW, 100, NOW)
    assert prompt > prose > tool
    assert base_score("prompt", "user", NOW - 400 * 86400, 100, NOW) < prompt
    assert base_score("prompt", "user", NOW, 100, NOW, here=True) > prompt


def test_dedup_and_here(home: Path, tmp_path: Path, git_repo: Path) -> None:
    register()
    here, elsewhere = str(git_repo), str(tmp_path / "elsewhere")
    now = time.time()
    write_file(
        store_dir(home) / "a.jsonl",
        [
            {
                "session": "s1",
                "role": "tool",
                "kind": "tool_result",
                "text": "lint ok",
                "ts": now,
                "cwd": elsewhere,
            },
            {
                "session": "s1",
                "role": "tool",
                "kind": "tool_result",
                "text": "lint ok",
                "ts": now - 5,
                "cwd": elsewhere,
            },
            {
                "session": "s2",
                "role": "tool",
                "kind": "tool_result",
                "text": "lint ok",
                "ts": now - 9,
                "cwd": elsewhere,
            },
            {
                "session": "s3",
                "role": "tool",
                "kind": "tool_result",
                "text": "lint ok in repo",
                "ts": now - 86400 * 90,
                "cwd": here,
            },
        ],
    )
    api.refresh(home=str(home), rows=ROWS)
    deduped = api.search("lint", refresh_first=False)
    assert deduped.stats["total"] == 3  # the repeated line in s1 counts once
    assert [r["session_id"] for r in deduped.results][:1] == ["s1"]
    everything = api.search("lint", refresh_first=False, dedup=False)
    assert everything.stats["total"] == 4
    boosted = api.search("lint", refresh_first=False, here=here)
    assert boosted.results[0]["session_id"] == "s3"
    only = api.search("lint", refresh_first=False, here=here, only_here=True)
    assert [r["session_id"] for r in only.results] == ["s3"]
    by_time = api.search("lint", refresh_first=False, sort="time", dedup=False)
    assert [r["session_id"] for r in by_time.results] == ["s1", "s1", "s2", "s3"]


#: word characters of several kinds (letters, digits, other numerics, ``_``, a titlecase
#: letter) and not (spaces, punctuation, a combining mark, an ideograph's neighbours)
PIECES = ["a", "b", "ab", "_", " ", "-", "é", "1", "²", "٣", "ǅ", "日", "\u0301", "\n", "."]


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("".join),
)
def test_whole_occurrence_is_the_word_regex(haystack: str, target: str) -> None:
    """Ranking's whole-word check by ``str.find`` answers as the regex it replaced."""
    regex = re.search(rf"(?<!\w){re.escape(target)}(?!\w)", haystack) is not None
    assert _whole_occurrence(haystack, target) == regex
