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
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, count, repeat
from operator import add, lshift, xor
from typing import TYPE_CHECKING, Any

import orjson

from agentdex.index.columns import Columns, meta_of
from agentdex.index.rowpack import _EXACT, pack_locator, pack_time, unpack_locator
from agentdex.index.segments import Prepared, has_long_token, prepare
from agentdex.records import Record
from agentdex.secrets import SEPARATOR, Scanned, redact, redact_scanned, scan, suspects

if TYPE_CHECKING:
    from agentdex.discovery import Source
    from agentdex.parsers import Place
    from agentdex.parsers.base import Line, ParseCursor
    from agentdex.readers import Diagnostics

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
#: a record's (agent, store, session_id, role, kind, timestamp, model, cwd, project, branch,
#: worktree, host, locator, offset): :attr:`Prepared.meta`
Meta = tuple[object, ...]
#: a record as a worker's batch holds it: (context, role, kind, timestamp, offset, packed
#: locator, text), its meta the context's fields with its own
#: (:func:`agentdex.index.columns.meta_of`)
Row = tuple[Any, Any, Any, Any, Any, Any, str]


_LOWER = Prepared._fields.index("lower")


def from_wire(items: list[Wire] | Columns) -> list[Prepared]:
    """The :class:`Prepared` records a parse worker sent (:meth:`ArchiveParts.add_to`; its
    file's :class:`Columns`, or their rows)."""
    if not isinstance(items, Columns):
        items = Columns.from_rows(items)
    return items.prepared()


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

    def _line(self, offset: int, *, redact: bool | None = None) -> bytes:
        from agentdex.archive.writer import read_raw_line

        try:
            if self.fd < 0:
                self.fd = os.open(self.path or "", os.O_RDONLY)
            masking = self.redact if redact is None else redact
            return read_raw_line(self.fd, offset, redact=masking) or b""
        except OSError:
            self.path = None  # as the writer does: no more lines of this file
            return b""

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


#: a parse worker prepares a file's records this many at a time (or fewer, ``BATCH_CHARS``
#: of text): the passes over a batch's joined text cost per byte, not per record
BATCH_RECORDS = 512
BATCH_CHARS = 1 << 19


def prepare_stream(
    records: Iterable[Record], steps: tuple[Stage, ...], archive: ArchiveParts, out: Columns
) -> None:
    """Append to ``out`` what :meth:`ArchiveParts.add_to` gives for each record through
    :func:`prepare_record` (``steps``), a batch at a time (:func:`prepare_batch`). When
    ``records`` raises (a parser's error), what it gave before is prepared first."""
    batch: list[Record] = []
    size = 0
    try:
        for record in records:
            batch.append(record)
            size += len(record.text or "")
            if size >= BATCH_CHARS or len(batch) >= BATCH_RECORDS:
                done, batch, size = batch, [], 0
                _batch_into(done, steps, archive, out)
    finally:
        if batch:
            _batch_into(batch, steps, archive, out)


def prepare_source(
    source: Source,
    cursor: ParseCursor,
    diagnostics: Diagnostics,
    steps: tuple[Stage, ...],
    archive: ArchiveParts,
    out: Columns,
) -> None:
    """Parse ``source`` (:func:`agentdex.parsers.run`) and append its records' wires to
    ``out`` (:func:`prepare_stream`), as a parse worker does: through :func:`prepare_lines`
    when its parser gives lines and no stage but masking rewrites records."""
    from agentdex.parsers import get_parser, run, run_lines

    spec = get_parser(source.row.parser) if source.row.parser else None
    if spec is not None and spec.lines is not None and steps in ((), (mask_secrets,)):
        where = (source.agent, source.store, source.host)
        prepare_lines(run_lines(source, cursor, diagnostics), where, bool(steps), archive, out)
    else:
        prepare_stream(run(source, cursor, diagnostics), steps, archive, out)


