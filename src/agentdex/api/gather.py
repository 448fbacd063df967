"""One conversation gathered for reading once, in order, without holding its text.

``show`` and ``export`` read a conversation through :func:`gather`. Its
records are parsed from the agent's files (or read from the index) one at a
time; each record's JSON goes to a :class:`Spool`, an unnamed temporary file
(0600, never linked into a folder, gone when closed or when the process
dies), and only a small :class:`Entry` stays in memory: where the record
sits in the spool and what orders, de-duplicates and describes it (role,
kind, time, locator, the cwd/branch/model fields, hashes of its text). The
conversation's order, its focus and its header are decided on the entries;
the texts are then read back one record at a time, so memory grows with the
number of records (a few hundred bytes each), never with their text.
"""

from __future__ import annotations

import marshal
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from agentdex.api._order import conversation_order, launch_place, split_ref
from agentdex.errors import AgentdexError, NotFoundError, UsageError
from agentdex.records import Record, iso_utc

if TYPE_CHECKING:
    from agentdex.discovery import Source
    from agentdex.search.engine import Engine, Hit

#: An export's extra masking (``export --redact``): the masked text and the kinds it found.
Mask = Callable[[str], tuple[str, tuple[str, ...]]]


class Spool:
    """Records' JSON in an unnamed temporary file (``marshal``: surrogates survive).

    A temporary folder that is full, missing or read-only is a one-line
    :class:`~agentdex.errors.AgentdexError` naming it, never a traceback.
    """

    def __init__(self) -> None:
        try:
            self._file = tempfile.TemporaryFile(prefix="agentdex-")  # noqa: SIM115 (closed by close())
        except OSError as exc:
            raise _spool_error(exc) from exc
        self._end = 0
        self._dirty = False

    def put(self, data: dict[str, Any]) -> tuple[int, int]:
        blob = marshal.dumps(data)
        try:
            self._file.write(blob)
        except OSError as exc:
            raise _spool_error(exc) from exc
        self._dirty = True
        at = self._end
        self._end += len(blob)
        return at, len(blob)

    def get(self, at: int, size: int) -> dict[str, Any]:
        try:
            if self._dirty:
                self._file.flush()
                self._dirty = False
            blob = os.pread(self._file.fileno(), size, at)
        except OSError as exc:
            raise _spool_error(exc) from exc
        data: dict[str, Any] = marshal.loads(blob)
        return data

    def close(self) -> None:
        with suppress(OSError):  # a flush that fails again: the file is closed all the same
            self._file.close()


def _spool_error(exc: OSError) -> AgentdexError:
    return AgentdexError(
        f"cannot keep the conversation's records in the temporary folder"
        f" {tempfile.gettempdir()}: {exc.strerror or exc}"
        " (set TMPDIR to a folder with room for about the conversation's size)"
    )


@dataclass(slots=True)
class Entry:
    """One record of a gathered conversation, without its text (that is in the spool)."""

    at: int
    size: int
    agent: str
    store: str
    source_path: str
    session_id: str
    locator: str
    role: str
    kind: str
    time: float | None
    cwd: str | None
    project: str | None
    branch: str | None
    worktree: str | None
    model: str | None
    host: str | None
    #: ``hash()`` of the text and of the stripped text (same text, same conversation:
    #: a copy in a prompt log or the archive is recognised without keeping the text)
    text_key: int
    strip_key: int
    gone: bool = False
    #: kinds of the secrets the export's mask found in this record
    found: tuple[str, ...] = ()
    #: a prompt's unmasked text as a title (``titles.clean``; "" when it is none), kept
    #: only when a mask is on
    hint: str | None = None

    @property
    def order_key(self) -> str:
        return ("archived:" if self.gone else "") + self.source_path


