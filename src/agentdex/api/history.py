"""History API: the stores on this machine, one conversation, and the audit.

These work straight from the stores (no index needed): ``sources`` probes
each file, ``show`` finds a session's files and parses them, ``audit``
parses everything and compares with each parser's independent raw count.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdex.api._order import conversation_order, launch_place, split_ref
from agentdex.catalogue import Coverage
from agentdex.discovery import Discovery, Source, discover
from agentdex.errors import AgentdexError, NotFoundError, UsageError
from agentdex.parsers import ParseCursor, run
from agentdex.readers import Diagnostics
from agentdex.records import Record, iso_utc
from agentdex.secrets import redact as redact_text


def discover_sources(home: str | None = None, *, agents: Iterable[str] | None = None) -> Discovery:
    """Discovery honouring the config file when one exists."""
    from agentdex import discovery

    configured = getattr(discovery, "discover_configured", None)
    if configured is not None:
        result: Discovery = configured(home, agents=agents)
        return result
    return discover(home, agents=agents)


@dataclass(slots=True)
class ProbeResult:
    status: str
    records: int = 0
    diagnostics: list[dict[str, str]] = field(default_factory=list)
    #: the project (else cwd) of the first record: where per-project stores may be
    project: str | None = None


def probe(source: Source) -> ProbeResult:
    """Does this file parse? Stops at the first record, so it stays cheap on big files."""
    if source.row.parser is None or source.row.coverage is Coverage.LISTED:
        return ProbeResult("not-parsed")
    diagnostics = Diagnostics()
    cursor = ParseCursor()
    try:
        found = next(iter(run(source, cursor, diagnostics)), None)
    except Exception as exc:  # a parser bug must not break `sources`
        return ProbeResult("error", 0, [{"path": str(source.path), "message": repr(exc)}])
    diags = [d.to_json() for d in diagnostics.items[:5]]
    if found is not None or cursor.titles:
        where = (found.project or found.cwd) if found is not None else None
        return ProbeResult("ok", 1 if found is not None else 0, diags, where)
    return ProbeResult("error" if diagnostics.count else "empty", 0, diags)


def source_json(
    source: Source,
    probe_result: ProbeResult | None = None,
    index_error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "agent": source.agent,
        "store": source.store,
        "path": str(source.path),
        "format": source.row.format,
        "holds": source.row.holds,
        "size": source.size,
        "modified": iso_utc(source.mtime),
        "coverage": source.row.coverage.value,
        "host": source.host,
        "times": source.row.times,
    }
    if probe_result is not None:
        data["parse_status"] = probe_result.status
        data["diagnostics"] = probe_result.diagnostics
    # the last index could not read it (locked, busy, I/O); the next index retries
    data["index_error"] = index_error
    return data


def sources(home: str | None = None, *, check: bool = True) -> dict[str, Any]:
    """Every discovered store file with its parse status.

    Per-project stores (Aider) are found in the projects other agents'
    records name; before the first ``index`` those come from the probes
    (the first record of each file), so ``sources`` lists them at once.
    """
    from agentdex.api.index import read_failures

    found = discover_sources(home)
    try:
        failures = read_failures(home=home)
    except AgentdexError:  # a broken index must not break the listing of stores
        failures = {}
    listed = _by_agent(found.sources)
    probes: list[ProbeResult | None] = [probe(s) if check else None for s in listed]
    if check:
        extra = _project_sources(found, {p.project for p in probes if p and p.project})
        listed += extra
        probes += [probe(s) for s in extra]
        order = _by_agent(listed)
        by_path = {id(s): p for s, p in zip(listed, probes, strict=True)}
        listed, probes = order, [by_path[id(s)] for s in order]
    from agentdex.catalogue import plugin_report

    plugins, refused = plugin_report()
    return {
        "home": str(found.home),
        "warnings": [*refused, *found.warnings],
        "plugins": plugins,
        "sources": [
            source_json(s, p, failures.get(str(s.path)))
            for s, p in zip(listed, probes, strict=True)
        ],
    }


def _project_sources(found: Discovery, projects: set[str]) -> list[Source]:
    """Per-project store files (Aider) in ``projects`` that discovery has not listed yet."""
    from agentdex.config import load_config
    from agentdex.discovery import configured_rows
    from agentdex.discovery.roots import expand_project_roots

    known = {str(root.path) for root in found.roots.get("projects", [])}
    fresh = [Path(p) for p in sorted(projects - known) if os.path.isabs(p)]
    rows = [r for r in configured_rows(load_config()) if r.root == "projects"]
    if not fresh or not rows:
        return []
    extra = discover(
        found.home,
        rows=rows,
        include_opt_in=True,
        extra_roots={"projects": expand_project_roots(fresh, children=False)},
    )
    seen = {str(s.path) for s in found.sources}
    return [s for s in extra.sources if str(s.path) not in seen]


def _by_agent(found: list[Source]) -> list[Source]:
    """Group sources by agent (catalogue order within an agent) for readable listings."""
    from agentdex.catalogue import agents

    rank = {agent: i for i, agent in enumerate(agents())}
    return sorted(found, key=lambda s: rank.get(s.agent, len(rank)))


def _parse_all(source: Source, diagnostics: Diagnostics, cursor: ParseCursor) -> Iterator[Record]:
    """Records read from a store for showing: secrets masked as the index masks them
    (``[privacy] redact``), so ``show``, exports and resumes never print one."""
    from agentdex.config import load_config

    redact = load_config().redact
    try:
        for record in run(source, cursor, diagnostics):
            if redact and record.text:
                record.text = redact_text(record.text)[0]
            yield record
    except Exception as exc:  # report parser bugs per file instead of aborting the run
        diagnostics.add(source.path, "", f"parser error: {exc!r}")


def _records_of(candidates: list[Source], session_id: str, agent: str | None) -> list[Record]:
    """Records of ``session_id`` (exact id first, else a unique prefix) in ``candidates``."""
    parsed = [r for s in candidates for r in _parse_all(s, Diagnostics(), ParseCursor())]
    parsed = [r for r in parsed if agent is None or r.agent == agent]
    exact = [r for r in parsed if r.session_id == session_id]
    return exact or [r for r in parsed if r.session_id.startswith(session_id)]


def _from_index(
    session_id: str, locator: str | None, home: str | None, agent: str | None
) -> dict[str, Any] | None:
    """The conversation from this home's search index, when it is there (no store-wide parse)."""
    from agentdex.api import search

    ref = f"{session_id}@{locator}" if locator else session_id
    try:
        data = search.resolve_ref(ref, home=home, agent=agent)
    except NotFoundError:
        return None
    return {
        "session_id": data["session_id"],
        "id": data["id"],
        "agent": data["agent"],
        "project": data["project"],
        "focus": data["position"],
        "records": data["records"],
    }


