"""Search API: refresh the index, search it, list conversations, resolve result refs.

Every surface (CLI, HTTP, MCP) calls these functions; results are plain
dataclasses with ``to_json()``. Query-time imports stay light (no numpy, no
rich) so a fresh ``agentdex search`` process starts fast.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.errors import CorruptError, NotFoundError, UsageError
from agentdex.records import iso_utc

if TYPE_CHECKING:
    from agentdex.catalogue import StoreRow
    from agentdex.index.refresh import RefreshStats
    from agentdex.search.engine import Engine, Hit

SORTS = ("relevance", "time")
CASES = ("smart", "insensitive", "sensitive")
MAX_LIMIT = 10_000


# -- results ------------------------------------------------------------------------


@dataclass(slots=True)
class SearchResult:
    """One search run: ``status`` is ``ok``, ``no-index`` (nothing indexed yet)."""

    query: str
    status: str = "ok"
    results: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    #: highlight spans per result (index-aligned with ``results``), for human output
    highlights: list[list[tuple[int, int]]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "status": self.status,
            "stats": self.stats,
            "results": self.results,
        }


@dataclass(slots=True)
class ConversationsResult:
    query: str | None
    status: str = "ok"
    conversations: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "status": self.status,
            "stats": self.stats,
            "conversations": self.conversations,
        }


# -- index access --------------------------------------------------------------------


def refresh(
    root: str | os.PathLike[str] | None = None,
    *,
    home: str | None = None,
    full: bool = False,
    wait: bool | float = True,
    progress: Callable[[int, int, int, int], None] | None = None,
    warn: Callable[[str], None] | None = None,
    rows: Iterable[StoreRow] | None = None,
) -> RefreshStats:
    """Bring the index up to date (``full``: rebuild from scratch).

    Afterwards the set of project dirs seen is written to
    ``<data dir>/projects.json``, which discovery reads to find per-project
    stores (Aider). When that set grew, one more (cheap: unchanged files cost
    a stat) refresh picks up the stores it reveals.
    """
    from agentdex.index.refresh import refresh as _refresh

    stats = _refresh(root, home=home, full=full, wait=wait, progress=progress, warn=warn, rows=rows)
    changed = stats.records_added or stats.records_removed or stats.rebuilt
    if rows is None and changed and _write_known_projects(root):
        again = _refresh(root, home=home, wait=wait, warn=warn)
        stats.files_parsed += again.files_parsed
        stats.records_added += again.records_added
        stats.bytes_parsed += again.bytes_parsed
    return stats


def _write_known_projects(root: str | os.PathLike[str] | None) -> bool:
    """Write the indexed project dirs to ``projects.json``; True when new ones appeared."""
    import orjson

    from agentdex.paths import data_dir

    with _reader(root) as engine:
        if engine is None:
            return False
        rows = engine.db.execute(
            "SELECT DISTINCT project FROM records WHERE project IS NOT NULL"
        ).fetchall()
    projects = sorted({p for (p,) in rows if isinstance(p, str) and os.path.isabs(p)})
    target = data_dir() / "projects.json"
    try:
        before = set(orjson.loads(target.read_bytes()))
    except (OSError, orjson.JSONDecodeError, TypeError):
        before = set()
    if set(projects) == before:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    try:
        tmp.write_bytes(orjson.dumps(projects))
        os.replace(tmp, target)
    except OSError:
        with suppress(OSError):
            tmp.unlink()
        return False
    return bool(set(projects) - before)


@contextmanager
def _reader(root: str | os.PathLike[str] | None) -> Iterator[Engine | None]:
    """An engine over the current generation inside one read snapshot (None: no index)."""
    from agentdex.index.store import Location, index_root, open_reader_db
    from agentdex.search.engine import Engine

    location = Location(index_root(root))
    gen = location.current()
    if gen is None or not (gen / "index.db").exists():
        yield None
        return
    db = open_reader_db(gen)
    engine: Engine | None = None
    try:
        db.execute("BEGIN")
        try:
            engine = Engine(db, gen)
            yield engine
        except sqlite3.DatabaseError as exc:
            raise CorruptError(
                f"index is corrupt ({exc}); run `agentdex index --full` to rebuild it"
            ) from exc
    finally:
        if engine is not None:
            engine.close()
        with suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        db.close()


def _maybe_refresh(
    do_refresh: bool,
    root: Any,
    home: str | None,
    rows: Iterable[StoreRow] | None,
    stats: dict[str, Any],
    progress: Callable[[int, int, int, int], None] | None = None,
) -> None:
    if not do_refresh:
        return
    done = refresh(root, home=home, wait=False, rows=rows, progress=progress)
    if done.skipped_busy:
        stats["refresh"] = "skipped: another agentdex process is indexing"
    else:
        stats["refresh"] = {
            "seconds": done.seconds,
            "files_parsed": done.files_parsed + done.files_resumed,
            "files_removed": done.files_removed,
            "records_added": done.records_added,
        }
        if done.warnings:
            stats["warnings"] = done.warnings


# -- search --------------------------------------------------------------------------


def _here_predicate(here: str) -> Callable[[tuple[Any, ...]], bool]:
    """For light rows: is the record's cwd, project or worktree in this place?"""
    from agentdex.gitinfo import git_info

    base = os.path.normpath(os.path.abspath(os.path.expanduser(here)))
    info = git_info(base)
    roots = {p.rstrip("/") for p in (base, info.project, info.worktree) if p}

    def inside(path: str | None) -> bool:
        if not path:
            return False
        return any(path == r or path.startswith(r + "/") for r in roots)

    return lambda row: inside(row[8]) or inside(row[9]) or inside(row[10])


