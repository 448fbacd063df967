"""The one place a parsed record becomes what the stores take.

Every record read from an agent's file passes :func:`prepare_record` before
the index or the archive sees it: in a parse worker for big refreshes, in
the writer process for small ones. Records re-imported from the archive or
backfilled from the index already passed it when they were first read.

``STAGES`` are record-to-record transforms applied in order first (none
today): a stage that rewrites a record's text (say, to redact a secret)
changes what both stores hold, since both are fed from the prepared record
(:meth:`agentdex.ingest.feed.Refresher._add`). A stage runs in a forked
parse worker: it must not write anything itself; what it finds travels
with the prepared record to the writer.
"""

from __future__ import annotations

from collections.abc import Callable

from agentdex.index.segments import Prepared, prepare
from agentdex.records import Record

Stage = Callable[[Record], Record]
#: transforms every parsed record goes through, in order, before it is prepared
STAGES: list[Stage] = []


def prepare_record(record: Record) -> Prepared:
    """A parsed record, through every stage, prepared for the writer (no index state)."""
    for stage in STAGES:
        record = stage(record)
    return prepare(record)
