"""Team search answers exactly as local search on the same home (a differential test).

The README's sample home (every agent) plus random Claude conversations is indexed
and pushed; each query then runs locally (``agentdex.api.search``) and on the team
database (``agentdex.api.team.search``) with the same options. The results must
be the same records with the same scores in the same order, the same totals, and
every team hit names its machine. The first-page path (many candidates, read per
ranking level) is forced with a small probe size so it is compared too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as local
from agentdex.api import team as api
from agentdex.errors import UsageError
from agentdex.team.search import TeamEngine
from team_helpers import Team, claude_session, make_team, random_home

NOW = 1_800_000_000.0

QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("retry", {}),
    ("the", {}),
    ("retry backoff", {}),
    ('"retry backoff"', {}),
    ("retry OR flaky", {}),
    ("the -retry", {}),
    ("NOT the", {}),
    ("agent:codex", {}),
    ("role:user kind:prompt", {}),
    ("project:/", {}),
    ("project:shop OR cwd:proj1", {}),
    ("branch:main timeout", {}),
    ("since:2026-11-01 until:2026-11-30", {}),
    ("session:0000", {}),
    ("Retry", {}),
    ("RETRY", {"case": "insensitive"}),
    ("retry", {"case": "sensitive"}),
    ("is", {"word": True}),
    ("the", {"word": True}),
    (r"zq\d{3}\b", {"regex": True}),
    ("retr(y|ies)", {"regex": True}),
    ("(?i)TIME.UT", {"regex": True}),
    ("( flaky OR zq1 ) the", {}),
    ("straße", {}),
    ("KELVIN", {"case": "insensitive"}),
    ("ab", {}),
    ("-", {}),
    ("path:/nonexistent", {}),
    ("the", {"sort": "time"}),
    ("retry", {"dedup": False}),
    # a plain term's i is not cut (only a run's last: İ lower-cases to i + a dot), a regex's is
    ("merci", {}),
    ("merci beaucoup", {}),
    ("istanbul", {}),
    ("stanbul timeout", {}),
    ("kelvin sign", {}),
    ("secret", {}),
    ("secret", {"regex": True}),
    ("ISTANBUL", {"regex": True, "case": "insensitive"}),
]


@pytest.fixture
def pushed(home: Path, rendered_sample: Path, pg_server: Any, team_db: str) -> Team:
    random_home(home, sessions=40, per_session=12, seed=3)
    claude_session(
        home,
        "unicode",
        "0c0de000-1111-4222-8333-000000000001",
        [
            "Straße und STRASSE",
            "the \u212aelvin sign",
            "İstanbul timeout",
            "ſecret",
            "MERCİ beaucoup",
            "a" * 40 + "!",
        ],
    )
    team = make_team(pg_server, team_db)
    api.push(team.writers["m1"], machine="box")
    return team


def _same(theirs: Any, mine: Any, why: object) -> None:
    """Same order keys (score, time) in the same order, and the same records.

    Records tied on both keys are ordered by their row id, which differs between
    the local index and the team database; a page cut inside a tie may keep
    different members of it, so only records ranked above the last key must agree.
    """

    def order(result: Any) -> list[tuple[Any, ...]]:
        return [(r["score"], r["timestamp"]) for r in result.results]

    def records(result: Any, above: tuple[Any, ...] | None) -> set[tuple[Any, ...]]:
        return {
            (r["ref"], r["agent"], r["score"], r["text"], r["source_gone"])
            for r in result.results
            if above is None or (r["score"], r["timestamp"]) != above
        }

    assert order(theirs) == order(mine), why
    last = order(mine)[-1] if mine.results else None
    assert records(theirs, last) == records(mine, last), why
    assert len(theirs.results) == len(mine.results), why


@pytest.mark.parametrize("limit", [None, 20])
def test_team_search_equals_local_search(pushed: Team, limit: int | None, monkeypatch: Any) -> None:
    for query, options in QUERIES:
        args = {"now": NOW, "limit": limit, **options}
        mine = local.search(query, refresh_first=False, **args)
        theirs = api.search(query, url=pushed.reader, **args)
        _same(theirs, mine, (query, options))
        assert theirs.stats["total"] == mine.stats["total"] or not mine.stats["total_exact"]
        assert all(r["machine"] == "box" for r in theirs.results)
        # the same JSON as locally, plus `machine`: ids, short refs and why included
        for hit in theirs.results:
            assert set(hit) == set(mine.results[0]) | {"machine"}, (query, options)
        same = {r["ref"]: r for r in mine.results}
        for hit in theirs.results:
            if hit["ref"] in same:
                for key in ("id", "short_ref", "why"):
                    assert hit[key] == same[hit["ref"]][key], (query, options, key)


def test_first_page_path_equals_local(pushed: Team, monkeypatch: Any) -> None:
    """More candidates than the probe: the team reads per level and stops early, as locally."""
    monkeypatch.setattr("agentdex.team.search.FULL_VERIFIED", 5)
    modes = set()
    for query, options in QUERIES:
        args = {"now": NOW, "limit": 10, **options}
        theirs = api.search(query, url=pushed.reader, **args)
        mine = local.search(query, refresh_first=False, **args)
        _same(theirs, mine, (query, options))
        modes.add(theirs.stats["mode"])
    assert modes == {"whole", "first-page", "scan"}


@pytest.mark.parametrize("helper_first", [True, False])
def test_bands_read_ahead_on_a_second_connection(
    pushed: Team, monkeypatch: Any, helper_first: bool
) -> None:
    """The first bands' probes read ahead on a helper connection (team/ahead.py) give the
    same answers as without it, and as locally; each band is read once, by one of the two
    connections; the helper is idle after every search. ``helper_first``: the first
    connection waits for the helper to finish before it asks (every band read ahead);
    else they race (the first connection waits for a band the helper reads)."""
    from psycopg.pq import TransactionStatus

    from agentdex.team import ahead
    from agentdex.team.connect import connect

    monkeypatch.setattr("agentdex.team.search.FULL_VERIFIED", 5)
    served: list[bool] = []
    probes: list[tuple[Any, Any]] = []
    result = ahead.ReadAhead.result
    probe = TeamEngine.probe

    def counted(self: Any, where: Any) -> Any:
        if helper_first:
            self.thread.join()
        found = result(self, where)
        if where in self.ready:  # a band asked of the helper (the first AHEAD_BANDS)
            served.append(found is not None)
        return found

    def recorded(self: Any, query: Any, limit: Any, conn: Any = None, **options: Any) -> Any:
        probes.append((query, limit))
        return probe(self, query, limit, conn, **options)

    monkeypatch.setattr(ahead.ReadAhead, "result", counted)
    monkeypatch.setattr(TeamEngine, "probe", recorded)
    helper = connect(pushed.reader)
    try:
        for query, options in QUERIES:
            args = {"now": NOW, "limit": 10, **options}
            alone = api.search(query, url=pushed.reader, **args)
            probes.clear()
            theirs = api.search(query, url=pushed.reader, helper=lambda: helper, **args)
            mine = local.search(query, refresh_first=False, **args)
            _same(theirs, mine, (query, options))
            assert theirs.results == alone.results, (query, options)
            assert theirs.stats | {"seconds": 0} == alone.stats | {"seconds": 0}
            assert helper.info.transaction_status == TransactionStatus.IDLE
            assert len(probes) == len(set(probes)), (query, options, "a probe read twice")
    finally:
        helper.close()
    assert any(served), "no band was read ahead"
    if helper_first:
        assert all(served), "the helper had finished: every band asked was read ahead"


def test_a_hashed_id_from_a_team_hit_opens_its_conversation(pushed: Team) -> None:
    """Aider's ids are hashed (``aider-3f9a2c1b``): the page opens a team hit by its short ref."""
    from agentdex.api import team_views

    found = api.search("agent:aider", url=pushed.reader, now=NOW, limit=5)
    assert found.results, "the sample home has Aider conversations"
    hit = found.results[0]
    assert hit["id"].startswith("aider-") and hit["short_ref"] != hit["ref"]
    shown = team_views.conversation(hit["short_ref"], url=pushed.reader)
    assert shown["session_id"] == hit["session_id"] and shown["machine"] == "box"
    assert shown["records"][shown["focus"]]["locator"] == hit["locator"]
    by_prefix = team_views.conversation(hit["id"][:10], url=pushed.reader)
    assert by_prefix["session_id"] == hit["session_id"]


