"""Export API: one conversation as a readable document (Markdown, standalone HTML, JSON).

:func:`open_export` gathers the conversation (:func:`agentdex.api.gather.gather`:
records parsed one at a time into an unnamed temporary file, only a small entry
per record kept in memory), decides its header (agent, project, branch,
worktree, model, times, what ``redact=True`` masked) and returns an
:class:`ExportStream` whose :meth:`~ExportStream.chunks` render the document a
record at a time: the CLI writes them as they come and the HTTP API streams
them, so memory does not grow with the conversation's size. Every error (not
found, ambiguous, forgotten, a bad locator) is raised by :func:`open_export`,
before the first byte. ``redact=True`` masks only what it returns: no store and
no index is touched. :func:`export` and :func:`conversation` build the whole
document or dict (tests, small callers). The renderers live in
:mod:`agentdex.api.export_render`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from agentdex import __version__
from agentdex.errors import UsageError

if TYPE_CHECKING:
    from agentdex.api.gather import Entry, Gathered

#: Export formats and their media types.
MEDIA_TYPES: dict[str, str] = {
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "json": "application/json",
}
FORMATS: tuple[str, ...] = tuple(MEDIA_TYPES)

#: Bumped when the JSON export changes incompatibly (keys are only ever added).
EXPORT_VERSION = 1


@dataclass(frozen=True, slots=True)
class Export:
    """A rendered document and what a caller needs to save or serve it."""

    format: str
    content: str
    media_type: str
    filename: str
    agent: str
    session_id: str
    redacted: int | None


@dataclass(slots=True)
class ExportStream:
    """A conversation ready to render: header decided, records still in the spool."""

    format: str
    media_type: str
    filename: str
    agent: str
    session_id: str
    redacted: int | None
    #: the JSON export's dict without ``records``
    header: dict[str, Any]
    gathered: Gathered

    def records(self) -> Iterator[dict[str, Any]]:
        """The records (the JSON export's shape), read one at a time."""
        return self.gathered.records()

    def chunks(self) -> Iterator[str]:
        """The document, a record at a time."""
        from agentdex.api import export_render

        render = {
            "md": export_render.markdown_chunks,
            "html": export_render.html_chunks,
            "json": export_render.json_chunks,
        }[self.format]
        return render(self.header, self.records())

    def to_json(self, written: int) -> dict[str, Any]:
        """What ``agentdex export -o FILE --json`` reports, ``written`` bytes later."""
        return {
            "format": self.format,
            "agent": self.agent,
            "session_id": self.session_id,
            "media_type": self.media_type,
            "filename": self.filename,
            "bytes": written,
            "redacted": self.redacted,
        }

    def close(self) -> None:
        """Drop the spool, and hand the memory the export freed back to the system (glibc
        keeps it in the process otherwise: a server that exported stayed large)."""
        from agentdex.index.memory import release_free_memory

        self.gathered.close()
        release_free_memory()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def open_export(
    ref: str, home: str | None = None, *, format: str = "md", redact: bool = False
) -> ExportStream:
    """Conversation ``ref`` ready to render as ``format`` (``md``, ``html`` or ``json``).

    Raises every error a caller must report (a bad format, not found...) now; the
    caller closes the stream (a context manager) once it has read :meth:`~ExportStream.chunks`.
    """
    if format not in MEDIA_TYPES:
        raise UsageError(f"unknown export format {format!r}; use one of {', '.join(FORMATS)}")
    from agentdex.api.gather import gather

    gathered = gather(ref, home, mask=_mask if redact else None)
    try:
        header = _header(gathered, home, redact=redact)
    except BaseException:
        gathered.close()
        raise
    redaction = header["redaction"]
    return ExportStream(
        format=format,
        media_type=MEDIA_TYPES[format],
        filename=_filename(gathered.agent, gathered.session_id, format),
        agent=gathered.agent,
        session_id=gathered.session_id,
        redacted=None if redaction is None else redaction["count"],
        header=header,
        gathered=gathered,
    )


def conversation(ref: str, home: str | None = None, *, redact: bool = False) -> dict[str, Any]:
    """Conversation ``ref`` with its header, ready to render (the JSON export's shape),
    every record in memory."""
    with open_export(ref, home, format="json", redact=redact) as stream:
        return {**stream.header, "records": list(stream.records())}


def export(
    ref: str, home: str | None = None, *, format: str = "md", redact: bool = False
) -> Export:
    """Conversation ``ref`` rendered as ``format``, the whole document in memory
    (:func:`open_export` streams it)."""
    with open_export(ref, home, format=format, redact=redact) as stream:
        content = "".join(stream.chunks())
    return Export(
        format=format,
        content=content,
        media_type=stream.media_type,
        filename=stream.filename,
        agent=stream.agent,
        session_id=stream.session_id,
        redacted=stream.redacted,
    )


def _mask(text: str) -> tuple[str, tuple[str, ...]]:
    """``--redact``: ``text`` masked, and the kinds of what was masked."""
    from agentdex.secrets import redact

    masked, findings = redact(text)
    return masked, tuple(finding.kind for finding in findings)


def _header(gathered: Gathered, home: str | None, *, redact: bool) -> dict[str, Any]:
    """The JSON export without its records, decided on the entries alone."""
    from agentdex.api.gather import stamps

    entries = gathered.entries
    title: str | None = _title(gathered, home)
    redaction: dict[str, Any] | None = None
    if redact:
        counts: Counter[str] = Counter(kind for entry in entries for kind in entry.found)
        if title:
            title, found = _mask(title)
            counts.update(found)
        redaction = {"count": sum(counts.values()), "by_pattern": dict(sorted(counts.items()))}
    times = stamps(entries)
    return {
        "export_version": EXPORT_VERSION,
        "generator": f"agentdex {__version__}",
        "agent": gathered.agent,
        "session_id": gathered.session_id,
        "title": title,
        "project": gathered.project,
        "cwd": next(iter(_distinct(entries, "cwd")), None),
        "branches": _distinct(entries, "branch"),
        "worktrees": _distinct(entries, "worktree"),
        "models": _distinct(entries, "model"),
        "hosts": _distinct(entries, "host"),
        "started": min(times) if times else None,
        "ended": max(times) if times else None,
        "focus": gathered.focus,
        "counts": dict(Counter(entry.role for entry in entries)),
        "redaction": redaction,
    }


def _distinct(entries: list[Entry], key: str) -> list[str]:
    """The values of ``key`` in the order they first appear."""
    return list(dict.fromkeys(v for v in (getattr(e, key) for e in entries) if v))


def _title(gathered: Gathered, home: str | None) -> str:
    """The index's title, else one chosen from the gathered records (:mod:`titles`): a
    prompt's unmasked first line when ``--redact`` masked the records (the title is
    masked on its own and counted)."""
    from agentdex.api.titles import choose, indexed_title

    title = indexed_title(gathered.agent, gathered.session_id, home)
    if title:
        return title
    entries = gathered.entries

    def texts(kind: str, role: str | None = None) -> Iterator[str]:
        for entry in entries:
            if entry.kind == kind and (role is None or entry.role == role):
                yield entry.hint if entry.hint is not None else gathered.record(entry)["text"]

    times = [entry.time for entry in entries if entry.time is not None]
    return choose(
        None,
        texts("prompt"),
        texts("message", "assistant"),
        agent=gathered.agent,
        project=gathered.project,
        first_ts=min(times) if times else None,
    )


def _filename(agent: str, session_id: str, format: str) -> str:
    """A safe file name such as ``claude-code-4f1c2b3a.md``."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{agent}-{session_id[:64]}").strip("-.")
    return f"{stem or 'conversation'}.{format}"
