"""Team API: push this machine's history to PostgreSQL, search every machine's (docs/team.md).

Settings come from, in order: the call's arguments (``--url``), the environment
(``AGENTDEX_TEAM_URL``, ``AGENTDEX_MACHINE``), the config's ``[team]`` table, and
for the machine name the host name. URLs are only ever shown masked.

Secrets are redacted (:mod:`agentdex.secrets`) before any text or title
leaves the machine; projects under ``[team] exclude`` never do.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from agentdex.api.search import SearchResult
    from agentdex.search.budget import Budget
    from agentdex.team.push import PushResult

MAX_MACHINE = 100


@dataclass(frozen=True, slots=True)
class TeamSettings:
    url: str
    masked: str
    machine: str
    exclude: tuple[Path, ...]


def settings(url: str | None = None, machine: str | None = None) -> TeamSettings:
    """The team URL (validated), this machine's name and excluded projects."""
    from agentdex.config import load_config
    from agentdex.team.connect import mask_url, validate_url

    config = load_config()
    chosen = validate_url(url or os.environ.get("AGENTDEX_TEAM_URL") or config.team_url)
    name = (
        machine
        or os.environ.get("AGENTDEX_MACHINE")
        or config.team_machine
        or socket.gethostname()
        or "unknown"
    )
    if len(name) > MAX_MACHINE or any(ord(c) < 32 for c in name) or not name.strip():
        raise UsageError(
            f"invalid machine name {name[:40]!r}: 1-{MAX_MACHINE} printable characters"
        )
    return TeamSettings(chosen, mask_url(chosen), name.strip(), config.team_exclude)


@contextmanager
def _connection(team: TeamSettings, kept: Any = None) -> Iterator[Any]:
    """A new connection to the team database, closed after; or ``kept``, left open."""
    if kept is not None:
        yield kept
        return
    from agentdex.team.connect import connect

    conn = connect(team.url, masked=team.masked)
    try:
        yield conn
    finally:
        conn.close()


def check(url: str | None = None) -> TeamSettings:
    """Settings whose database answers and has this agentdex's schema (``serve --team``)."""
    from agentdex.team import schema
    from agentdex.team.connect import talking

    team = settings(url, "-")
    with _connection(team) as conn, talking(team.masked, "checking"), conn.cursor() as cur:
        schema.check(cur, masked=team.masked)
    return team


# -- redaction ------------------------------------------------------------------------------------


def _redaction() -> tuple[Callable[[str], tuple[str, int]], str]:
    """The redaction applied before a push (:mod:`agentdex.secrets`), and its id.

    The id hashes the rule set (each pattern's name, regex and description: a rule
    found by code, ``high-entropy``, changes its description with its rule, and the
    bare-token thresholds are hashed too), so a new one re-sends (re-redacted) everything.
    """
    import hashlib

    from agentdex import entropy, secrets

    rules = [f"{p.name}\t{p.regex.pattern}\t{p.description}" for p in secrets.PATTERNS]
    rules.append(
        f"{entropy.BARE_MIN}\t{entropy.BARE_MAX}\t{entropy.ENTROPY_SLACK}\t{entropy.CHUNK_MAX}"
        f"\t{entropy.NOT_SECRET_STARTS}\t{entropy.NOT_SECRET_AFTER}"
    )
    ident = hashlib.blake2b("\n".join(rules).encode(), digest_size=8).hexdigest()

    def redact(text: str) -> tuple[str, int]:
        masked, findings = secrets.redact(text)
        return masked, len(findings)

    return redact, ident


# -- init -----------------------------------------------------------------------------------------