def test_malformed_queries_fail_as_locally(pushed: Team) -> None:
    for query, options in [("colour:red", {}), ('"open', {}), ("a[b", {"regex": True})]:
        with pytest.raises(UsageError) as mine:
            local.search(query, refresh_first=False, **options)
        with pytest.raises(UsageError) as theirs:
            api.search(query, url=pushed.reader, **options)
        assert theirs.value.message == mine.value.message


def test_cli_search_team_json(pushed: Team, run_cli: Any, home: Path) -> None:
    import json

    done = run_cli(
        "search", "retry", "--team", "--json", "-n", "3", env={"AGENTDEX_TEAM_URL": pushed.reader}
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["status"] == "ok" and len(data["results"]) == 3
    assert {r["machine"] for r in data["results"]} == {"box"}
    assert "pw-reader" not in done.stdout and ":***@" in data["stats"]["team"]
    piped = run_cli("search", "retry", "--team", "--url", pushed.reader, "-n", "2")
    assert piped.returncode == 0, piped.stderr
    assert [line.split("\t")[1] for line in piped.stdout.splitlines()] == ["box", "box"]
    none = run_cli("search", "zzqqnothing", "--team", "--url", pushed.reader, "--json")
    assert none.returncode == 1 and json.loads(none.stdout)["results"] == []


def test_a_runaway_regex_stops_at_the_time_budget(pushed: Team, run_cli: Any) -> None:
    """As locally: the results so far, one line on stderr, exit 7."""
    runaway = ("a" * 40 + "!",)
    assert pushed.sql("SELECT count(*) FROM agentdex.records WHERE text = %s", runaway) == [(1,)]
    done = run_cli(
        "search", "-E", "(a+)+$", "--team", "--url", pushed.reader,
        "--time-budget", "0.5", "--json", timeout=60,
    )  # fmt: skip
    assert done.returncode == 7, done.stderr
    data = json.loads(done.stdout)
    assert data["status"] == "partial" and data["stats"]["stopped"] == "time-budget"
    assert "time budget" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("paths", "settings", "dense"),
    [
        ({"_banded"}, {"FULL_VERIFIED": 5}, False),
        ({"_banded", "_walk_page"}, {"FULL_VERIFIED": 5, "ORDERED_MAX": 6}, False),
        ({"_walks", "_walk_page"}, {"FULL_VERIFIED": 5, "WALK_LEVELS": 0}, None),
    ],
)
def test_each_paging_path_equals_local(
    pushed: Team,
    monkeypatch: Any,
    paths: set[str],
    settings: dict[str, int],
    dense: bool | None,
) -> None:
    """A first page from bands of levels read when first needed and sorted here, from
    walks of the (level, ts) index where a band holds too many, or from walks alone
    when the planner's estimates say the matches are dense: each as locally.

    The choice between bands and walks rests on the planner's estimates, which change
    when autovacuum happens to analyze the fresh table mid-test (it did in a loaded full
    run): the table is analyzed up front, and the banded cases take the banded path
    whatever the estimates say (``dense=False``); the walks case keeps the real choice.
    """
    from agentdex.team import search as team_search

    pushed.sql("ANALYZE agentdex.records")
    for name, value in settings.items():
        monkeypatch.setattr(team_search, name, value)
    if dense is not None:
        monkeypatch.setattr(team_search.TeamRun, "_dense", lambda *_args: dense)
    used: list[str] = []
    for owner, method in (
        (team_search.TeamRun, "_banded"),
        (team_search.TeamRun, "_walks"),
        (team_search.TeamEngine, "_walk_page"),
    ):
        original = getattr(owner, method)

        def spy(self: Any, *args: Any, _original: Any = original, _name: str = method) -> Any:
            used.append(_name)
            return _original(self, *args)

        monkeypatch.setattr(owner, method, spy)
    for query, options in QUERIES:
        args = {"now": NOW, "limit": 10, **options}
        theirs = api.search(query, url=pushed.reader, **args)
        mine = local.search(query, refresh_first=False, **args)
        _same(theirs, mine, (query, options, paths))
    assert paths <= set(used)
    if "_walk_page" not in paths:
        assert "_walk_page" not in used


