"""The one place a parsed record becomes what the stores take.

Every record read from an agent's file passes :func:`prepare_record` before
the index or the archive sees it: in a parse worker for big refreshes, in
the writer process for small ones. Records re-imported from the archive or
backfilled from the index already passed it when they were first read.

``STAGES`` are record-to-record transforms applied in order first: a stage
that rewrites a record's text changes what both stores hold, since both
are fed from the prepared record (:meth:`agentdex.ingest.feed.Refresher._add`).
A stage runs in a forked parse worker: it must not write anything itself;
what it finds travels with the prepared record to the writer.
:func:`mask_secrets` is the stage ``[privacy] redact`` (on by default) adds
for a refresh (:func:`stages`): every secret becomes ``[REDACTED:<kind>]``
before the index and the archive see the record, so every surface shows
the label and ``agentdex secrets`` reads the kinds back from the index.
"""

from __future__ import annotations

from collections.abc import Callable

from agentdex.index.segments import Prepared, prepare
from agentdex.records import Record
from agentdex.secrets import redact

Stage = Callable[[Record], Record]
#: transforms every parsed record goes through, in order, before it is prepared
STAGES: list[Stage] = []


def mask_secrets(record: Record) -> Record:
    """The record with the secrets in its text masked (:func:`agentdex.secrets.redact`)."""
    if record.text:
        masked, found = redact(record.text)
        if found:
            record.text = masked
    return record


def mask_title(title: str) -> str:
    """A conversation title with its secrets masked (titles come from texts)."""
    return redact(title)[0]


def stages(*, redact_secrets: bool) -> tuple[Stage, ...]:
    """The stages of one refresh: :data:`STAGES`, then masking unless it is turned off."""
    return (*STAGES, mask_secrets) if redact_secrets else tuple(STAGES)


def prepare_record(record: Record, steps: tuple[Stage, ...] | None = None) -> Prepared:
    """A parsed record, through every stage (``steps``, default :data:`STAGES`),
    prepared for the writer (no index state)."""
    for stage in STAGES if steps is None else steps:
        record = stage(record)
    return prepare(record)