def show(ref: str, home: str | None = None, *, agent: str | None = None) -> dict[str, Any]:
    """One conversation, normalized and in order; ``ref`` is a session id or ``session@locator``.

    Records the agent's files no longer hold but agentdex's archive kept
    (``docs/archive.md``) are shown in place with ``source_gone: true``; a
    forgotten conversation (``agentdex forget``) is not found.
    """
    session_id, locator = split_ref(ref.strip())
    if not session_id:
        raise UsageError("show needs a session id (or a search result reference)")
    from agentdex.api import ids

    named_by = ids.resolve(session_id, agent=agent, home=home)  # short ids, prefixes: one
    if named_by is not None:
        agent, session_id = named_by
    found = discover_sources(home, agents=[agent] if agent else None)
    named = [s for s in found.sources if session_id in os.path.basename(s.path)]
    records = _records_of(named, session_id, agent)
    gone = _archived_only(records, home)
    if locator and not any(r.locator == locator for r in records + gone):
        records = []  # the reference is to another file of the conversation (a prompt log)
    if not records:
        indexed = _from_index(session_id, locator, home, agent)
        if indexed is not None and agent in (None, indexed["agent"]):
            _check_focus(indexed, locator)
            return indexed
    if not records:
        parsed = [s for s in found.sources if s.row.parser is not None]
        records = _records_of(parsed, session_id, agent)
        gone = _archived_only(records, home)
    if not records:
        raise NotFoundError(f"no conversation with id {session_id!r}")
    keys = sorted({(r.agent, r.session_id) for r in records})
    if len(keys) > 1:
        raise ids.ambiguous(session_id, keys, home=home)
    _refuse_forgotten(records[0].agent, records[0].session_id, home)
    every = records + gone
    gone_ids = {id(r) for r in gone}
    records = _prefer_transcripts(every)
    records = conversation_order(
        records,
        lambda r: ("archived:" if id(r) in gone_ids else "") + r.source_path,
        lambda r: r.timestamp,
    )
    focus = _focus(records, every, locator)
    first = records[0]
    data = {
        "session_id": first.session_id,
        "id": ids.conversation_id(first.agent, first.session_id, home),
        "agent": first.agent,
        "project": launch_place(records, _project, _cwd, _time)[0],
        "focus": focus,
        "records": [{**r.to_json(), "source_gone": id(r) in gone_ids} for r in records],
    }
    _check_focus(data, locator)
    return data


