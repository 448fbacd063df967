"""Codex legacy single-document rollouts (``codex.rollout_json.v1``) and ``history.jsonl``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import number_parts
from agentdex.parsers._jsonl import LineStream
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.codex._items import items_of, session_from_name, unknown_item
from agentdex.readers import Diagnostics, read_json
from agentdex.records import Record, parse_timestamp


def legacy_doc(path: Path, diag: Diagnostics) -> tuple[dict[str, Any], list[Any]]:
    """(session header, items) of a legacy rollout; empty ones when it is not one."""
    try:
        doc = read_json(path, diag)
    except OSError as exc:  # a secret name, refused by the guard
        diag.add(path, "", f"unreadable: {exc}")
        return {}, []
    if not isinstance(doc, dict):
        if doc is not None:
            diag.add(path, "", "not a legacy rollout object")
        return {}, []
    session, items = doc.get("session"), doc.get("items")
    return (
        session if isinstance(session, dict) else {},
        items if isinstance(items, list) else [],
    )


def legacy_session_id(path: Path, session: dict[str, Any]) -> str:
    session_id = session.get("id") if isinstance(session.get("id"), str) else None
    return session_id or session_from_name(path)


def parse_legacy(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Records of a legacy single-document rollout (whole file each time)."""
    session, items = legacy_doc(ref.path, diag)
    session_id = legacy_session_id(ref.path, session)
    model = session.get("model") if isinstance(session.get("model"), str) else None
    started = parse_timestamp(session.get("timestamp"))
    cursor.units = 0
    for index, payload in enumerate(items):
        if not isinstance(payload, dict):
            continue
        unknown = unknown_item(payload)
        if unknown is not None:  # format drift
            diag.unrecognised(*unknown, path=ref.path, locator=f"json:/items/{index}")
        given = items_of(payload, False)
        if not given:
            continue
        cursor.units += 1
        records = [
            Record(
                agent=ref.agent,
                store=ref.store,
                source_path=os.fspath(ref.path),
                locator=f"json:/items/{index}",
                session_id=session_id,
                role=role,
                kind=kind,
                text=text,
                timestamp=parse_timestamp(payload.get("timestamp")) or started,
                model=model,
                host=ref.host,
                extra={k: v for k, v in extra.items() if v is not None},
            )
            for role, kind, text, extra in given
        ]
        yield from number_parts(records)


def parse_history(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """One ``user``/``prompt`` record per line of ``history.jsonl``, located
    ``history.jsonl:line:N`` (the session's rollout has lines of its own)."""
    stream = LineStream(ref, cursor, diag, {})
    source = os.fspath(ref.path)
    for line, obj in stream.lines():
        text = obj.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        session = obj.get("session_id")
        stream.produced()
        yield Record(
            agent=ref.agent,
            store=ref.store,
            source_path=source,
            locator=f"{ref.path.name}:line:{line.lineno}",
            session_id=session if isinstance(session, str) and session else "unknown",
            role="user",
            kind="prompt",
            text=text,
            timestamp=parse_timestamp(obj.get("ts")),
            host=ref.host,
            offset=line.offset,
        )