def prepare_lines(
    lines: Iterable[tuple[Line, Place]],
    ref: tuple[str, str, str | None],
    masking: bool,
    archive: ArchiveParts,
    out: Columns,
) -> None:
    """:func:`prepare_stream` of the records a line-based parser's :data:`Line` tuples
    stand for (:func:`agentdex.parsers.run_lines`; ``ref``: the file's agent, store and
    host), with no :class:`Record` made: the same wires (``tests/test_worker_lines.py``
    compares them over every corpus file).

    Why: a worker made ~1.3 records a line of Claude Code and Codex (~all of a build), and
    each went parser -> ``Record`` (17 fields and a dict of extras the wire never reads) ->
    ``run``'s enrichment -> the batch, which read its fields back; here what a line's
    records share (their context, time, locator's line) is made once a line, and the
    locator is packed from the line number instead of parsed back from its text. Each
    record is one :data:`Row` (no 14-field meta: the wire sends none, its context's fields
    and its own say it), the batch's rows turned into columns by one ``zip``."""
    agent, store, host = ref
    rows: list[Row] = []
    append = rows.append
    size = 0
    context: tuple[object, ...] = ()
    exact = _EXACT_LINES
    try:
        for line, place in lines:
            prefix, lineno, offset, session, timestamp, model, cwd, branch, items, _ = line
            project, place_branch, worktree = place
            if branch is None:
                branch = place_branch
            this = (agent, store, session, model, cwd, project, branch, worktree, host)
            if this != context:
                context = this
            plain = not prefix and lineno < exact
            for part, item in enumerate(items):
                role, kind, text, _ = item
                if part:
                    loc = (((lineno << 4) | part) << 1) | 1 if plain and part < _PARTS else (
                        _pack_line(f"{prefix}line:{lineno}#{part}")
                    )  # fmt: skip
                else:
                    loc = lineno << 1 if plain else _pack_line(f"{prefix}line:{lineno}")
                append((context, role, kind, timestamp, offset, loc, text))
                size += len(text)
            if size >= BATCH_CHARS or len(rows) >= BATCH_RECORDS:
                _prepare_columns(rows, {}, masking=masking, archive=archive, out=out)
                rows, size = [], 0
                append = rows.append
    finally:
        if rows:
            _prepare_columns(rows, {}, masking=masking, archive=archive, out=out)


def _ends(parts: list[bytes]) -> list[int]:
    """Where each part ends once they are joined by one separator each."""
    return list(map(add, accumulate(map(len, parts)), count()))


def prepare_batch(
    records: list[Record], steps: tuple[Stage, ...], archive: ArchiveParts
) -> list[Wire]:
    """``[archive.add_to(prepare_record(record, steps)) for record in records]``, the same
    values, with the work per record shared over the batch (:func:`_prepare_columns`)."""
    out = Columns()
    _batch_into(records, steps, archive, out)
    return out.rows()


def _batch_into(
    records: list[Record], steps: tuple[Stage, ...], archive: ArchiveParts, out: Columns
) -> None:
    """:func:`prepare_batch` appended to ``out``."""
    masking = bool(steps) and steps[-1] is mask_secrets
    early = steps[:-1] if masking else steps
    if mask_secrets in early:  # masking, then more stages: one record at a time
        for record in records:
            out.append_row(archive.add_to(prepare_record(record, steps)))
        return
    if early:
        records = [_through(record, early) for record in records]
    metas: list[Meta] = [
        (r.agent, r.store, r.session_id, r.role, r.kind, r.timestamp, r.model, r.cwd,
         r.project, r.branch, r.worktree, r.host, r.locator, r.offset)
        for r in records
    ]  # fmt: skip
    rows, odd = _rows_of(metas, [record.text or "" for record in records])
    _prepare_columns(rows, odd, masking=masking, archive=archive, out=out)


def _rows_of(metas: list[Meta], texts: list[str]) -> tuple[list[Row], dict[int, Meta]]:
    """The :data:`Row` of each record given by its meta and text, and the metas a row does
    not give back (:func:`agentdex.index.columns.meta_of`: a locator that does not unpack to
    itself), by position."""
    rows: list[Row] = []
    odd: dict[int, Meta] = {}
    context: tuple[object, ...] = ()
    for i, (meta, text) in enumerate(zip(metas, texts, strict=True)):
        (agent, store, session, role, kind, timestamp, model, cwd, project, branch, worktree,
         host, locator, offset) = meta  # fmt: skip
        this = (agent, store, session, model, cwd, project, branch, worktree, host)
        if this != context:
            context = this  # else the previous record's: pickled once, as a reference
        loc = _pack_line(locator)
        if loc is not locator and unpack_locator(loc) != locator:
            odd[i] = meta
        rows.append((context, role, kind, timestamp, offset, loc, text))
    return rows, odd