def test_literal_patterns_keep_what_only_ascii_can_match() -> None:
    """The ILIKE pattern of a plain term keeps its i and s (a regex's are cut: ı, İ, ſ)."""
    from agentdex.team.plan import literal_sql

    def pattern(literal: str, regex: bool) -> object:
        sql = literal_sql(literal, sensitive=False, regex=regex)
        return None if sql is None else sql.params[0]

    assert pattern("Timeout", regex=False) == "%timeout%"
    assert pattern("Timeout", regex=True) == "%t%meout%"
    assert pattern("buffer commit sedistimel", regex=False) == "%buffer commit sedistimel%"
    assert pattern("merci", regex=False) == "%merc%"  # MERCİ lower-cases to merci + a dot
    assert pattern("kelvin", regex=False) == "%elvin%"  # the Kelvin sign lower-cases to k
    assert pattern("sk", regex=False) is None


def test_a_readers_plan_sees_the_statistics(pushed: Team) -> None:
    """Through ``records_read`` (m003) a reader's trigram condition is estimated from the
    column's statistics; on the table itself row security hides them from ILIKE."""
    import psycopg

    pushed.sql("ANALYZE agentdex.records")
    (count,) = pushed.sql("SELECT count(*) FROM agentdex.records WHERE text ILIKE %s", ("%the%",))[
        0
    ]
    assert count > 100

    def estimate(table: str) -> int:
        with psycopg.connect(pushed.reader) as conn:
            plan = conn.execute(
                f"EXPLAIN (FORMAT JSON) SELECT id FROM agentdex.{table} WHERE text ILIKE %s",
                ("%the%",),
            ).fetchone()[0]
        return int(plan[0]["Plan"]["Plan Rows"])

    assert count / 2 <= estimate("records_read") <= count * 2
    assert estimate("records_read") > estimate("records")