def init(url: str | None = None) -> dict[str, Any]:
    """Create or upgrade the team schema and roles (run by an owner of the database)."""
    from agentdex.team import schema
    from agentdex.team.connect import mask_url, talking, validate_url

    chosen = validate_url(url or os.environ.get("AGENTDEX_TEAM_URL") or _config_url())
    masked = mask_url(chosen)
    team = TeamSettings(chosen, masked, "-", ())
    with _connection(team) as conn, talking(masked, "creating the schema"):
        applied = schema.init(conn, masked=masked)
    return {
        "url": masked,
        "applied": applied,
        "schema": schema.names(),
        "roles": {"writer": schema.WRITER, "reader": schema.READER},
    }


def _config_url() -> str | None:
    from agentdex.config import load_config

    return load_config().team_url


# -- push and status ------------------------------------------------------------------------------


def _forgotten(root: Any, home: str | None) -> list[tuple[str | None, str]]:
    from agentdex.archive.store import open_reader
    from agentdex.index.store import index_root

    store = open_reader(index_root(root, home=home))
    if store is None:
        return []
    try:
        return [(agent, session) for _, agent, session in store.tombstones()]
    finally:
        store.close()


def push(
    url: str | None = None,
    *,
    machine: str | None = None,
    root: Any = None,
    home: str | None = None,
    refresh_first: bool = True,
    batch_records: int | None = None,
    progress: Callable[[PushResult], None] | None = None,
) -> PushResult:
    """Send what changed since the last push (see :mod:`agentdex.team.push`)."""
    from agentdex.api.index import maybe_refresh, reader
    from agentdex.team.push import BATCH_RECORDS, Pusher, run_push

    team = settings(url, machine)
    stats: dict[str, Any] = {}
    maybe_refresh(refresh_first, root, home, None, stats, None)
    redact, redaction_id = _redaction()
    forgotten = _forgotten(root, home)
    with _connection(team) as conn, reader(root, home) as engine:
        if engine is None:
            raise NotFoundError("nothing is indexed on this machine yet; run `agentdex index`")

        def text_of(rid: int, block_id: int) -> str:
            block = engine.block(block_id)
            return "" if block is None else block.original_text(rid - block.first_id)

        pusher = Pusher(
            conn,
            masked=team.masked,
            machine=team.machine,
            text_of=text_of,
            redact=redact,
            batch_records=batch_records or _batch_records() or BATCH_RECORDS,
            progress=progress,
        )
        survey, read, save = _survey(engine.db, team, redaction_id, root, home)
        try:
            result = run_push(pusher, survey, read, _resolve_forgotten(forgotten, conn, team))
        finally:
            save()
    if isinstance(stats.get("refresh"), str):
        result.warnings.append(f"local index: {stats['refresh']}")
    result.warnings.extend(stats.get("warnings", []))
    return result


def _survey(
    db: Any, team: TeamSettings, redaction_id: str, root: Any, home: str | None
) -> tuple[Any, Callable[[set[tuple[str, str]]], Iterator[Any]], Callable[[], None]]:
    """This index's conversations (:mod:`agentdex.team.survey`), a reader of the ones whose
    digest is unknown, and a ``save`` that remembers the digests for the next run."""
    from agentdex.index.store import index_root
    from agentdex.team import local, survey

    header = {
        "format": survey.MEMO_FORMAT,
        "generation": survey.generation_of(db),
        "redaction": redaction_id,
        "exclude": sorted(str(p) for p in team.exclude),
    }
    memo = survey.Memo(index_root(root, home=home) / "team-memo.json", header)
    found, files = survey.survey(db, exclude=team.exclude, memo=memo)

    def read(keys: set[tuple[str, str]]) -> Iterator[Any]:
        for conv in local.conversations(
            db, exclude=team.exclude, redaction_id=redaction_id, only=keys
        ):
            found.known[conv.key] = conv.digest
            yield conv

    return found, read, lambda: memo.save(found, files)


def _batch_records() -> int | None:
    """``AGENTDEX_TEAM_BATCH_RECORDS``: records per push transaction (tuning; crash tests)."""
    value = os.environ.get("AGENTDEX_TEAM_BATCH_RECORDS", "")
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise UsageError(f"AGENTDEX_TEAM_BATCH_RECORDS must be a positive integer (got {value!r})")
    return int(value)