def ref_of(session_id: str, locator: str) -> str:
    return f"{session_id}@{locator}"


def hit_json(hit: Hit) -> dict[str, Any]:
    return {
        "agent": hit.agent,
        "store": hit.store,
        "session_id": hit.session_id,
        "role": hit.role,
        "kind": hit.kind,
        "timestamp": iso_utc(hit.timestamp),
        "text": hit.text,
        "snippet": hit.snippet,
        "cwd": hit.cwd,
        "project": hit.project,
        "branch": hit.branch,
        "worktree": hit.worktree,
        "model": hit.model,
        "host": hit.host,
        "source_path": hit.source_path,
        "locator": hit.locator,
        "score": hit.score,
        "ref": ref_of(hit.session_id, hit.locator),
    }


def _validate(limit: int | None, sort: str, case: str) -> None:
    if sort not in SORTS:
        raise UsageError(f"unknown sort {sort!r}; valid: {', '.join(SORTS)}")
    if case not in CASES:
        raise UsageError(f"unknown case mode {case!r}; valid: {', '.join(CASES)}")
    if limit is not None and not (0 < limit <= MAX_LIMIT):
        raise UsageError(f"limit must be between 1 and {MAX_LIMIT}")


def matching_rows(
    engine: Engine,
    query: str,
    *,
    regex: bool = False,
    word: bool = False,
    case: str = "smart",
    now: float | None = None,
    allow_empty: bool = False,
) -> tuple[list[tuple[Any, ...]], bool, list[str]]:
    """Light rows of every live record matching ``query``: (rows, case-sensitive?, needles)."""
    from agentdex.search.query import parse_query, positive_terms

    node = parse_query(query, now=now, regex=regex)
    if node is None:
        if not allow_empty:
            raise UsageError('empty query: give words, "a phrase" or field:value filters')
        return engine.all_light(), False, []
    sensitive = engine.prepare(node, regex=regex, word=word, case=case)
    ids = engine.evaluate(node)
    return engine.light(ids), sensitive, [t.text for t in positive_terms(node)]


def _check_query(query: str, *, regex: bool, word: bool, now: float | None) -> None:
    """Fail fast (UsageError) on a malformed query or regex, before any refresh."""
    from agentdex.search.matchers import TermMatcher
    from agentdex.search.query import parse_query, terms

    node = parse_query(query, now=now, regex=regex)
    if regex:
        for term in terms(node):
            TermMatcher(term.text, case_sensitive=False, word=word, regex=True)


def query_fields() -> dict[str, str]:
    """Every field a query can filter on, with how its value matches."""
    from agentdex.search.query import FIELDS

    return dict(FIELDS)


