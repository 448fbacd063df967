"""Helpers for the team tests (no tests here): a set-up team database, Claude Code homes."""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pg_server import Server

WORDS = [
    "retry",
    "backoff",
    "timeout",
    "parser",
    "index",
    "search",
    "flaky",
    "checkout",
    "session",
    "token",
    "cache",
    "merge",
    "branch",
    "worktree",
    "deploy",
    "rollback",
    "schema",
    "migration",
    "cursor",
    "commit",
    "review",
    "lint",
    "format",
    "function",
    "the",
    "and",
    "of",
    "to",
    "in",
    "is",
    "it",
    "that",
    "for",
    "with",
    "on",
    "as",
    "by",
    "at",
    "from",
    "this",
    "be",
    "or",
    "are",
]


@dataclass
class Team:
    server: Server
    db: str
    admin: str
    writers: dict[str, str]
    reader: str

    def sql(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.admin, autocommit=True) as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []


def make_team(server: Server, db: str, machines: tuple[str, ...] = ("m1", "m2")) -> Team:
    """``team init`` as the superuser, then a login role per machine and a reader."""
    import psycopg

    from agentdex.api import team as api

    admin = server.url(db=db)
    api.init(admin)
    writers = {}
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in (*machines, "reader"):
            role = f"{db}_{name}"
            group = "agentdex_reader" if name == "reader" else "agentdex_writer"
            conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-{name}' IN ROLE {group}")
            conn.execute(f'GRANT CONNECT ON DATABASE "{db}" TO {role}')
            if name != "reader":
                writers[name] = server.url(role, f"pw-{name}", db)
    return Team(server, db, admin, writers, server.url(f"{db}_reader", "pw-reader", db))


def claude_session(
    home: Path, project: str, session: str, texts: list[str], *, start: int = 1_790_000_000
) -> Path:
    """A Claude Code transcript: prompts and replies alternating, one per text."""
    cwd = str(home / "src" / project)
    folder = home / ".claude" / "projects" / ("-" + cwd.strip("/").replace("/", "-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    lines = []
    parent = None
    for i, text in enumerate(texts):
        uuid = f"{session[:8]}-{i:04d}-4000-8000-000000000000"
        stamp = _iso(start + 60 * i)
        base = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session,
            "version": "2.1.40",
            "gitBranch": "main",
            "uuid": uuid,
            "timestamp": stamp,
        }
        if i % 2 == 0:
            base.update(type="user", message={"role": "user", "content": text})
        else:
            base.update(
                type="assistant",
                message={
                    "id": f"msg_{uuid}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": text}],
                },
            )
        lines.append(json.dumps(base))
        parent = uuid
    path.write_text("\n".join(lines) + "\n")
    return path


def _iso(epoch: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def random_home(home: Path, sessions: int, per_session: int, seed: int = 1) -> list[str]:
    """``sessions`` Claude conversations of random words; returns their ids."""
    rng = random.Random(seed)
    ids = []
    for n in range(sessions):
        sid = f"{n:08x}-1111-4222-8333-{seed:012x}"
        texts = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 40)))
            + f" zq{rng.randint(0, 10_000)}"
            for _ in range(per_session)
        ]
        claude_session(home, f"proj{n % 5}", sid, texts, start=1_790_000_000 + n * 7_200)
        ids.append(sid)
    return ids


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {"HOME": str(home)}
    env.update(extra)
    return env


def records_of(team: Team, machine: str | None = None) -> list[tuple[Any, ...]]:
    """Every record row's content (not its id), sorted: what two clean pushes share."""
    where = "WHERE machine = %s" if machine else ""
    rows = team.sql(
        "SELECT machine, agent, session_id, rkey, rhash, position, role, kind, ts, text"
        f" FROM agentdex.records {where}",
        (machine,) if machine else (),
    )
    return sorted(rows, key=repr)


def consistent(team: Team) -> None:
    """Every conversation row has exactly its records (no half-pushed conversation)."""
    bad = team.sql(
        "SELECT c.agent, c.session_id, c.records, count(r.id) FROM agentdex.conversations c"
        " LEFT JOIN agentdex.records r USING (machine, agent, session_id)"
        " GROUP BY c.machine, c.agent, c.session_id, c.records HAVING count(r.id) <> c.records"
    )
    assert bad == []
    orphans = team.sql(
        "SELECT count(*) FROM agentdex.records r WHERE NOT EXISTS (SELECT 1 FROM"
        " agentdex.conversations c WHERE (c.machine, c.agent, c.session_id) ="
        " (r.machine, r.agent, r.session_id))"
    )
    assert orphans == [(0,)]


def env_without_team() -> None:
    for var in ("AGENTDEX_TEAM_URL", "AGENTDEX_MACHINE", "PGPASSWORD"):
        os.environ.pop(var, None)