def _resolve_forgotten(
    forgotten: list[tuple[str | None, str]], conn: Any, team: TeamSettings
) -> list[tuple[str, str]]:
    """Tombstones without an agent (``forget --session``) name every agent's conversation."""
    pairs = [(a, s) for a, s in forgotten if a is not None]
    loose = sorted({s for a, s in forgotten if a is None})
    if loose:
        from agentdex.team.connect import talking

        with talking(team.masked, "reading what was pushed"), conn.cursor() as cur:
            cur.execute(
                "SELECT agent, session_id FROM agentdex.conversations"
                " WHERE machine = %s AND session_id = ANY(%s)",
                (team.machine, loose),
            )
            pairs.extend(cur.fetchall())
    return pairs


def status(
    url: str | None = None, *, machine: str | None = None, root: Any = None, home: str | None = None
) -> dict[str, Any]:
    """What was pushed when, and what a push would send now (no refresh, nothing written)."""
    from agentdex.api.index import reader
    from agentdex.team.push import pending
    from agentdex.team.survey import Survey

    team = settings(url, machine)
    _, redaction_id = _redaction()
    with _connection(team) as conn, reader(root, home) as engine:
        if engine is None:
            out = pending(conn, team.masked, team.machine, Survey(), lambda keys: ())
        else:
            survey, read, save = _survey(engine.db, team, redaction_id, root, home)
            try:
                out = pending(conn, team.masked, team.machine, survey, read)
            finally:
                save()
    out["exclude"] = [str(p) for p in team.exclude]
    return out


# -- search ---------------------------------------------------------------------------------------


def search(
    query: str,
    *,
    url: str | None = None,
    regex: bool = False,
    word: bool = False,
    case: str = "smart",
    limit: int | None = 20,
    sort: str = "relevance",
    dedup: bool = True,
    now: float | None = None,
    exact_total: bool = False,
    budget: Budget | None = None,
    connection: Callable[[], Any] | None = None,
    helper: Callable[[], Any] | None = None,
) -> SearchResult:
    """:func:`agentdex.api.search.search` over the team database; each hit names its machine.

    ``connection``: gives an open connection to ``url`` to search through, left open (the
    resident team searcher keeps one, :mod:`agentdex.api.team_resident_server`); called
    after the query is checked, as a connection is otherwise opened (and closed after).
    ``helper``: gives a second open connection, on which a first page's band probes are
    read ahead (:class:`agentdex.team.ahead.ReadAhead`); asked only when that may help.
    """
    from agentdex.api.query_check import check_query
    from agentdex.api.search import SearchResult, _validate
    from agentdex.search.budget import Budget, default_seconds, enforced

    _validate(limit, sort, case)
    check_query(query, regex=regex, word=word, now=now)
    team = settings(url, "-")
    budget = budget if budget is not None else Budget(default_seconds())
    result = SearchResult(query=query)
    with _connection(team, None if connection is None else connection()) as conn:
        from agentdex.team.connect import talking

        with talking(team.masked, "searching"), conn.transaction():
            with conn.cursor() as cur:
                from agentdex.team import schema

                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                schema.check(cur, masked=team.masked)
            budget.start()
            with enforced(budget):
                _team_answer(
                    conn,
                    helper,
                    result,
                    budget,
                    query=query,
                    regex=regex,
                    word=word,
                    case=case,
                    limit=limit,
                    sort=sort,
                    dedup=dedup,
                    now=now,
                    exact_total=exact_total,
                )
    result.stats["team"] = team.masked
    return result