@dataclass(slots=True)
class QueryCheck:
    """How a query reads (``valid``), or exactly what is wrong with it."""

    query: str
    valid: bool
    error: str | None = None
    explanation: str | None = None
    terms: list[dict[str, Any]] = field(default_factory=list)
    fields: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "valid": self.valid,
            "error": self.error,
            "explanation": self.explanation,
            "terms": self.terms,
            "fields": self.fields,
            "valid_fields": list(query_fields()),
        }


def validate_query(query: str, *, regex: bool = False, word: bool = False) -> QueryCheck:
    """Parse ``query`` without searching: its reading, or the usage error it would raise."""
    from agentdex.search.query import And, Field, Not, Or, Term, parse_query, terms

    try:
        _check_query(query, regex=regex, word=word, now=None)
        node = parse_query(query, regex=regex)
    except UsageError as exc:
        return QueryCheck(query=query, valid=False, error=exc.message)
    if node is None:
        return QueryCheck(query=query, valid=False, error="empty query")

    def explain(n: Any) -> str:
        if isinstance(n, Term):
            return f'"{n.text}"' if n.phrase or " " in n.text else n.text
        if isinstance(n, Field):
            return f"{n.name}:{n.value}"
        if isinstance(n, Not):
            return f"NOT {explain(n.child)}"
        joiner = " AND " if isinstance(n, And) else " OR "
        assert isinstance(n, And | Or)
        return "(" + joiner.join(explain(c) for c in n.children) + ")"

    found_fields: list[dict[str, Any]] = []

    def collect(n: Any) -> None:
        if isinstance(n, Field):
            item: dict[str, Any] = {"field": n.name, "value": n.value}
            if n.time is not None:
                item["time"] = iso_utc(n.time)
            found_fields.append(item)
        elif isinstance(n, Not):
            collect(n.child)
        elif isinstance(n, And | Or):
            for child in n.children:
                collect(child)

    collect(node)
    return QueryCheck(
        query=query,
        valid=True,
        explanation=explain(node),
        terms=[{"text": t.text, "phrase": t.phrase, "regex": regex} for t in terms(node)],
        fields=found_fields,
    )


def search(
    query: str,
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    refresh_first: bool = True,
    regex: bool = False,
    word: bool = False,
    case: str = "smart",
    limit: int | None = 20,
    sort: str = "relevance",
    here: str | None = None,
    only_here: bool = False,
    dedup: bool = True,
    rows: Iterable[StoreRow] | None = None,
    now: float | None = None,
    progress: Callable[[int, int, int, int], None] | None = None,
) -> SearchResult:
    """Search every indexed record; exact substring (or regex) semantics, ranked."""
    from agentdex.search.ranking import REFINE, refine, score_rows, time_order
    from agentdex.search.snippets import highlight_patterns, make_snippet

    _validate(limit, sort, case)
    _check_query(query, regex=regex, word=word, now=now)
    result = SearchResult(query=query)
    _maybe_refresh(refresh_first, root, home, rows, result.stats, progress)
    started = time.perf_counter()
    with _reader(root) as engine:
        if engine is None:
            result.status = "no-index"
            result.stats["total"] = 0
            return result
        matched, sensitive, needles = matching_rows(
            engine, query, regex=regex, word=word, case=case, now=now
        )
        here_pred = _here_predicate(here or os.getcwd()) if (here or only_here) else None
        if only_here and here_pred is not None:
            matched = [r for r in matched if here_pred(r)]
        clock = time.time() if now is None else now
        if sort == "time":
            ordered = [(0.0, r) for r in time_order(matched)]
        else:
            ordered = score_rows(matched, clock, here_pred)
        if dedup:
            ordered = _dedup(ordered)
        total = len(ordered)
        if limit is None:
            head = ordered
        else:
            head = ordered[: max(REFINE, limit) if sort == "relevance" else limit]
        by_id = {hit.id: hit for hit in engine.hits(r[0] for _, r in head)}
        hits = []
        for score, row in head:
            hit = by_id[row[0]]
            hit.score = score
            hit.text = engine.original_text(hit)
            hits.append(hit)
        if sort == "relevance":
            hits = refine(hits, needles, sensitive)
        else:
            for hit in hits:
                hit.score = 0.0
        shown = hits[:limit] if limit is not None else hits
        patterns = highlight_patterns(needles, regex=regex, sensitive=sensitive)
        for hit in shown:
            hit.snippet, spans = make_snippet(hit.text, patterns)
            result.results.append(hit_json(hit))
            result.highlights.append(spans)
        result.stats.update(
            {
                "total": total,
                "returned": len(shown),
                "case_sensitive": sensitive,
                "blocks": engine.n_blocks,
                "blocks_scanned": engine.blocks_scanned,
                "seconds": round(time.perf_counter() - started, 4),
            }
        )
    return result


