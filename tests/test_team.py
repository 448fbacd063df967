"""Team push and status on a real PostgreSQL server (tests/pg_server.py).

Push is incremental and idempotent; forget reaches the server as a tombstone;
excluded projects never leave; secrets are redacted before anything is sent;
row-level security keeps each machine to its own rows; the roles do what they say.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import team as api
from agentdex.errors import AgentdexError, ConflictError
from team_helpers import Team, claude_session, consistent, make_team, random_home, records_of


@pytest.fixture
def team(pg_server: Any, team_db: str) -> Team:
    return make_team(pg_server, team_db)


def test_push_sends_everything_once_then_nothing(home: Path, team: Team) -> None:
    random_home(home, sessions=12, per_session=9)
    first = api.push(team.writers["m1"], machine="laptop")
    assert first.conversations_sent == 12 and first.records_added == 12 * 9
    assert first.batches >= 1 and first.bytes_sent > 0
    consistent(team)
    before = records_of(team)
    second = api.push(team.writers["m1"], machine="laptop")
    assert (second.conversations_sent, second.records_added, second.records_removed) == (0, 0, 0)
    assert second.conversations_unchanged == 12
    assert records_of(team) == before
    status = api.status(team.writers["m1"], machine="laptop")
    assert status["up_to_date"] and status["records_pushed"] == 12 * 9
    assert [p["status"] for p in status["pushes"]] == ["done", "done"]
    assert "pw-m1" not in json.dumps(status) and ":***@" in status["url"]


def test_push_sends_only_what_changed(home: Path, team: Team) -> None:
    ids = random_home(home, sessions=6, per_session=4)
    api.push(team.writers["m1"], machine="laptop")
    path = claude_session(home, "proj0", ids[0], ["one more prompt", "and its reply", "x yz"])
    path.write_text(path.read_text())  # rewritten: 3 records instead of 4
    claude_session(home, "proj9", "abcdef01-1111-4222-8333-000000000009", ["brand new talk"])
    status = api.status(team.writers["m1"], machine="laptop")
    # status reads the index as it is: refresh it as push would
    from agentdex.api.index import refresh

    refresh(None)
    status = api.status(team.writers["m1"], machine="laptop")
    assert not status["up_to_date"]
    assert status["pending"]["conversations_new"] == 1
    result = api.push(team.writers["m1"], machine="laptop")
    assert result.conversations_unchanged == 5
    assert result.conversations_sent == 2
    texts = {t for (t,) in team.sql("SELECT text FROM agentdex.records")}
    assert "one more prompt" in texts and "brand new talk" in texts
    consistent(team)


def test_forget_pushes_a_tombstone_and_the_rows_go(home: Path, team: Team, run_cli: Any) -> None:
    ids = random_home(home, sessions=3, per_session=4)
    api.push(team.writers["m1"], machine="laptop")
    done = run_cli("forget", "--session", ids[1], "--yes", "--json", env={"HOME": str(home)})
    assert done.returncode == 0, done.stderr
    result = api.push(team.writers["m1"], machine="laptop")
    assert result.tombstones == 1
    assert team.sql("SELECT count(*) FROM agentdex.records WHERE session_id = %s", (ids[1],)) == [
        (0,)
    ]
    assert team.sql("SELECT machine, session_id FROM agentdex.tombstones") == [("laptop", ids[1])]
    assert team.sql("SELECT count(*) FROM agentdex.conversations") == [(2,)]
    consistent(team)


def test_excluded_projects_never_leave(home: Path, team: Team, monkeypatch: Any) -> None:
    random_home(home, sessions=5, per_session=3)
    claude_session(home, "secret-proj", "5ec12e70-1111-4222-8333-000000000001", ["classified plan"])
    config = Path(__import__("os").environ["AGENTDEX_CONFIG"])
    config.write_text(f'[team]\nexclude = ["{home}/src/secret-proj"]\n')
    result = api.push(team.writers["m1"], machine="laptop")
    assert result.conversations_sent == 5
    everything = json.dumps(team.sql("SELECT * FROM agentdex.records"), default=str)
    assert "classified" not in everything and "secret-proj" not in everything
    assert api.status(team.writers["m1"], machine="laptop")["exclude"] == [
        f"{home}/src/secret-proj"
    ]


PLANTED = {
    "openai": "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2,
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "aws": "AKIA" + "QWERTYUIOPASDFGH",
    "url": "postgres://deploy:Hunter2-Very-Secret@db.internal:5432/prod",
    "assign": 'DB_PASSWORD="correct-horse-battery-staple"',
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x2\n-----END RSA PRIVATE KEY-----",
    # a generated value (no provider prefix) in a key's assignment: the entropy rule
    "entropy": "encryption_key = " + "kq8ZV2m9Xr4Lw7Tn1Pc5Hd3Js6Gb0Fy8Qa2Ue",
    "jwt": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    "bearer": 'curl -H "Authorization: Bearer ' + 'Qm9vT2tQcmVmaXhlZFRva2VuMTIzNDU2"',
    "slack": "xoxb-" + "123456789012-123456789012-AbCdEfGhIjKlMnOpQrStUvWx",
    # no key name at all: the bare high-entropy rule (base62 after `blob`, base64 alone)
    "bare": "blob " + "Zk3xQ9wLp2Vn8Rt5Ys7MaB4cD1eF",
    "pasted": "\n" + "q8Zr2Lw9Xv4Tn7Kp1Ms6Yb3HcE5gJ0uWd/Af+Ri=" + "\n",
}
SECRET_PARTS = (
    "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "AKIAQWERTYUIOPASDFGH",
    "Hunter2-Very-Secret",
    "correct-horse-battery-staple",
    "MIIEowIBAAKCAQEA7x2",
    "kq8ZV2m9Xr4Lw7Tn1Pc5Hd3Js6Gb0Fy8Qa2Ue",
    "dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    "Qm9vT2tQcmVmaXhlZFRva2VuMTIzNDU2",
    "AbCdEfGhIjKlMnOpQrStUvWx",
    "Zk3xQ9wLp2Vn8Rt5Ys7MaB4cD1eF",
    "q8Zr2Lw9Xv4Tn7Kp1Ms6Yb3HcE5gJ0uWd/Af+Ri",
)


@pytest.mark.parametrize("local_redaction", [True, False], ids=["index-masks", "push-masks"])
def test_planted_secrets_never_reach_the_server(
    home: Path, team: Team, local_redaction: bool
) -> None:
    """Masked either way: by the index (the default) or, when the user opted out of
    redaction on this machine, by the push itself."""
    if not local_redaction:
        Path(os.environ["AGENTDEX_CONFIG"]).write_text("[privacy]\nredact = false\n")
    texts = [f"here is the {name}: {value} keep it safe" for name, value in PLANTED.items()]
    claude_session(home, "app", "5ec7e75a-1111-4222-8333-000000000002", texts)
    result = api.push(team.writers["m1"], machine="laptop")
    if local_redaction:
        assert result.redactions == 0  # the index masked them: nothing left to mask
    else:
        assert result.redactions >= len(SECRET_PARTS)
    everything = json.dumps(
        [team.sql(f"SELECT * FROM agentdex.{t}") for t in ("records", "conversations")],
        default=str,
    )
    for part in SECRET_PARTS:
        assert part not in everything
    assert "[REDACTED:" in everything and "keep it safe" in everything


def test_row_level_security_keeps_machines_apart(home: Path, team: Team) -> None:
    import psycopg

    random_home(home, sessions=2, per_session=3)
    api.push(team.writers["m1"], machine="laptop")
    api.push(team.writers["m2"], machine="desktop")
    # m2's credentials cannot touch laptop's rows (RLS filters them out of UPDATE/DELETE)
    with psycopg.connect(team.writers["m2"], autocommit=True) as conn:
        gone = conn.execute("DELETE FROM agentdex.records WHERE machine = 'laptop'")
        assert gone.rowcount == 0
        changed = conn.execute("UPDATE agentdex.records SET text = 'x' WHERE machine = 'laptop'")
        assert changed.rowcount == 0
        assert (
            conn.execute("DELETE FROM agentdex.conversations WHERE machine = 'laptop'").rowcount
            == 0
        )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO agentdex.tombstones (machine, agent, session_id)"
                " VALUES ('laptop', 'claude-code', 'x')"
            )
        assert (
            conn.execute(
                "UPDATE agentdex.machines SET owner = current_user WHERE machine = 'laptop'"
            ).rowcount
            == 0
        )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # own rows, moved: refused
            conn.execute("UPDATE agentdex.records SET machine = 'laptop' WHERE machine = 'desktop'")
    assert team.sql("SELECT count(*) FROM agentdex.records WHERE machine = 'laptop'") == [(6,)]
    assert team.sql("SELECT owner FROM agentdex.machines WHERE machine = 'laptop'") == [
        (f"{team.db}_m1",)
    ]
    # and a push under another machine's name is refused, one line
    with pytest.raises(AgentdexError, match="belongs to the role"):
        api.push(team.writers["m2"], machine="laptop")
    # the reader reads everything and writes nothing
    with psycopg.connect(team.reader, autocommit=True) as conn:
        count = conn.execute("SELECT count(*) FROM agentdex.records").fetchone()
        assert count == (12,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM agentdex.records")
    with pytest.raises(AgentdexError) as refused:
        api.push(team.reader, machine="reader-box")
    assert refused.value.code == "FORBIDDEN"


def test_one_push_per_machine_at_a_time(home: Path, team: Team) -> None:
    import psycopg

    random_home(home, sessions=2, per_session=2)
    api.push(team.writers["m1"], machine="laptop")
    with psycopg.connect(team.writers["m1"], autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(hashtext('agentdex push'), hashtext('laptop'))")
        with pytest.raises(ConflictError, match="another push from machine 'laptop'"):
            api.push(team.writers["m1"], machine="laptop")
        # another machine is not held up
        assert api.push(team.writers["m2"], machine="desktop").conversations_sent == 2


def test_two_machines_pushing_at_once(home: Path, team: Team, tmp_path: Path, run_cli: Any) -> None:
    import subprocess
    import sys

    from conftest import SRC_DIR

    homes = []
    for n, name in enumerate(("m1", "m2")):
        other = tmp_path / name
        random_home(other, sessions=15, per_session=6, seed=n + 1)
        homes.append(other)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "agentdex", "team", "push", "--json"],
            env={
                **__import__("os").environ,
                "HOME": str(h),
                "PYTHONPATH": str(SRC_DIR),
                "AGENTDEX_DATA_DIR": str(h / ".adx"),
                "AGENTDEX_TEAM_URL": team.writers[name],
                "AGENTDEX_MACHINE": name,
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for h, name in zip(homes, ("m1", "m2"), strict=True)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert json.loads(out)["records_added"] == 90
    assert team.sql(
        "SELECT machine, count(*) FROM agentdex.records GROUP BY machine ORDER BY machine"
    ) == [("m1", 90), ("m2", 90)]
    consistent(team)
