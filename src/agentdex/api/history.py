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

from agentdex.catalogue import Coverage
from agentdex.discovery import Discovery, Source, discover
from agentdex.errors import AgentdexError
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


def show(ref: str, home: str | None = None, *, agent: str | None = None) -> dict[str, Any]:
    """One conversation, normalized and in order; ``ref`` is a session id or ``session@locator``.

    Records the agent's files no longer hold but agentdex's archive kept
    (``docs/archive.md``) are shown in place with ``source_gone: true``; a
    forgotten conversation (``agentdex forget``) is not found. The conversation
    is gathered by :func:`agentdex.api.gather.gather` (which ``export`` streams).
    """
    from agentdex.api.gather import gather

    with gather(ref, home, agent=agent) as gathered:
        return gathered.show_json()


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
