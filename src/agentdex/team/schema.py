"""The team database's schema: named migrations, applied in order, never edited once shipped.

Everything lives in the ``agentdex`` schema. ``agentdex.migrations`` names every
migration applied; a database holding a migration this agentdex does not know was
made by a newer agentdex and is refused (:func:`check`), never written to.

Roles (created by :func:`init`, cluster-wide, ``NOLOGIN`` groups): ``agentdex_writer``
pushes, ``agentdex_reader`` searches. Each machine logs in as its own role, a member
of ``agentdex_writer``. Row-level security keeps a machine to its own rows: a
machine name is claimed by the first role that pushes it (``machines.owner``), and a
writer may insert, change or delete only rows of machines it owns. Everyone in
either group reads everything (the team's history is shared by design).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentdex.errors import NotFoundError, UnsupportedError

SCHEMA = "agentdex"
WRITER = "agentdex_writer"
READER = "agentdex_reader"

Migration = Callable[[Any], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_initial(cur: Any) -> None:
    """Machines, conversations, records (with pg_trgm over the text), tombstones, pushes."""
    cur.execute(
        """
        CREATE TABLE agentdex.machines (
            machine text PRIMARY KEY,
            owner name NOT NULL DEFAULT current_user,
            first_push timestamptz NOT NULL DEFAULT now(),
            last_push timestamptz
        );
        -- One row per pushed conversation: its digest says whether it changed.
        CREATE TABLE agentdex.conversations (
            machine text NOT NULL REFERENCES agentdex.machines ON DELETE CASCADE,
            agent text NOT NULL,
            session_id text NOT NULL,
            digest text NOT NULL,
            title text,
            project text,
            cwd text,
            records integer NOT NULL,
            prompts integer NOT NULL,
            replies integer NOT NULL,
            tool_events integer NOT NULL,
            first_ts double precision,
            last_ts double precision,
            source_gone boolean NOT NULL DEFAULT false,
            pushed_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (machine, agent, session_id)
        );
        -- The text column collates "C": LIKE is exact, ILIKE folds ASCII only, on every
        -- server whatever its locale (docs/team.md, "Exact search").
        CREATE TABLE agentdex.records (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            machine text NOT NULL,
            agent text NOT NULL,
            store text NOT NULL,
            session_id text NOT NULL,
            rkey bytea NOT NULL,
            rhash bigint NOT NULL,
            position integer NOT NULL,
            role text NOT NULL,
            kind text NOT NULL,
            ts double precision,
            model text,
            cwd text,
            project text,
            branch text,
            worktree text,
            host text,
            source_path text NOT NULL,
            locator text NOT NULL,
            source_gone boolean NOT NULL,
            tlen integer NOT NULL,
            thash bigint NOT NULL,
            level smallint NOT NULL,
            text text COLLATE "C" NOT NULL,
            FOREIGN KEY (machine, agent, session_id)
                REFERENCES agentdex.conversations ON DELETE CASCADE
        );
        CREATE INDEX records_conversation ON agentdex.records (machine, agent, session_id);
        CREATE INDEX records_level_ts ON agentdex.records (level, ts DESC NULLS LAST, id DESC);
        CREATE INDEX records_ts ON agentdex.records (ts DESC NULLS LAST, id DESC);
        CREATE INDEX records_text_trgm ON agentdex.records USING gin (text gin_trgm_ops);
        CREATE TABLE agentdex.tombstones (
            machine text NOT NULL REFERENCES agentdex.machines ON DELETE CASCADE,
            agent text NOT NULL,
            session_id text NOT NULL,
            forgotten_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (machine, agent, session_id)
        );
        CREATE TABLE agentdex.pushes (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            machine text NOT NULL REFERENCES agentdex.machines ON DELETE CASCADE,
            started_at timestamptz NOT NULL DEFAULT now(),
            finished_at timestamptz,
            status text NOT NULL DEFAULT 'running',
            conversations integer NOT NULL DEFAULT 0,
            records_added integer NOT NULL DEFAULT 0,
            records_removed integer NOT NULL DEFAULT 0,
            bytes bigint NOT NULL DEFAULT 0
        );
        CREATE INDEX pushes_machine ON agentdex.pushes (machine, id DESC);
        """
    )


@migration
def m002_roles_and_row_security(cur: Any) -> None:
    """Writer and reader groups; a writer changes only rows of machines it owns."""
    for role in (WRITER, READER):
        cur.execute(
            f"""
            DO $$ BEGIN
                CREATE ROLE {role} NOLOGIN;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END $$;
            """
        )
    tables = ("machines", "conversations", "records", "tombstones", "pushes")
    cur.execute(f"GRANT USAGE ON SCHEMA agentdex TO {WRITER}, {READER}")
    for table in tables:
        cur.execute(f"GRANT SELECT ON agentdex.{table} TO {WRITER}, {READER}")
        cur.execute(f"GRANT INSERT, UPDATE, DELETE ON agentdex.{table} TO {WRITER}")
        cur.execute(f"ALTER TABLE agentdex.{table} ENABLE ROW LEVEL SECURITY")
        cur.execute(f"CREATE POLICY everyone_reads ON agentdex.{table} FOR SELECT USING (true)")
    cur.execute(f"GRANT SELECT ON agentdex.migrations TO {WRITER}, {READER}")
    owns = "machine IN (SELECT m.machine FROM agentdex.machines m WHERE m.owner = current_user)"
    cur.execute(
        "CREATE POLICY own_machine ON agentdex.machines FOR ALL"
        " USING (owner = current_user) WITH CHECK (owner = current_user)"
    )
    for table in tables[1:]:
        cur.execute(
            f"CREATE POLICY own_rows ON agentdex.{table} FOR ALL USING ({owns}) WITH CHECK ({owns})"
        )


@migration
def m003_search_view(cur: Any) -> None:
    """``agentdex.records_read``: the records as searches read them, with planner statistics.

    Under row-level security PostgreSQL does not show the planner the column
    statistics to a non-leakproof operator such as ``ILIKE`` (``pg_statistic`` could
    leak rows a policy hides), so a reader's trigram condition was estimated at a
    default ~2,000 rows whatever it matched, and a filter on agent or time was
    applied row by row after the trigram bitmap instead of narrowing it (a 1 GB
    bench query 2.1 s instead of 0.15 s). Everyone in either group may read every
    row anyway (``everyone_reads``), so searches read through this view, owned by
    the schema's owner (a view is read with its owner's rights, to whom the
    policies do not apply). Writes still go to ``agentdex.records`` under
    ``own_rows``.
    """
    cur.execute("CREATE VIEW agentdex.records_read AS SELECT * FROM agentdex.records")
    cur.execute(f"GRANT SELECT ON agentdex.records_read TO {WRITER}, {READER}")


#: ranking levels below this have a trigram index of their own (:func:`m004_top_levels`)
TOP_LEVELS = 12


@migration
def m004_top_levels(cur: Any) -> None:
    """``records_text_trgm_top``: a trigram index of the records of levels 0-11 alone.

    A first page reads the best ranking levels (0-11 for every query class of the
    1 GB bench) of a query with many candidates. Through the whole trigram index
    that meant ANDing the trigram bitmap of every candidate (23,110 for the bench's
    regex) with a ``(level, ts)`` bitmap of a quarter of the table (331,430 rows):
    ~40 + ~65 ms for its two bands, and far more when a low pg_trgm estimate planned
    a recheck of every candidate instead (322-449 ms). This index holds only those
    levels' rows (26% of the rows at 1 GB, 96 MB beside the whole index's 549 MB),
    so the band of levels 0-11 is one small bitmap, whatever the estimate: 3.3 ms.
    Building it takes about a minute per GB of history; pushes wait meanwhile.
    """
    cur.execute(
        "CREATE INDEX IF NOT EXISTS records_text_trgm_top ON agentdex.records"
        f" USING gin (text gin_trgm_ops) WHERE level < {TOP_LEVELS}"
    )


def names() -> list[str]:
    return [name for name, _ in MIGRATIONS]


def applied(cur: Any) -> list[str] | None:
    """Migrations applied to this database, or None when it has no agentdex schema."""
    cur.execute("SELECT to_regclass('agentdex.migrations') IS NOT NULL")
    if not cur.fetchone()[0]:
        return None
    cur.execute("SELECT name FROM agentdex.migrations ORDER BY name")
    return [row[0] for row in cur.fetchall()]


def check(cur: Any, *, masked: str) -> None:
    """Refuse a database without the schema, with an older one, or from a newer agentdex."""
    done = applied(cur)
    if done is None:
        raise NotFoundError(
            f"{masked} has no agentdex team schema; an administrator runs"
            " `agentdex team init --url ADMIN_URL` once (docs/team.md)"
        )
    unknown = sorted(set(done) - set(names()))
    if unknown:
        raise UnsupportedError(
            f"the team database's schema is newer than this agentdex (it has {unknown[-1]});"
            " upgrade agentdex on this machine"
        )
    missing = [name for name in names() if name not in done]
    if missing:
        raise UnsupportedError(
            f"the team database's schema is older than this agentdex (missing {missing[0]});"
            " an administrator runs `agentdex team init --url ADMIN_URL` to upgrade it"
        )


def init(conn: Any, *, masked: str) -> list[str]:
    """Create or upgrade the schema (an owner of the database runs it); returns what it applied.

    One transaction, under an advisory lock, so two runs at once apply each
    migration once and a failed run leaves nothing half-made.
    """
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext('agentdex team init'))")
        cur.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        cur.execute("CREATE SCHEMA IF NOT EXISTS agentdex")
        cur.execute(
            "CREATE TABLE IF NOT EXISTS agentdex.migrations"
            " (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = applied(cur) or []
        unknown = sorted(set(done) - set(names()))
        if unknown:
            check(cur, masked=masked)
        ran = []
        for name, fn in MIGRATIONS:
            if name in done:
                continue
            fn(cur)
            cur.execute("INSERT INTO agentdex.migrations (name) VALUES (%s)", (name,))
            ran.append(name)
    return ran