def _prepare_columns(
    rows: list[Row],
    odd: dict[int, Meta],
    *,
    masking: bool,
    archive: ArchiveParts,
    out: Columns,
) -> None:
    """The wires of a batch of records, each a :data:`Row` (``odd``: the metas its row does
    not give back, by position).

    Per record, masking and preparing each lower-cased and encoded the text, and masking
    ran a few passes (needles, bare tokens) over it: ~40% of a parse worker's CPU. Here
    the batch's texts are joined once (``SEPARATOR``: no text holds it, else one record at
    a time as before), lower-cased and encoded once, and split back; one pass over the
    joined bytes finds the texts that may hold a secret and what in them
    (:func:`agentdex.secrets.scan`), and only those are masked
    (:func:`agentdex.secrets.redact_scanned`: ``redact`` would return the others
    unchanged); a prompt's source line likewise (:func:`agentdex.secrets.suspects`).
    Then each record's fields are built as :func:`agentdex.index.segments.prepare` and
    :meth:`ArchiveParts.add_to` build them (``tests/test_prepare_batch.py`` compares).
    """
    contexts, roles, kinds, times, offsets, locs, texts_ = zip(*rows, strict=True)
    texts = list(texts_)
    joined = SEPARATOR.join(texts)
    if joined.count(SEPARATOR) != len(texts) - 1:
        late = (mask_secrets,) if masking else ()
        for i, row in enumerate(rows):
            context, role, kind, timestamp, offset, loc, text = row
            meta = odd.get(i) or meta_of(context, role, kind, timestamp, loc, offset)
            out.append_row(archive.add_to(prepare_record(_record(meta, text), late)))
        return
    lowered = joined.lower()
    data = joined.encode("utf-8", "surrogatepass")
    lower = lowered.encode("utf-8", "surrogatepass")
    # each text's part of the joined text: lower-casing maps character by character (a
    # final sigma looks no further than a separator), so part i is texts[i].lower()
    loweds = lowered.split(SEPARATOR)
    datas = data.split(b"\x00")
    lowers = lower.split(b"\x00")
    # the records whose postings text may not be their lower-cased text, or hold non-ASCII
    # characters: those of a batch with a surrogate or a non-ASCII character, and each
    # masked one (checked one at a time, as before: not on most batches' records)
    odd_text: list[int] | range = (
        range(len(texts)) if b"\xed" in lower or not lowered.isascii() else []
    )
    if masking:
        masked: list[int] = []
        for i, scanned in scan(lower, data, _ends(lowers), _ends(datas)).items():
            text = texts[i]
            if not text:
                continue
            masked_text, found = redact_scanned(text, loweds[i], scanned)
            if found:
                texts[i] = masked_text
                loweds[i] = masked_text.lower()
                datas[i] = masked_text.encode("utf-8", "surrogatepass")
                lowers[i] = loweds[i].encode("utf-8", "surrogatepass")
                masked.append(i)
        if masked and not odd_text:
            odd_text = masked
    raws = _raw_lines(kinds, offsets, archive)
    at = len(out)
    for i, meta in odd.items():
        out.metas[at + i] = meta
    out.contexts.extend(contexts)
    out.roles.extend(roles)
    out.kinds.extend(kinds)
    out.times.extend(times)
    out.offsets.extend(offsets)
    out.texts.extend(texts)
    out.locs.extend(locs)
    _wires(contexts, roles, kinds, times, loweds, datas, lowers, odd_text, out, at)
    if raws:
        out.raws.update({at + i: raw for i, raw in raws.items()})


def _record(meta: Meta, text: str) -> Record:
    """A record holding what :func:`prepare_record` reads of ``meta`` and ``text`` (not its
    source path or extras: no wire field comes from them)."""
    (agent, store, session, role, kind, timestamp, model, cwd, project, branch, worktree,
     host, locator, offset) = meta  # fmt: skip
    return Record(
        agent, store, "", locator, session, role, kind, text, timestamp, model, cwd,  # type: ignore[arg-type]
        project, branch, worktree, host, offset,  # type: ignore[arg-type]
    )  # fmt: skip


def _through(record: Record, steps: tuple[Stage, ...]) -> Record:
    """``record`` through each of ``steps`` (no masking among them)."""
    for stage in steps:
        record = stage(record)
    return record