def _team_answer(
    conn: Any,
    helper: Callable[[], Any] | None,
    result: SearchResult,
    budget: Budget,
    *,
    query: str,
    regex: bool,
    word: bool,
    case: str,
    limit: int | None,
    sort: str,
    dedup: bool,
    now: float | None,
    exact_total: bool,
) -> None:
    from agentdex.api.ids import conversation_id
    from agentdex.api.search import finish_stats, ref_of
    from agentdex.api.semantic import why_terms
    from agentdex.records import iso_utc
    from agentdex.search.query import parse_query, positive_terms
    from agentdex.search.ranking import REFINE, occurrence_score, whole_words
    from agentdex.search.snippets import highlight_patterns, make_snippet
    from agentdex.team.search import (
        GONE,
        LOCATOR,
        MACHINE,
        SOURCE,
        STORE,
        TEXT,
        TeamEngine,
        TeamRun,
        planner,
    )

    started = time.perf_counter()
    node = parse_query(query, now=now, regex=regex)
    if node is None:
        raise UsageError('empty query: give words, "a phrase" or field:value filters')
    engine = TeamEngine(conn, budget, helper)
    sensitive = engine.prepare(node, regex=regex, word=word, case=case)
    sql_planner = planner(sensitive=sensitive, word=word, regex=regex)
    run = TeamRun(
        engine,
        node,
        sql_planner.plan(node),
        sql_planner.plan(node, terms=False),
        now=time.time() if now is None else now,
        here=None,
        here_query=None,
        only_here=False,
        dedup=dedup,
        budget=budget,
    )
    want = None if limit is None else (max(REFINE, limit) if sort == "relevance" else limit)
    outcome = run.run(want=want, sort=sort, exact_total=exact_total)
    stopped = outcome.stopped or (budget.reason if engine.interrupted else None)
    head = outcome.rows if want is None else outcome.rows[:want]
    needles = [t.text for t in positive_terms(node)]
    scored = []
    for score, row in head:
        full = engine.rows[row[0]]
        if sort == "relevance" and needles:
            score *= occurrence_score(full[TEXT], needles, sensitive)
        scored.append((round(score, 6) if sort == "relevance" else 0.0, full))
    if sort == "relevance":  # whole words first, as locally (within the candidates read)
        whole = {
            full[0]
            for _, full in scored
            if not word and not regex and whole_words(node, full[TEXT])
        }
        scored.sort(
            key=lambda item: (item[1][0] not in whole, -item[0], -(item[1][3] or 0.0), item[1][0])
        )
    shown = scored[:limit] if limit is not None else scored
    patterns = highlight_patterns(needles, regex=regex, sensitive=sensitive)
    for score, full in shown:
        snippet, spans = make_snippet(
            full[TEXT], patterns, budget=budget if regex else None, kind=full[1]
        )
        # a hashed id (Aider) reads this machine's home as ``~``: the same id as the pushing
        # machine's wherever the two homes have the same layout
        ident = conversation_id(full[5], full[6])
        result.results.append(
            {
                "machine": full[MACHINE],
                "agent": full[5],
                "store": full[STORE],
                "session_id": full[6],
                "role": full[2],
                "kind": full[1],
                "timestamp": iso_utc(full[3]),
                "text": full[TEXT],
                "snippet": snippet,
                "cwd": full[8],
                "project": full[9],
                "branch": full[13],
                "worktree": full[10],
                "model": full[14],
                "host": full[15],
                "source_path": full[SOURCE],
                "locator": full[LOCATOR],
                "score": score,
                "ref": ref_of(full[6], full[LOCATOR]),
                "id": ident,
                "short_ref": ref_of(ident, full[LOCATOR]),
                "source_gone": full[GONE],
                "why": {
                    "match": "exact",
                    "terms": why_terms(full[TEXT], needles, sensitive=sensitive, regex=regex),
                    "similarity": None,
                },
            }
        )
        result.highlights.append(spans)
    finish_stats(
        result,
        outcome,
        stopped,
        len(shown),
        sensitive,
        budget,
        started,
        {"records_read": engine.read},
    )
