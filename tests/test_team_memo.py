"""A push reads only the conversations whose index rows changed (agentdex.team.survey).

The memo beside the index remembers each conversation's digest by a signature
read from the index's rows; these tests watch which conversations a push reads
in full, and check that a lost, stale or corrupt memo costs time, never rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentdex.api import team as api
from agentdex.index.store import index_root
from agentdex.team import local
from team_helpers import Team, claude_session, consistent, make_team, random_home, records_of


@pytest.fixture
def team(pg_server: Any, team_db: str) -> Team:
    return make_team(pg_server, team_db)


@pytest.fixture
def reads(monkeypatch: Any) -> list[set[tuple[str, str]] | None]:
    """Each full read of local conversations, as the set of conversations asked for."""
    seen: list[set[tuple[str, str]] | None] = []
    real = local.conversations

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(None if kwargs.get("only") is None else set(kwargs["only"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(local, "conversations", watched)
    return seen


def _memo() -> Path:
    return index_root(None) / "team-memo.json"


def test_a_push_with_nothing_changed_reads_no_conversation(
    home: Path, team: Team, reads: list[Any]
) -> None:
    random_home(home, sessions=8, per_session=5)
    first = api.push(team.writers["m1"], machine="laptop")
    assert first.conversations_sent == 8 and len(reads) == 1 and len(reads[0]) == 8
    assert _memo().exists()
    reads.clear()
    second = api.push(team.writers["m1"], machine="laptop")
    assert second.conversations_unchanged == 8 and second.conversations_sent == 0
    assert reads == []  # every digest came from the memo and matched the server's
    status = api.status(team.writers["m1"], machine="laptop")
    assert status["up_to_date"] and status["records_local"] == 40 and reads == []


def test_only_the_changed_conversation_is_read(home: Path, team: Team, reads: list[Any]) -> None:
    ids = random_home(home, sessions=6, per_session=4)
    api.push(team.writers["m1"], machine="laptop")
    claude_session(home, "proj0", ids[0], ["a rewritten prompt", "its reply"])
    claude_session(home, "proj9", "abcdef01-1111-4222-8333-000000000009", ["brand new talk"])
    reads.clear()
    result = api.push(team.writers["m1"], machine="laptop")
    assert result.conversations_sent == 2 and result.conversations_unchanged == 5
    asked = {session for _, session in reads[0]}
    assert asked == {ids[0], "abcdef01-1111-4222-8333-000000000009"}
    texts = {t for (t,) in team.sql("SELECT text FROM agentdex.records")}
    assert "a rewritten prompt" in texts and "brand new talk" in texts
    consistent(team)


def test_a_stale_or_broken_memo_costs_time_not_rows(home: Path, team: Team) -> None:
    random_home(home, sessions=5, per_session=3)
    api.push(team.writers["m1"], machine="laptop")
    before = records_of(team)
    # the server lost rows behind this machine's back: remembered digests no longer match
    team.sql(
        "DELETE FROM agentdex.conversations WHERE machine = 'laptop' AND session_id IN"
        " (SELECT session_id FROM agentdex.conversations ORDER BY session_id LIMIT 2)"
    )
    again = api.push(team.writers["m1"], machine="laptop")
    assert again.conversations_sent == 2 and records_of(team) == before
    for junk in ("{not json", '{"header": 1, "entries": []}', ""):
        _memo().write_text(junk)
        team.sql("DELETE FROM agentdex.conversations WHERE machine = 'laptop'")
        result = api.push(team.writers["m1"], machine="laptop")
        assert result.conversations_sent == 5 and records_of(team) == before
    consistent(team)


def test_a_deleted_source_is_pushed_as_gone(home: Path, team: Team, reads: list[Any]) -> None:
    """The archive keeps a deleted transcript's records under the same ids: the file's new
    path is what changed, and the memo notices it."""
    ids = random_home(home, sessions=3, per_session=3)
    path = claude_session(home, "gone", "90e90e90-1111-4222-8333-000000000001", ["soon deleted"])
    api.push(team.writers["m1"], machine="laptop")
    assert team.sql("SELECT count(*) FROM agentdex.records WHERE source_gone") == [(0,)]
    path.unlink()
    reads.clear()
    result = api.push(team.writers["m1"], machine="laptop")
    gone = team.sql("SELECT DISTINCT session_id FROM agentdex.records WHERE source_gone")
    assert gone == [("90e90e90-1111-4222-8333-000000000001",)], result
    assert {s for _, s in reads[0]} == {"90e90e90-1111-4222-8333-000000000001"}
    assert set(ids).isdisjoint({s for (s,) in gone})
    consistent(team)