def _raw_lines(
    kinds: Sequence[object], offsets: Sequence[object], archive: ArchiveParts
) -> dict[int, bytes]:
    """The source line the archive keeps for each record that has one (a prompt of a JSON
    Lines file), by position, as :meth:`ArchiveParts.add_to` reads it; masked once for the
    batch (only the lines that may hold a secret go through ``redact``)."""
    if archive.path is None:
        return {}
    raw_kinds = archive._raw_kinds
    lines: dict[int, bytes] = {}
    for i, (kind, offset) in enumerate(zip(kinds, offsets, strict=True)):
        if kind in raw_kinds and isinstance(offset, int) and offset >= 0:
            lines[i] = archive._line(offset, redact=False)
            if archive.path is None:  # the file could not be read: no more lines (None)
                break
    if archive.redact and lines:
        order = list(lines)
        decoded = [lines[i].decode("utf-8", "surrogateescape") for i in order]
        for at, scanned in suspects(decoded).items():
            i = order[at]
            lines[i] = _mask_raw(lines[i], decoded[at], scanned)
    return lines


def _mask_raw(line: bytes, text: str, scanned: Scanned) -> bytes:
    """``mask_piece(RAW, line) or b""`` (:func:`agentdex.archive.redaction.mask_piece`) for
    a line :func:`agentdex.secrets.suspects` found (``text``: its decoded form), masked from
    what the scan found, as the batch's texts are: ``redact`` ran every pattern whose
    needle is there, ~0.1 ms a line for the ~9% of prompts' lines holding ``token`` or
    ``key`` (none of them masked at c250)."""
    masked, found = redact_scanned(text, text.lower(), scanned)
    if not found:
        return line
    data = masked.encode("utf-8", "surrogateescape")
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        return b""  # no longer JSON once masked: dropped
    return data


#: the archive key's bytes before the time (agent, session, role, kind), for every batch of
#: this process (:func:`agentdex.archive.keys.keyer`'s, kept here for the inlined key)
_HEADS: dict[tuple[object, ...], bytes] = {}
#: the largest ``line:N`` (N + 1 digits at most) and part (``#M``) packed as an integer
_LINE_DIGITS = 15
_EXACT_LINES = 2**53 >> 5
_PARTS = 16


def _pack_line(locator: object) -> int | str:
    """:func:`agentdex.index.rowpack.pack_locator` of a locator, without its regex for the
    multi-part ``line:N#M`` (one record in six at c250; the regex cost ~3 us a call):
    anything else goes to ``pack_locator`` itself (``tests/test_prepare_batch.py``)."""
    if type(locator) is str and locator.startswith("line:"):
        line, sep, part = locator[5:].partition("#")
        if (
            line.isdigit()
            and line.isascii()
            and len(line) <= _LINE_DIGITS
            and (line[0] != "0" or len(line) == 1)
        ):
            if not sep:
                return int(line) << 1
            if (
                part.isdigit()
                and part.isascii()
                and len(part) <= 2
                and (part[0] != "0" or len(part) == 1)
            ):
                number, index = int(line), int(part)
                if index >= _PARTS or number >= _EXACT_LINES:
                    return locator
                return (((number << 4) | index) << 1) | 1
    return pack_locator(locator)


