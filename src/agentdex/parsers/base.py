"""What a parser is: a function from one source file to a stream of records.

Parsers stream (memory stays flat however large the file), skip what they
do not know with a diagnostic, and never raise on bad input. A *resumable*
parser (append-only JSONL) starts from ``cursor.offset`` and keeps any
state it needs across resumes in ``cursor.state`` (JSON-serializable);
after iteration ``cursor.resume_offset``/``resume_line`` say where the next
incremental run starts. Non-resumable parsers reparse the whole file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdex.readers import Diagnostics
from agentdex.records import Record, Usage


@dataclass(slots=True)
class ParseCursor:
    offset: int = 0
    line: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    resume_offset: int = 0
    resume_line: int = 0
    #: Conversational units (lines, rows, requests) that produced at least one record.
    units: int = 0
    #: Session titles found while parsing: session_id -> title.
    titles: dict[str, str] = field(default_factory=dict)
    #: Model calls' token usage read in this run, in file order (:meth:`add_usage`).
    usage: list[Usage] = field(default_factory=list)
    #: Usage entries skipped as bad input (each with a diagnostic); ``audit`` counts them.
    usage_skipped: int = 0

    def add_usage(self, usage: Usage, diag: Diagnostics) -> bool:
        """Keep ``usage`` unless a count is bad input (then skip it, counted); kept?

        A call whose every count is 0 (a placeholder, e.g. Claude Code's
        ``<synthetic>`` replies) carries no tokens and is left out silently.
        """
        why = usage.problem()
        if why is not None:
            self.skip_usage(diag, usage.source_path, usage.locator, why)
            return False
        if usage.total_tokens == 0:
            return False
        self.usage.append(usage)
        return True

    def skip_usage(self, diag: Diagnostics, path: str | Path, locator: str, why: str) -> None:
        """Count one usage entry skipped as bad input, with a diagnostic saying why."""
        self.usage_skipped += 1
        diag.add(path, locator, f"usage skipped: {why}")


@dataclass(slots=True)
class SourceRef:
    """What a parser needs to know about its file (kept free of discovery types)."""

    path: Path
    agent: str
    store: str
    host: str | None
    mtime: float
    root: Path


ParseFn = Callable[[SourceRef, ParseCursor, Diagnostics], Iterator[Record]]
#: what one item of a source line gives: (role, kind, text, extra)
LineItem = tuple[Any, Any, str, dict[str, Any]]
#: what a line of a line-based parser gives, before it becomes records: (locator prefix,
#: line number, byte offset, session, time, model, cwd, branch, items, the items' shared
#: extras); each item is a record at ``{prefix}line:{N}``, the further ones ``#1``, ``#2``...
Line = tuple[
    str, int, int, str, float | None, str | None, str | None, str | None,
    list[LineItem], dict[str, Any],
]  # fmt: skip
LinesFn = Callable[[SourceRef, ParseCursor, Diagnostics], Iterator[Line]]
CountFn = Callable[[Path], int]
#: conversation id -> {"prompts": n, "replies": n}; ``"abandoned": 1`` marks a
#: branch the agent no longer shows (kept searchable, not a mismatch).
RoleCounts = dict[str, dict[str, int]]
RoleCountFn = Callable[[Path], RoleCounts]


def add_role(counts: RoleCounts, session: str, role: str, n: int = 1) -> None:
    """Add ``n`` to ``counts[session][role]`` (``role``: "prompts" or "replies")."""
    entry = counts.setdefault(session, {"prompts": 0, "replies": 0})
    entry[role] = entry.get(role, 0) + n


def prompts_by_session(entries: Iterable[tuple[str, object]]) -> RoleCounts:
    """A prompt log's role count: one prompt per ``(session, text)`` whose text is not blank."""
    counts: RoleCounts = {}
    for session, text in entries:
        if isinstance(text, str) and text.strip():
            add_role(counts, session, "prompts")
    return counts


@dataclass(frozen=True, slots=True)
class ParserSpec:
    """A registered parser.

    ``count_raw`` is the *independent* count ``audit`` compares against: a
    deliberately simple pass over the raw file (not the parser's code path)
    counting the conversational units the parser should turn into records.
    ``count_roles`` is the same kind of pass counting, per conversation,
    the prompts a person typed and the replies the agent gave, so a parser
    that reads harness text as prompts or splits a reply is a mismatch.
    """

    id: str
    parse: ParseFn
    resumable: bool = False
    count_raw: CountFn | None = None
    count_roles: RoleCountFn | None = None
    #: the parse as :data:`Line` tuples, which ``parse`` makes its records of: a parse worker
    #: sends each record's fields to the writer without a :class:`Record` between
    #: (:func:`agentdex.ingest.pipeline.prepare_lines`); the two dominant agents'
    lines: LinesFn | None = None
