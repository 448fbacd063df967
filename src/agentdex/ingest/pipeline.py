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

import os
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


#: where ``key`` (then ``raw``) sits among a :class:`Prepared`'s fields
_BEFORE_KEY = Prepared._fields.index("key")


#: a prepared record as a parse worker sends it to the writer: the fields of a
#: :class:`Prepared` in a plain tuple (a named tuple pickles through a Python call per
#: record on both sides), ``lower`` None when it is the UTF-8 of ``postings_text``
Wire = tuple[object, ...]


_LOWER = Prepared._fields.index("lower")
_POSTINGS_TEXT = Prepared._fields.index("postings_text")


def from_wire(items: list[Wire]) -> list[Prepared]:
    """The :class:`Prepared` records a parse worker sent (:meth:`ArchiveParts.add_to`)."""
    new = tuple.__new__
    lower, text = _LOWER, _POSTINGS_TEXT
    return [
        new(Prepared, item)
        if item[lower] is not None
        else new(Prepared, (*item[:lower], str(item[text]).encode(), *item[lower + 1 :]))
        for item in items
    ]


class ArchiveParts:
    """What the archive would otherwise compute from each record in the writer, done in the
    parse worker of one file: the record's key and, for a prompt of a JSONL file, its
    source line (read and masked as :func:`agentdex.archive.writer.read_raw_line` does).

    The writer process is the build's one serial chain; parse workers run beside it.
    """

    def __init__(self, path: str, *, jsonl: bool, redact: bool) -> None:
        from agentdex.archive.keys import prepared_key
        from agentdex.archive.writer import RAW_KINDS

        self.path = path if jsonl else None
        self.redact = redact
        self.fd = -1
        self._key = prepared_key
        self._raw_kinds = RAW_KINDS

    def add_to(self, prepared: Prepared) -> Wire:
        """The record with its archive parts, as the worker sends it (:func:`from_wire`)."""
        meta = prepared.meta
        key = self._key(prepared)
        offset = meta[13]
        raw = None
        if (
            self.path is not None
            and meta[4] in self._raw_kinds
            and isinstance(offset, int)
            and offset >= 0
        ):
            raw = self._line(offset)
        # (a new tuple: NamedTuple._replace costs ~2.5x as much, per record of every build)
        lower = prepared.lower
        return (
            *prepared[:_LOWER],
            # the lower-cased bytes are the postings text's UTF-8 unless a surrogate is in
            # it (its encoding starts with 0xED): not sent twice
            lower if b"\xed" in lower else None,
            *prepared[_LOWER + 1 : _BEFORE_KEY],
            key,
            raw,
            *prepared[_BEFORE_KEY + 2 :],
        )

    def _line(self, offset: int) -> bytes:
        from agentdex.archive.writer import read_raw_line

        try:
            if self.fd < 0:
                self.fd = os.open(self.path or "", os.O_RDONLY)
            return read_raw_line(self.fd, offset, redact=self.redact) or b""
        except OSError:
            self.path = None  # as the writer does: no more lines of this file
            return b""

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
