"""Bad input and failures of the team commands: one line, a documented exit code, no half-write.

An unreachable server, a wrong password, ``sslmode=require`` against a server
without SSL, a database without the schema or from a newer agentdex, a bad URL,
a connection lost mid-push, and a push killed with SIGKILL in a loop (the rerun
leaves exactly the rows of one clean push).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import team as api
from conftest import SRC_DIR
from pg_server import create_database
from team_helpers import Team, consistent, make_team, random_home, records_of


@pytest.fixture
def team(pg_server: Any, team_db: str) -> Team:
    return make_team(pg_server, team_db)


def _one_line(done: Any, code: int, *needles: str) -> dict[str, Any]:
    assert done.returncode == code, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentdex: "), done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return json.loads(done.stdout)["error"] if done.stdout.strip() else {}


def test_no_url_or_a_bad_one_is_a_usage_error(run_cli: Any) -> None:
    _one_line(run_cli("team", "push"), 2, "no team database", "AGENTDEX_TEAM_URL")
    _one_line(run_cli("team", "status", "--url", "mysql://x@y/z"), 2, "postgresql://")
    error = _one_line(run_cli("search", "x", "--team", "--json"), 2, "no team database")
    assert error["code"] == "USAGE"
    _one_line(run_cli("search", "x", "--url", "postgresql://h/d"), 2, "add --team")


def test_unreachable_server(run_cli: Any) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://someone:s3cret-pw@127.0.0.1:{port}/db"
    for args in (("team", "push"), ("team", "status"), ("search", "x", "--team")):
        done = run_cli(*args, "--json", env={"AGENTDEX_TEAM_URL": url})
        error = _one_line(done, 1, "cannot reach the team database", ":***@127.0.0.1")
        assert error["code"] == "TEAM_UNREACHABLE"
        assert "s3cret-pw" not in done.stderr + done.stdout


def test_wrong_password_and_unknown_database(team: Team, run_cli: Any) -> None:
    wrong = team.writers["m1"].replace("pw-m1", "not-the-password")
    done = run_cli("team", "push", "--json", "--url", wrong)
    error = _one_line(done, 1, "login refused")
    assert error["code"] == "TEAM_AUTH" and "not-the-password" not in done.stderr + done.stdout
    missing = team.writers["m1"].rsplit("/", 1)[0] + "/no_such_db"
    _one_line(run_cli("team", "status", "--url", missing), 1, "no such database")


def test_sslmode_is_honoured(team: Team, run_cli: Any) -> None:
    done = run_cli("team", "status", "--url", team.writers["m1"] + "?sslmode=require")
    _one_line(done, 1, "SSL")
    ok = run_cli("team", "status", "--json", "--url", team.writers["m1"] + "?sslmode=disable")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["url"].endswith("?sslmode=disable")


def test_database_without_the_schema(pg_server: Any, run_cli: Any) -> None:
    bare = create_database(pg_server)
    error = _one_line(
        run_cli("team", "push", "--json", "--url", pg_server.url(db=bare)), 3, "team init"
    )
    assert error["code"] == "NOT_FOUND"


def test_newer_schema_is_refused_and_nothing_written(home: Path, team: Team, run_cli: Any) -> None:
    random_home(home, sessions=2, per_session=2)
    team.sql("INSERT INTO agentdex.migrations (name) VALUES ('m999_from_the_future')")
    env = {"AGENTDEX_TEAM_URL": team.writers["m1"]}
    for args in (("team", "push"), ("team", "status"), ("search", "x", "--team")):
        _one_line(run_cli(*args, env=env), 8, "newer than this agentdex", "m999_from_the_future")
    init = run_cli("team", "init", "--url", team.admin)  # the owner cannot downgrade it either
    _one_line(init, 8, "newer than this agentdex")
    assert team.sql("SELECT count(*) FROM agentdex.pushes") == [(0,)]
    assert team.sql("SELECT count(*) FROM agentdex.machines") == [(0,)]


def test_a_reader_cannot_push(home: Path, team: Team, run_cli: Any) -> None:
    random_home(home, sessions=1, per_session=2)
    error = _one_line(run_cli("team", "push", "--json", "--url", team.reader), 1, "not allowed")
    assert error["code"] == "FORBIDDEN"


def test_connection_lost_mid_push_leaves_whole_conversations(home: Path, team: Team) -> None:
    """The server drops the push's connection after its second batch: whole conversations stay."""
    from agentdex.api.team import TeamSettings  # noqa: F401 - the API under test
    from agentdex.team.connect import TeamUnreachable

    random_home(home, sessions=30, per_session=10)
    batches = []

    def cut(result: Any) -> None:
        batches.append(result.batches)
        if result.batches == 2:
            team.sql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE usename = %s AND pid <> pg_backend_pid()",
                (f"{team.db}_m1",),
            )

    with pytest.raises(TeamUnreachable, match="lost the connection") as lost:
        api.push(team.writers["m1"], machine="laptop", batch_records=40, progress=cut)
    assert "\n" not in lost.value.message and "pw-m1" not in lost.value.message
    consistent(team)
    halfway = team.sql("SELECT count(*) FROM agentdex.conversations")[0][0]
    assert 0 < halfway < 30
    assert team.sql("SELECT status FROM agentdex.pushes") == [("running",)]
    done = api.push(team.writers["m1"], machine="laptop", batch_records=40)
    assert done.conversations_sent == 30 - halfway and done.conversations_unchanged == halfway
    assert team.sql("SELECT status FROM agentdex.pushes ORDER BY id") == [
        ("interrupted",),
        ("done",),
    ]
    consistent(team)
    assert team.sql("SELECT count(*) FROM agentdex.records") == [(300,)]


def test_push_killed_in_a_loop_then_rerun_equals_one_clean_push(
    home: Path, pg_server: Any, team: Team, run_cli: Any
) -> None:
    random_home(home, sessions=60, per_session=15, seed=7)
    assert run_cli("index", "--json", env={"HOME": str(home)}).returncode == 0
    env = {
        **os.environ,
        "HOME": str(home),
        "PYTHONPATH": str(SRC_DIR),
        "AGENTDEX_TEAM_URL": team.writers["m1"],
        "AGENTDEX_MACHINE": "laptop",
        "AGENTDEX_TEAM_BATCH_RECORDS": "30",
    }
    rng = random.Random(25)
    kills = 0
    for _ in range(8):
        before = team.sql("SELECT count(*) FROM agentdex.conversations")[0][0]
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentdex", "team", "push", "--no-refresh", "--json"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # kill once this push has committed a random number of batches (or at once)
        target = before + rng.randint(0, 6)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            if team.sql("SELECT count(*) FROM agentdex.conversations")[0][0] >= target:
                break
            time.sleep(0.005)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        consistent(team)
    assert kills >= 3
    finish = run_cli("team", "push", "--no-refresh", "--json", env={**env, "HOME": str(home)})
    assert finish.returncode == 0, finish.stderr
    consistent(team)
    # a clean push of the same home into a second database holds exactly the same rows
    other = make_team(pg_server, create_database(pg_server), machines=("m1",))
    clean = run_cli(
        "team",
        "push",
        "--no-refresh",
        "--json",
        env={**env, "AGENTDEX_TEAM_URL": other.writers["m1"]},
    )
    assert clean.returncode == 0, clean.stderr
    assert records_of(team) == records_of(other)
    assert len(records_of(team)) == 60 * 15
    again = run_cli("team", "push", "--no-refresh", "--json", env=env)
    assert json.loads(again.stdout)["records_added"] == 0