class _Shared:
    """One string object per distinct value (every record repeats its cwd, model...)."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def __call__(self, value: str | None) -> str | None:
        return None if value is None else self.values.setdefault(value, value)


@dataclass(slots=True)
class Gathered:
    """A conversation ready to read once: entries in order, texts in the spool."""

    session_id: str
    id: str
    agent: str
    project: str | None
    focus: int | None
    entries: list[Entry]
    spool: Spool

    def record(self, entry: Entry) -> dict[str, Any]:
        """The record's JSON (``show``'s shape), read back from the spool."""
        return self.spool.get(entry.at, entry.size)

    def records(self) -> Iterator[dict[str, Any]]:
        for entry in self.entries:
            yield self.record(entry)

    def show_json(self) -> dict[str, Any]:
        """What :func:`agentdex.api.history.show` returns (every record in memory)."""
        return {
            "session_id": self.session_id,
            "id": self.id,
            "agent": self.agent,
            "project": self.project,
            "focus": self.focus,
            "records": list(self.records()),
        }

    def close(self) -> None:
        self.spool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class _Gatherer:
    """Fills one spool with the records of ``session_id``, keeping their entries."""

    def __init__(self, home: str | None, mask: Mask | None) -> None:
        self.home = home
        self.mask = mask
        self.spool = Spool()
        self.shared = _Shared()

    def add(self, data: dict[str, Any], time: float | None, gone: bool) -> Entry:
        """Spool ``data`` (a record's JSON, text included) and return its entry."""
        text: str = data["text"] or ""
        found: tuple[str, ...] = ()
        hint = None
        if self.mask is not None:
            if data["kind"] == "prompt" and text.strip():
                from agentdex.api.titles import clean

                hint = clean(text, typed=True) or ""  # "": not a title
            data["text"], found = self.mask(text)
        at, size = self.spool.put(data)
        share = self.shared
        return Entry(
            at=at,
            size=size,
            agent=share(data["agent"]) or "",
            store=share(data["store"]) or "",
            source_path=share(data["source_path"]) or "",
            session_id=share(data["session_id"]) or "",
            locator=data["locator"],
            role=share(data["role"]) or "",
            kind=share(data["kind"]) or "",
            time=time,
            cwd=share(data["cwd"]),
            project=share(data["project"]),
            branch=share(data["branch"]),
            worktree=share(data["worktree"]),
            model=share(data["model"]),
            host=share(data["host"]),
            text_key=hash(text),
            strip_key=hash(text.strip()),
            gone=gone,
            found=found,
            hint=hint,
        )

    def add_record(self, record: Record, gone: bool = False) -> Entry:
        return self.add({**record.to_json(), "source_gone": gone}, record.timestamp, gone)

    def from_files(
        self, candidates: list[Source], session_id: str, agent: str | None
    ) -> list[Entry]:
        """Entries of ``session_id`` (exact id first, else a unique prefix) in ``candidates``."""
        from agentdex.api import history
        from agentdex.parsers import ParseCursor
        from agentdex.readers import Diagnostics

        entries = [
            self.add_record(record)
            for source in candidates
            for record in history._parse_all(source, Diagnostics(), ParseCursor())
            if (agent is None or record.agent == agent) and record.session_id.startswith(session_id)
        ]
        exact = [e for e in entries if e.session_id == session_id]
        return exact or entries

    def archived_only(self, entries: list[Entry]) -> list[Entry]:
        """The conversation's records only the archive keeps, less any the files hold again."""
        if not entries or len({(e.agent, e.session_id) for e in entries}) != 1:
            return []
        from agentdex.api.archive import iter_archived_records

        held = {(e.role, e.kind, e.time, e.text_key) for e in entries}
        return [
            self.add_record(record, gone=True)
            for record in iter_archived_records(entries[0].session_id, entries[0].agent, self.home)
            if (record.role, record.kind, record.timestamp, hash(record.text or "")) not in held
        ]

    def from_index(
        self, session_id: str, locator: str | None, agent: str | None
    ) -> Gathered | None:
        """The conversation from this home's search index, when it is there."""
        from agentdex.api.refs import indexed_conversation

        ref = f"{session_id}@{locator}" if locator else session_id
        try:
            with indexed_conversation(ref, home=self.home, agent=agent) as found:
                entries = [self._from_hit(found.engine, hit) for hit in found.hits]
                return Gathered(
                    session_id=found.session_id,
                    id=found.id,
                    agent=found.agent,
                    project=found.project,
                    focus=found.position,
                    entries=entries,
                    spool=self.spool,
                )
        except NotFoundError:
            return None

    def _from_hit(self, engine: Engine, hit: Hit) -> Entry:
        from agentdex.api.refs import record_json

        data = record_json(engine, hit, self.home)
        return self.add(data, hit.timestamp, bool(data["source_gone"]))


def gather(
    ref: str, home: str | None = None, *, agent: str | None = None, mask: Mask | None = None
) -> Gathered:
    """Conversation ``ref`` (a session id or ``session@locator``), gathered in order.

    Records the agent's files no longer hold but agentdex's archive kept
    (``docs/archive.md``) come in place with ``source_gone: true``; a forgotten
    conversation (``agentdex forget``) is not found. ``mask`` (the export's
    ``--redact``) masks each text before it is spooled. The caller closes the
    result (it is a context manager).
    """
    session_id, locator = split_ref(ref.strip())
    if not session_id:
        raise UsageError("show needs a session id (or a search result reference)")
    from agentdex.api import history, ids

    named_by = ids.resolve(session_id, agent=agent, home=home)  # short ids, prefixes: one
    if named_by is not None:
        agent, session_id = named_by
    found = history.discover_sources(home, agents=[agent] if agent else None)
    # A file named after the session, or in a folder named after it (Cline: the task
    # folder and the session folder, with its subagents' files, share the id).
    named = [
        s
        for s in found.sources
        if session_id in os.path.basename(s.path)
        or os.path.basename(os.path.dirname(s.path)) == session_id
    ]
    into = _Gatherer(home, mask)
    try:
        entries = into.from_files(named, session_id, agent)
        gone = into.archived_only(entries)
        if locator and not any(e.locator == locator for e in entries + gone):
            entries = []  # the reference is to another file of the conversation (a prompt log)
        if not entries:
            indexed = into.from_index(session_id, locator, agent)
            if indexed is not None and agent in (None, indexed.agent):
                _check_focus(indexed, locator)
                return indexed
        if not entries:
            parsed = [s for s in found.sources if s.row.parser is not None]
            entries = into.from_files(parsed, session_id, agent)
            gone = into.archived_only(entries)
        if not entries:
            raise NotFoundError(f"no conversation with id {session_id!r}")
        keys = sorted({(e.agent, e.session_id) for e in entries})
        if len(keys) > 1:
            raise ids.ambiguous(session_id, keys, home=home)
        _refuse_forgotten(entries[0].agent, entries[0].session_id, home)
        every = entries + gone
        shown = conversation_order(
            _prefer_transcripts(every), lambda e: e.order_key, lambda e: e.time
        )
        first = shown[0]
        gathered = Gathered(
            session_id=first.session_id,
            id=ids.conversation_id(first.agent, first.session_id, home),
            agent=first.agent,
            project=launch_place(shown, _project, _cwd, _time)[0],
            focus=_focus(shown, every, locator),
            entries=shown,
            spool=into.spool,
        )
        _check_focus(gathered, locator)
        return gathered
    except BaseException:
        into.spool.close()
        raise


def _project(entry: Entry) -> str | None:
    return entry.project


def _cwd(entry: Entry) -> str | None:
    return entry.cwd


def _time(entry: Entry) -> float | None:
    return entry.time


def _check_focus(gathered: Gathered, locator: str | None) -> None:
    """A ref whose locator names no record (``@line:9999``) is an error, not the whole chat."""
    if not locator or gathered.focus is not None:
        return
    entries = gathered.entries
    span = f"{entries[0].locator} … {entries[-1].locator}" if entries else "none"
    gathered.close()
    raise NotFoundError(
        f"conversation {gathered.session_id} has no record at {locator} "
        f"({len(entries)} records: {span}); drop '@{locator}' to see all of it"
    )


def _refuse_forgotten(agent: str, session_id: str, home: str | None) -> None:
    from agentdex.api.archive import is_forgotten

    if is_forgotten(agent, session_id, home):
        raise NotFoundError(
            f"conversation {session_id!r} was forgotten (agentdex forget): it is no longer shown"
        )


def _focus(shown: list[Entry], parsed: list[Entry], locator: str | None) -> int | None:
    """Where ``locator`` is in the conversation shown; a prompt-log entry left out in
    favour of the transcript focuses the transcript's copy of the same prompt."""
    if not locator:
        return None
    found = next((i for i, e in enumerate(shown) if e.locator == locator), None)
    if found is not None:
        return found
    logged = next((e for e in parsed if e.locator == locator), None)
    if logged is None:
        return None
    same = (logged.role, logged.strip_key)
    return next((i for i, e in enumerate(shown) if (e.role, e.strip_key) == same), None)


def _prefer_transcripts(entries: list[Entry]) -> list[Entry]:
    """Drop prompt-log entries the session's transcript repeats (same role and text); an
    entry the transcript lacks (a rewound prompt) stays."""
    from agentdex.api.history import _holds

    holds = {e.store: _holds(e.store) for e in entries}
    said = {(e.role, e.strip_key) for e in entries if holds[e.store] != "prompt log"}
    return [
        e for e in entries if holds[e.store] != "prompt log" or (e.role, e.strip_key) not in said
    ]


def stamps(entries: list[Entry]) -> list[str]:
    """The records' times as the JSON gives them (ISO-8601 UTC)."""
    return [stamp for stamp in (iso_utc(e.time) for e in entries) if stamp]