def test_an_older_schema_is_refused_until_init_upgrades_it(
    home: Path, pg_server: Any, team_db: str, monkeypatch: Any
) -> None:
    from agentdex.errors import UnsupportedError
    from agentdex.team import schema

    random_home(home, sessions=3, per_session=4, seed=5)
    before = schema.MIGRATIONS[:2]
    assert [name for name, _ in before] == ["m001_initial", "m002_roles_and_row_security"]
    with monkeypatch.context() as patched:
        patched.setattr(schema, "MIGRATIONS", before)
        team = make_team(pg_server, team_db)
        api.push(team.writers["m1"], machine="box")
    with pytest.raises(
        UnsupportedError, match=r"older than this agentdex \(missing m003_search_view\)"
    ):
        api.search("retry", url=team.reader)
    assert api.init(team.admin)["applied"] == ["m003_search_view", "m004_top_levels"]
    # the first band's own trigram index: the rows of levels 0-11 alone
    (top,) = team.sql("SELECT indexdef FROM pg_indexes WHERE indexname = 'records_text_trgm_top'")
    assert "gin_trgm_ops" in top[0] and top[0].endswith("WHERE (level < 12)")
    mine = local.search("retry", refresh_first=False, now=NOW)
    _same(api.search("retry", url=team.reader, now=NOW), mine, "after the upgrade")
