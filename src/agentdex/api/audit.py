"""``audit``: every source parsed and checked against its parser's independent counts.

Plus *format drift*: the record types, parts and fields the parsers met and
did not recognise (``Diagnostics.unrecognised``), one line per agent, agent
version, kind and name, so a new agent release shows up as a line instead
of as silently missing history.

Two checks per file. *Units* (``count_raw``): the lines, rows or requests
that should give records did, so a silent format change is loud. *Roles*
(``count_roles``): per conversation, the prompts a person typed and the
replies the agent gave, so a parser that reads harness text as prompts or
splits one reply into several is a mismatch naming the conversation. A
branch the agent no longer shows (Cursor bubbles outside
``fullConversationHeadersOnly``) is reported as ``abandoned``, not as a
mismatch: its text is indexed, nothing is lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from agentdex.api.history import _by_agent, _parse_all, discover_sources, source_json
from agentdex.catalogue import Coverage
from agentdex.discovery import Source
from agentdex.parsers import ParseCursor, get_parser
from agentdex.parsers.base import RoleCounts
from agentdex.readers import Diagnostics
from agentdex.records import Record, conversation_part

#: Conversations listed per source (the problem ones first); totals count them all.
MAX_CONVERSATIONS = 50

T = TypeVar("T")


def audit(home: str | None = None) -> dict[str, Any]:
    """Parse every source and compare with its parser's independent raw counts."""
    found = discover_sources(home)
    rows: list[dict[str, Any]] = []
    totals = {
        "sources": 0,
        "records": 0,
        "raw": 0,
        "units": 0,
        "problems": 0,
        "prompts": 0,
        "replies": 0,
        "raw_prompts": 0,
        "raw_replies": 0,
        "role_mismatches": 0,
        "abandoned": 0,
        "drift": 0,
        "usage_calls": 0,
        "usage_skipped": 0,
    }
    drift: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for source in _by_agent(found.sources):
        entry = source_json(source)
        if source.row.parser is None or source.row.coverage is Coverage.LISTED:
            entry.update(status="not-parsed", records=0, units=0, raw=None, diagnostics=[])
            entry["usage"] = {"calls": 0, "skipped": 0}
            rows.append(entry)
            continue
        entry.update(audit_source(source))
        totals["sources"] += 1
        totals["records"] += entry["records"]
        totals["units"] += entry["units"]
        totals["raw"] += entry["raw"] or 0
        totals["problems"] += entry["status"] not in {"ok", "empty"}
        roles = entry["roles"]
        totals["prompts"] += roles["prompts"]
        totals["replies"] += roles["replies"]
        totals["raw_prompts"] += roles["raw_prompts"] or 0
        totals["raw_replies"] += roles["raw_replies"] or 0
        totals["role_mismatches"] += roles["mismatched"]
        totals["abandoned"] += roles["abandoned"]
        _add_drift(drift, source.agent, entry["drift"])
        totals["usage_calls"] += entry["usage"]["calls"]
        totals["usage_skipped"] += entry["usage"]["skipped"]
        rows.append(entry)
    totals["drift"] = len(drift)
    return {
        "home": str(found.home),
        "warnings": found.warnings,
        "totals": totals,
        "drift": [drift[key] for key in sorted(drift)],
        "sources": rows,
    }


def _add_drift(
    into: dict[tuple[str, str, str, str], dict[str, Any]], agent: str, found: list[dict[str, Any]]
) -> None:
    """Fold one file's unrecognised items into one line per agent, version, kind and name."""
    for item in found:
        key = (agent, item["version"], item["what"], item["name"])
        line = into.get(key)
        if line is None:
            into[key] = {"agent": agent, **item, "files": 1}
        else:
            line["count"] += item["count"]
            line["files"] += 1