def _wires(
    contexts: Sequence[tuple[object, ...]],
    roles: Sequence[object],
    kinds: Sequence[object],
    times: Sequence[object],
    loweds: list[str],
    datas: list[bytes],
    lowers: list[bytes],
    odd_text: Sequence[int],
    out: Columns,
    at: int,
) -> None:
    """Append to ``out`` the fields each record's wire adds to its row's (what
    ``add_to(prepare(record))`` gives, as :class:`Columns`) from its lower-cased text and
    the UTF-8 of its text and lower-cased text, computed for the batch (``odd_text``: the
    records whose postings text may not be their lower-cased text, or hold non-ASCII
    characters; for every other one it is, and holds none; ``at``: where the batch starts in
    ``out``).

    The build's hottest Python (every record of a build), a column at a time: what C can
    map over a batch's lists is mapped (the text hashes,
    :func:`agentdex.index.segments.text_hash`; the lengths; the levels and the packed
    role and kind, looked up in their tables by their keys), what depends only on the role
    and kind looked up once a batch, and one loop a record is left for what needs Python:
    the time packed (once for the records of one line: they share the time object) and the
    archive key (:func:`agentdex.archive.keys.record_key`, its bytes before the time kept
    by agent, session, role and kind)."""
    from hashlib import blake2b
    from zlib import adler32, crc32

    from agentdex.archive.keys import record_key
    from agentdex.index import rolekind
    from agentdex.index.postings import LONG_TOKEN, rust_safe
    from agentdex.index.scores import _LEVELS, level_of
    from agentdex.index.segments import LONG_TOKEN_CHARS

    heads = _HEADS
    if len(heads) >= 4096:
        heads.clear()
    thashes = list(map(xor, map(lshift, map(crc32, datas), repeat(31)), map(adler32, datas)))
    sizes = list(map(len, lowers))
    # what depends on the role and kind looked up once a batch when all are strings (a
    # table would take 1 and True for one key), the levels in level_of's table by its key
    pairs = list(zip(roles, kinds, strict=True))
    try:
        distinct = set(pairs)
        levels: list[Any] = list(map(_LEVELS.get, zip(kinds, roles, sizes, strict=True)))  # type: ignore[arg-type]
    except TypeError:  # (a role or kind that is not hashable: none from a parser)
        distinct, levels = set(), [None]
    if distinct and all(type(role) is type(kind) is str for role, kind in distinct):
        packs = {pair: rolekind.pack(*pair) for pair in distinct}
        packed = list(map(packs.__getitem__, pairs))
    else:
        packed = list(map(rolekind.pack, roles, kinds))
    if None in levels:  # (a key met first: level_of fills its table)
        levels = list(map(level_of, kinds, roles, sizes))  # type: ignore[arg-type]
    rks, role_xs, kind_xs = zip(*packed, strict=True)
    flags = [
        LONG_TOKEN if size > LONG_TOKEN_CHARS and has_long_token(lowered, size) else 0
        for lowered, size in zip(loweds, sizes, strict=True)
    ]
    from_bytes = int.from_bytes
    keys: list[object] = []
    add_key = keys.append
    packed_times: list[object] = []
    add_time = packed_times.append
    last_time: object = object()
    packed_time: object = None
    stamp = b""
    last_context: object = None
    agent: object = None
    session: object = None
    named = False
    for context, role, kind, timestamp, thash, size in zip(
        contexts, roles, kinds, times, thashes, sizes, strict=True
    ):
        if timestamp is not last_time:
            last_time = timestamp
            if type(timestamp) is float:
                # pack_time's float case inlined (its checks of other types a call a line)
                stamp = repr(timestamp).encode()
                try:
                    ms = round(timestamp * 1000)
                except (OverflowError, ValueError):  # inf, nan
                    packed_time = timestamp
                else:
                    exact = -_EXACT < ms < _EXACT and ms / 1000 == timestamp
                    packed_time = ms if exact else timestamp
            else:
                packed_time = pack_time(timestamp)
                stamp = b""
        add_time(packed_time)
        if context is not last_context:
            last_context = context
            agent, session = context[0], context[2]
            named = type(agent) is type(session) is str
        if named and type(role) is type(kind) is str and type(timestamp) is float:
            parts = (agent, session, role, kind)
            head = heads.get(parts)
            if head is None:
                head = heads[parts] = "\x00".join((*parts, "")).encode(  # type: ignore[arg-type]
                    "utf-8", "surrogatepass"
                )
            # (``stamp``: the time's repr, ASCII, made once for the records of one line)
            add_key(
                from_bytes(
                    blake2b(
                        b"%s%s\x00%d\x00%d" % (head, stamp, thash, size), digest_size=8
                    ).digest(),
                    "little",
                    signed=True,
                )
            )
        else:
            add_key(record_key(agent, session, role, kind, timestamp, thash, size))
    postings = loweds
    if odd_text:
        postings = list(loweds)
        out_lowers, out_chars = out.lowers, out.chars
        for i in odd_text:
            lowered, lower = loweds[i], lowers[i]
            if b"\xed" in lower:
                postings[i] = rust_safe(lowered, lower)
                out_lowers[at + i] = lower
            if not postings[i].isascii():
                # the characters terms may start with: the postings' (a lone surrogate is
                # not one, and SQLite could not store it in the index's text_chars)
                out_chars[at + i] = "".join(c for c in set(postings[i]) if c > "\x7f")
    out.thashes.extend(thashes)
    out.postings.extend(postings)
    out.rks.extend(rks)
    out.flags.extend(flags)
    out.levels.extend(levels)
    out.role_xs.extend(role_xs)
    out.kind_xs.extend(kind_xs)
    out.packed_times.extend(packed_times)
    out.keys.extend(keys)
