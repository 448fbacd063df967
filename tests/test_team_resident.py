"""The resident team searcher (api/team_resident.py) on a real PostgreSQL server.

``agentdex search --team`` answered by the resident must be the same as the same
search made in its own process (``AGENTDEX_RESIDENT_TEAM=0``): the same JSON but
for the time taken, the same piped lines, the same exit status, the same one-line
errors (unreachable server, wrong password, newer schema, bad query) without a
password. The resident keeps a connection, replaces one the server dropped, leaves
a client of another libpq environment to search itself, keeps its socket private,
and exits on ``stop`` or when idle, closing its connections. Every test stops it.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import team as api
from agentdex.api import team_resident
from team_helpers import Team, claude_session, make_team, random_home

ON = {"AGENTDEX_RESIDENT_TEAM": "1"}
OFF = {"AGENTDEX_RESIDENT_TEAM": "0"}
NOW = {"AGENTDEX_NOW": "2026-11-20T00:00:00Z"}


@pytest.fixture
def team(pg_server: Any, team_db: str, home: Path) -> Iterator[Team]:
    team = make_team(pg_server, team_db)
    random_home(home, sessions=8, per_session=9)
    claude_session(home, "shop", "5a5a5a5a-1111-4222-8333-000000000001", ["Retry backoff", "ok"])
    api.push(team.writers["m1"], machine="laptop")
    try:
        yield team
    finally:
        _stop_resident()


def _stop_resident() -> None:
    """Stop the resident this test started and wait until its process is gone."""
    team_resident.stop()
    for pid in _residents():
        _wait_gone(pid)


def _residents() -> list[int]:
    """The resident team searchers of this test (their working folder is its run dir)."""
    run = team_resident.run_dir().resolve()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if Path(os.readlink(proc / "cwd")) != run or _zombie(int(proc.name)):
                continue
            if b"agentdex.api.team_resident_server" in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def _wait_gone(pid: int, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _zombie(pid):
            return
        time.sleep(0.05)
    os.kill(pid, 9)  # never left running, whatever happened
    raise AssertionError(f"resident {pid} did not exit")


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has exited (gone, or a zombie its parent has not reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z"
    except OSError:
        return True


def _reader_connections(team: Team) -> int:
    rows = team.sql(
        "SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (f"{team.db}_reader",)
    )
    return int(rows[0][0])


def _settles(team: Team, count: int) -> None:
    """The reader's connections on the server come to ``count`` (a closed one's backend
    leaves pg_stat_activity a moment after its client)."""
    deadline = time.monotonic() + 60
    while _reader_connections(team) != count:
        assert time.monotonic() < deadline, (_reader_connections(team), count)
        time.sleep(0.05)


def _same(done_on: Any, done_off: Any) -> None:
    assert done_on.returncode == done_off.returncode, (done_on.stderr, done_off.stderr)
    assert "Traceback" not in done_on.stderr + done_off.stderr
    assert done_on.stderr == done_off.stderr


def _json_without_time(text: str) -> dict[str, Any]:
    data = json.loads(text)
    data["stats"].pop("seconds")
    return dict(data)


SEARCHES = [
    ("retry",),
    ('"retry backoff"',),
    ("-E", r"zq\d{3}\b"),
    ("the", "-n", "3"),
    ("the", "--sort", "time", "-n", "5"),
    ("project:shop", "Retry"),
    ("agent:claude-code", "since:2026-01-01", "timeout", "-w"),
    ("nothing-matches-this-zzqq",),
    ("-i", "RETRY", "--exact-count"),
]


def test_resident_answers_as_a_search_in_its_own_process(team: Team, run_cli: Any) -> None:
    env = {"AGENTDEX_TEAM_URL": team.reader, **NOW}
    for words in SEARCHES:
        done_on = run_cli("search", *words, "--team", "--json", env={**env, **ON})
        done_off = run_cli("search", *words, "--team", "--json", env={**env, **OFF})
        _same(done_on, done_off)
        assert _json_without_time(done_on.stdout) == _json_without_time(done_off.stdout), words
        piped_on = run_cli("search", *words, "--team", env={**env, **ON})
        piped_off = run_cli("search", *words, "--team", env={**env, **OFF})
        _same(piped_on, piped_off)
        assert piped_on.stdout == piped_off.stdout
    found = json.loads(run_cli("search", "retry", "--team", "--json", env={**env, **ON}).stdout)
    assert found["results"] and all(hit["machine"] == "laptop" for hit in found["results"])
    info = team_resident.status()
    # every search with it on was answered by it, on the one connection it keeps
    assert info["running"] and info["requests"] == 2 * len(SEARCHES) + 1, info
    assert info["connections"] == 1 and _residents() == [info["pid"]]
    _settles(team, 1)


def test_errors_come_back_as_the_same_one_line(team: Team, run_cli: Any) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    wrong = team.reader.replace("pw-reader", "not-the-password")
    cases = [
        (f"postgresql://someone:s3cret-pw@127.0.0.1:{port}/db", ("x",), 1, "TEAM_UNREACHABLE"),
        (wrong, ("x",), 1, "TEAM_AUTH"),
        (team.reader, ("-E", "(unclosed"), 2, "USAGE"),
        (team.reader, ("since:never", "x"), 2, "USAGE"),
    ]
    for url, words, code, name in cases:
        for mode in (ON, OFF):
            done = run_cli("search", *words, "--team", "--json", "--url", url, env=mode)
            assert done.returncode == code, (mode, done.stderr)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("agentdex: "), done.stderr
            assert json.loads(done.stdout)["error"]["code"] == name
            assert "s3cret-pw" not in done.stdout + done.stderr
            assert "not-the-password" not in done.stdout + done.stderr
        on = run_cli("search", *words, "--team", "--url", url, env=ON)
        off = run_cli("search", *words, "--team", "--url", url, env=OFF)
        _same(on, off)
    assert team_resident.status()["requests"] == 2 * len(cases)
    # a database whose schema is newer than this agentdex: refused, through the resident too
    team.sql("INSERT INTO agentdex.migrations (name) VALUES ('m999_from_the_future')")
    done = run_cli("search", "x", "--team", "--url", team.reader, env=ON)
    assert done.returncode == 8 and "newer than this agentdex" in done.stderr
    log = Path(team_resident.run_dir(), team_resident.socket_name().removesuffix(".sock") + ".log")
    assert "pw-reader" not in log.read_text() and "s3cret-pw" not in log.read_text()


def test_a_connection_the_server_dropped_is_replaced(team: Team, run_cli: Any) -> None:
    env = {"AGENTDEX_TEAM_URL": team.reader, **ON, **NOW}
    first = run_cli("search", "retry", "--team", "--json", env=env)
    assert first.returncode == 0, first.stderr
    _settles(team, 1)  # the resident's kept connection
    killed = team.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
        (f"{team.db}_reader",),
    )
    assert killed == [(True,)]
    again = run_cli("search", "retry", "--team", "--json", env=env)
    assert again.returncode == 0, again.stderr
    assert _json_without_time(again.stdout) == _json_without_time(first.stdout)
    assert team_resident.status()["requests"] == 2


def test_another_libpq_environment_searches_in_its_own_process(team: Team, run_cli: Any) -> None:
    env = {"AGENTDEX_TEAM_URL": team.reader, **ON, **NOW}
    first = run_cli("search", "retry", "--team", "--json", env=env)
    assert first.returncode == 0 and team_resident.status()["requests"] == 1
    # PGAPPNAME is read by libpq: a resident started without it must not answer for it
    other = run_cli("search", "retry", "--team", "--json", env={**env, "PGAPPNAME": "other"})
    assert other.returncode == 0, other.stderr
    assert _json_without_time(other.stdout) == _json_without_time(first.stdout)
    assert team_resident.status()["requests"] == 1  # asked, refused, not counted
    # a URL naming a file by a relative path is never sent to it
    relative = team.reader + "?sslmode=disable&sslrootcert=certs/root.crt"
    assert not team_resident.servable(relative)
    assert team_resident.servable(team.reader + "?sslrootcert=/etc/ssl/root.crt")


def test_private_socket_and_nothing_left_running(team: Team, run_cli: Any) -> None:
    env = {"AGENTDEX_TEAM_URL": team.reader, **ON}
    done = run_cli("search", "retry", "--team", "--json", env=env)
    assert done.returncode == 0, done.stderr
    info = team_resident.status()
    sock = Path(info["socket"])
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    # the URL (and its password) never appears on its command line
    assert b"pw-reader" not in Path(f"/proc/{info['pid']}/cmdline").read_bytes()
    assert team_resident.stop()
    _wait_gone(info["pid"])
    assert not sock.exists() and not team_resident.status()["running"]
    _settles(team, 0)  # it closed its connection
    # idle for AGENTDEX_TEAM_IDLE_SECONDS: it leaves by itself
    idle = {**env, "AGENTDEX_TEAM_IDLE_SECONDS": "1"}
    done = run_cli("search", "retry", "--team", "--json", env=idle)
    assert done.returncode == 0, done.stderr
    for pid in _residents():
        _wait_gone(pid)
    assert not sock.exists()
    _settles(team, 0)