def audit_source(source: Source) -> dict[str, Any]:
    """One file's audit fields: records, units against raw, roles per conversation."""
    assert source.row.parser is not None
    spec = get_parser(source.row.parser)
    diagnostics = Diagnostics()
    cursor = ParseCursor()
    parsed: RoleCounts = {}
    count = 0
    for record in _parse_all(source, diagnostics, cursor):
        count += 1
        _count_record(parsed, record)
    raw = _independent(spec.count_raw, source, diagnostics, "raw count")
    raw_roles = _independent(spec.count_roles, source, diagnostics, "role count")
    roles = compare_roles(parsed, raw_roles)
    status = _status(count, cursor.units, raw, diagnostics.count, roles["mismatched"])
    return {
        "status": status,
        "records": count,
        "units": cursor.units,
        "raw": raw,
        "roles": roles,
        "usage": {"calls": len(cursor.usage), "skipped": cursor.usage_skipped},
        "diagnostics": [d.to_json() for d in diagnostics.items[:20]],
        "diagnostic_count": diagnostics.count,
        "drift": [d.to_json() for d in diagnostics.drift.values()],
    }


def _independent(
    counter: Callable[[Path], T] | None, source: Source, diagnostics: Diagnostics, name: str
) -> T | None:
    """An independent counter's answer, or None (none registered, or it failed: a diagnostic)."""
    if counter is None:
        return None
    try:
        return counter(source.path)
    except Exception as exc:  # an independent counter is best effort by design
        diagnostics.add(source.path, "", f"{name} failed: {exc!r}")
        return None


def _count_record(counts: RoleCounts, record: Record) -> None:
    """Tally one parsed record (every conversation is listed, even one with neither)."""
    entry = counts.setdefault(record.session_id, {"prompts": 0, "replies": 0})
    part = conversation_part(record.role, record.kind)
    if part == "prompt":
        entry["prompts"] += 1
    elif part == "reply":
        entry["replies"] += 1


def compare_roles(parsed: RoleCounts, raw: RoleCounts | None) -> dict[str, Any]:
    """Parsed prompts/replies per conversation against the independent count.

    Returns totals, how many conversations disagree or are abandoned
    branches, and up to :data:`MAX_CONVERSATIONS` of those, by name.
    """
    prompts = sum(c["prompts"] for c in parsed.values())
    replies = sum(c["replies"] for c in parsed.values())
    result: dict[str, Any] = {
        "prompts": prompts,
        "replies": replies,
        "raw_prompts": None,
        "raw_replies": None,
        "conversations": len(parsed),
        "mismatched": 0,
        "abandoned": 0,
        "problems": [],
    }
    if raw is None:
        return result
    result["raw_prompts"] = sum(c.get("prompts", 0) for c in raw.values())
    result["raw_replies"] = sum(c.get("replies", 0) for c in raw.values())
    listed: list[dict[str, Any]] = []
    for session in _sessions(parsed, raw):
        mine = parsed.get(session, {})
        theirs = raw.get(session, {})
        pair = {
            "session_id": session,
            "prompts": mine.get("prompts", 0),
            "replies": mine.get("replies", 0),
            "raw_prompts": theirs.get("prompts", 0),
            "raw_replies": theirs.get("replies", 0),
        }
        agrees = (pair["prompts"], pair["replies"]) == (pair["raw_prompts"], pair["raw_replies"])
        if not agrees:
            result["mismatched"] += 1
            listed.append({**pair, "status": "mismatch"})
        elif theirs.get("abandoned"):
            result["abandoned"] += 1
            listed.append({**pair, "status": "abandoned"})
    listed.sort(key=lambda c: c["status"] != "mismatch")
    result["problems"] = listed[:MAX_CONVERSATIONS]
    return result


def _sessions(parsed: RoleCounts, raw: RoleCounts) -> Iterable[str]:
    """Every conversation either side saw, parsed ones first."""
    seen = dict.fromkeys(parsed)
    seen.update(dict.fromkeys(raw))
    return seen


def _status(records: int, units: int, raw: int | None, diagnostics: int, mismatched: int) -> str:
    """ok / empty / mismatch / silent (raw content but nothing parsed) / diagnostics."""
    if raw is not None and raw > 0 and units == 0:
        return "silent"
    if (raw is not None and units != raw) or mismatched:
        return "mismatch"
    if records == 0 and units == 0:
        return "empty"
    return "ok" if diagnostics == 0 else "diagnostics"