def _project(record: Record) -> str | None:
    return record.project


def _cwd(record: Record) -> str | None:
    return record.cwd


def _time(record: Record) -> float | None:
    return record.timestamp


def _check_focus(data: dict[str, Any], locator: str | None) -> None:
    """A ref whose locator names no record (``@line:9999``) is an error, not the whole chat."""
    if not locator or data["focus"] is not None:
        return
    records = data["records"]
    span = f"{records[0]['locator']} … {records[-1]['locator']}" if records else "none"
    raise NotFoundError(
        f"conversation {data['session_id']} has no record at {locator} "
        f"({len(records)} records: {span}); drop '@{locator}' to see all of it"
    )


def _archived_only(records: list[Record], home: str | None) -> list[Record]:
    """The conversation's records only the archive keeps, less any the files hold again."""
    if not records or len({(r.agent, r.session_id) for r in records}) != 1:
        return []
    from agentdex.api.archive import archived_records

    held = {(r.role, r.kind, r.timestamp, r.text) for r in records}
    return [
        r
        for r in archived_records(records[0].session_id, records[0].agent, home)
        if (r.role, r.kind, r.timestamp, r.text) not in held
    ]


def _refuse_forgotten(agent: str, session_id: str, home: str | None) -> None:
    from agentdex.api.archive import is_forgotten

    if is_forgotten(agent, session_id, home):
        raise NotFoundError(
            f"conversation {session_id!r} was forgotten (agentdex forget): it is no longer shown"
        )


def _focus(shown: list[Record], parsed: list[Record], locator: str | None) -> int | None:
    """Where ``locator`` is in the conversation shown; a prompt-log entry left out in
    favour of the transcript focuses the transcript's copy of the same prompt."""
    if not locator:
        return None
    found = next((i for i, r in enumerate(shown) if r.locator == locator), None)
    if found is not None:
        return found
    logged = next((r for r in parsed if r.locator == locator), None)
    if logged is None:
        return None
    same = (logged.role, logged.text.strip())
    return next((i for i, r in enumerate(shown) if (r.role, r.text.strip()) == same), None)


def _prefer_transcripts(records: list[Record]) -> list[Record]:
    """Drop prompt-log entries the session's transcript repeats (same role and text); an
    entry the transcript lacks (a rewound prompt) stays."""
    holds = {r.store: _holds(r.store) for r in records}
    said = {(r.role, r.text.strip()) for r in records if holds[r.store] != "prompt log"}
    return [
        r for r in records if holds[r.store] != "prompt log" or (r.role, r.text.strip()) not in said
    ]


def _holds(store_id: str) -> str:
    from agentdex.catalogue import store

    try:
        return store(store_id).holds
    except KeyError:
        return ""


def audit(home: str | None = None) -> dict[str, Any]:
    """Parse every source and compare with its parser's independent counts (:mod:`.audit`)."""
    from agentdex.api.audit import audit as run_audit

    return run_audit(home)
