"""Where secrets were found (``agentdex secrets``): agent, conversation, kind, when; never
the value, which the index does not hold (``[privacy] redact``, docs/security.md).

The index stores each masked secret as its label ``[REDACTED:<kind>]``, so
the labels are the record of what was found: this finds the records that
hold one (an exact, case-sensitive search for ``[REDACTED:``) and reads the
kinds off their text. Findings therefore follow the records: a ``forget``
removes them, the archive keeps them for records their agent deleted, a
rebuild finds them again. A transcript that quotes a label itself (this
very feature being discussed, say) is listed too.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from agentdex.api.index import maybe_refresh, reader
from agentdex.records import iso_utc

QUERY = '"[REDACTED:"'
LABEL = re.compile(r"\[REDACTED:([a-z0-9-]{1,40})\]")


@dataclass(slots=True)
class SecretsResult:
    status: str = "ok"
    #: one per masked secret: agent, session_id, ref, kind, timestamp, role, project
    findings: list[dict[str, Any]] = field(default_factory=list)
    #: one per conversation: counts by kind, first and last time, title
    conversations: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "redact": self.stats.get("redact"),
            "findings": self.findings,
            "conversations": self.conversations,
            "stats": self.stats,
        }


def found(
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    refresh_first: bool = True,
    agent: str | None = None,
) -> SecretsResult:
    """Every masked secret in the index, newest first, and the conversations holding them."""
    from agentdex.api.conversations import conversation_title
    from agentdex.api.search import matching_rows, ref_of
    from agentdex.config import load_config

    result = SecretsResult()
    result.stats["redact"] = load_config().redact
    maybe_refresh(refresh_first, root, home, None, result.stats)
    with reader(root, home) as engine:
        if engine is None:
            result.status = "no-index"
            return result
        rows, _, _ = matching_rows(engine, QUERY, case="sensitive")
        hits = engine.hits(int(row[0]) for row in rows)
        hits.sort(key=lambda h: (h.timestamp is None, -(h.timestamp or 0.0), h.id))
        per_conversation: dict[tuple[str, str], Counter[str]] = {}
        times: dict[tuple[str, str], list[float]] = {}
        for hit in hits:
            if agent is not None and hit.agent != agent:
                continue
            kinds = LABEL.findall(engine.original_text(hit))
            key = (hit.agent, hit.session_id)
            for kind in kinds:
                result.findings.append(
                    {
                        "agent": hit.agent,
                        "session_id": hit.session_id,
                        "ref": ref_of(hit.session_id, hit.locator),
                        "kind": kind,
                        "timestamp": iso_utc(hit.timestamp),
                        "role": hit.role,
                        "record_kind": hit.kind,
                        "project": hit.project,
                    }
                )
                per_conversation.setdefault(key, Counter())[kind] += 1
            if kinds and hit.timestamp is not None:
                times.setdefault(key, []).append(hit.timestamp)
        for (agent_id, session_id), counts in per_conversation.items():
            stamps = times.get((agent_id, session_id), [])
            result.conversations.append(
                {
                    "agent": agent_id,
                    "session_id": session_id,
                    "title": conversation_title(engine, agent_id, session_id),
                    "secrets": sum(counts.values()),
                    "kinds": dict(sorted(counts.items())),
                    "first_seen": iso_utc(min(stamps)) if stamps else None,
                    "last_seen": iso_utc(max(stamps)) if stamps else None,
                }
            )
    result.stats["total"] = len(result.findings)
    return result