def _dedup(ordered: list[tuple[float, tuple[Any, ...]]]) -> list[tuple[float, tuple[Any, ...]]]:
    """Drop repeats of the same text by the same role in the same session (first wins)."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for item in ordered:
        row = item[1]
        key = (row[5], row[6], row[2], row[7])
        if key in seen:
            continue
        seen.add(key)
        out.append(item)
    return out


# -- conversations ---------------------------------------------------------------------


def _session_rows(engine: Engine, where: str, params: list[object]) -> list[tuple[Any, ...]]:
    return list(
        engine.db.execute(
            "SELECT agent, session_id, min(timestamp), max(timestamp), count(*),"
            " max(project), max(cwd) FROM records"
            f" WHERE {where} GROUP BY agent, session_id",
            params,
        )
    )


def _title(engine: Engine, agent: str, session_id: str) -> str | None:
    row = engine.db.execute(
        "SELECT title FROM titles WHERE agent = ? AND session_id = ?", (agent, session_id)
    ).fetchone()
    if row and row[0]:
        return str(row[0])
    first = engine.all_hits(
        "r.agent = ? AND r.session_id = ? AND r.kind = 'prompt' ORDER BY r.timestamp, r.id LIMIT 1",
        (agent, session_id),
    )
    if not first:
        return None
    text = " ".join(engine.original_text(first[0]).split())
    return text[:77] + "…" if len(text) > 80 else text


def _conversation_json(engine: Engine, row: tuple[Any, ...]) -> dict[str, Any]:
    agent, session_id, first, last, count, project, cwd = row
    return {
        "agent": agent,
        "session_id": session_id,
        "title": _title(engine, agent, session_id),
        "project": project,
        "cwd": cwd,
        "first_activity": iso_utc(first),
        "last_activity": iso_utc(last),
        "message_count": count,
    }


def conversations(
    query: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    refresh_first: bool = True,
    limit: int | None = 50,
    rows: Iterable[StoreRow] | None = None,
    now: float | None = None,
) -> ConversationsResult:
    """Conversations (newest activity first), optionally only those with a record matching."""
    if limit is not None and not (0 < limit <= MAX_LIMIT):
        raise UsageError(f"limit must be between 1 and {MAX_LIMIT}")
    if query:
        from agentdex.search.query import parse_query

        parse_query(query, now=now)
    result = ConversationsResult(query=query or None)
    _maybe_refresh(refresh_first, root, home, rows, result.stats)
    with _reader(root) as engine:
        if engine is None:
            result.status = "no-index"
            result.stats["total"] = 0
            return result
        if query:
            matched, _, _ = matching_rows(engine, query, now=now)
            keys = {(r[5], r[6]) for r in matched}
            sessions = {k[1] for k in keys}
            found: list[tuple[Any, ...]] = []
            ids = sorted(sessions)
            for i in range(0, len(ids), 900):
                chunk = ids[i : i + 900]
                marks = ",".join("?" * len(chunk))
                found.extend(_session_rows(engine, f"session_id IN ({marks})", list(chunk)))
            rows_found = [r for r in found if (r[0], r[1]) in keys]
        else:
            rows_found = _session_rows(engine, "1", [])
        rows_found.sort(key=lambda r: (r[3] is None, -(r[3] or 0.0), r[1]))
        result.stats["total"] = len(rows_found)
        shown = rows_found[:limit] if limit is not None else rows_found
        result.conversations = [_conversation_json(engine, r) for r in shown]
    return result


def conversations_for_workdir(
    workdir: str,
    since: float | None,
    until: float | None,
    home: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    refresh_first: bool = True,
) -> list[dict[str, Any]]:
    """Conversations with a record whose cwd is ``workdir`` or inside it, active in the window."""
    base = os.path.normpath(os.path.abspath(os.path.expanduser(workdir)))
    if refresh_first:
        refresh(root, home=home, wait=False)
    with _reader(root) as engine:
        if engine is None:
            return []
        prefix = base.rstrip("/") + "/"
        rows = _session_rows(
            engine, "cwd = ? OR substr(cwd, 1, ?) = ?", [base, len(prefix), prefix]
        )
        out = []
        for row in rows:
            first, last = row[2], row[3]
            if since is not None and (last is None or last < since):
                continue
            if until is not None and (first is None or first > until):
                continue
            out.append(_conversation_json(engine, row))
        out.sort(key=lambda c: c["last_activity"] or "", reverse=True)
        return out


# -- refs ------------------------------------------------------------------------------


def resolve_ref(ref: str, *, root: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """A conversation's records from the index, in order, and the position of ``ref``.

    ``ref`` is ``<session_id>@<locator>`` (as search results give) or a bare
    session id (or unique prefix). Returns ``{session_id, agent, title,
    project, position, records}``; ``position`` is None when the locator is
    not found (or not given).
    """
    session_id, sep, locator = ref.strip().partition("@")
    if not session_id:
        raise UsageError("a reference needs a session id: <session_id>@<locator>")
    with _reader(root) as engine:
        if engine is None:
            raise NotFoundError("nothing is indexed yet; run `agentdex index`")
        hits = engine.all_hits("r.session_id = ?", (session_id,))
        if not hits:
            hits = engine.all_hits("substr(r.session_id, 1, ?) = ?", (len(session_id), session_id))
        if not hits:
            raise NotFoundError(f"no indexed conversation with id {session_id!r}")
        keys = {(h.agent, h.session_id) for h in hits}
        if len(keys) > 1:
            names = ", ".join(f"{a}:{s}" for a, s in sorted(keys)[:5])
            raise UsageError(f"{session_id!r} matches {len(keys)} conversations: {names}")
        ordered = _conversation_order(hits)
        position = None
        if sep and locator:
            position = next((i for i, h in enumerate(ordered) if h.locator == locator), None)
        records = []
        for hit in ordered:
            hit.text = engine.original_text(hit)
            data = hit_json(hit)
            data.pop("snippet")
            data.pop("score")
            records.append(data)
        agent, sid = next(iter(keys))
        return {
            "session_id": sid,
            "agent": agent,
            "title": _title(engine, agent, sid),
            "project": next((h.project for h in ordered if h.project), None),
            "position": position,
            "records": records,
        }


def _conversation_order(hits: list[Hit]) -> list[Hit]:
    """Parse order within a file; files interleaved by time (missing times carried forward)."""
    hits.sort(key=lambda h: (h.source_path, h.id))
    keyed: list[tuple[float, int, Hit]] = []
    last_path, carried = None, 0.0
    for hit in hits:
        if hit.source_path != last_path:
            last_path, carried = hit.source_path, 0.0
        if hit.timestamp is not None:
            carried = hit.timestamp
        keyed.append((carried, hit.id, hit))
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [item[2] for item in keyed]


def index_status(root: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Counts and location of the current index (for ``agentdex index --json``)."""
    from agentdex.index.store import Location, index_root

    location = Location(index_root(root))
    gen = location.current()
    info: dict[str, Any] = {"path": str(location.root), "generation": gen.name if gen else None}
    if gen is None:
        return info
    with _reader(root) as engine:
        if engine is None:
            return info
        db = engine.db
        info["files"] = db.execute("SELECT count(*) FROM files").fetchone()[0]
        info["records"] = db.execute("SELECT count(*) FROM records").fetchone()[0]
        info["blocks"] = engine.n_blocks
    info["bytes"] = sum(p.stat().st_size for p in Path(gen).iterdir() if p.is_file())
    return info
