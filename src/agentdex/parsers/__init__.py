"""Parsers, one module per agent, and the pipeline that runs one over a source.

``run()`` is the only entry point the engines use: it looks the parser up
by the catalogue row's id, streams records, and enriches each with the
project, branch and worktree of its cwd (:mod:`agentdex.gitinfo`); the
model calls' usage the parser read is left in ``cursor.usage``, enriched the
same way once the records are done.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, TypeVar

from agentdex.gitinfo import git_info
from agentdex.parsers._registry import get_parser
from agentdex.parsers.base import Line, ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics
from agentdex.records import Record, Usage

_Item = TypeVar("_Item", Record, Usage)

if TYPE_CHECKING:  # not at run time: plug-ins import this package while the catalogue loads
    from agentdex.discovery import Source


def source_ref(source: Source) -> SourceRef:
    return SourceRef(
        path=source.path,
        agent=source.agent,
        store=source.store,
        host=source.host,
        mtime=source.mtime,
        root=source.root.path,
    )


def enrich(record: _Item) -> _Item:
    """Fill project/branch/worktree from the record's (or usage's) cwd (branch kept when
    recorded)."""
    if record.cwd:
        info = git_info(record.cwd)
        record.project = info.project or record.project or record.cwd
        if record.branch is None:
            record.branch = info.branch
        if info.worktree:
            record.worktree = info.worktree
    return record


def run(
    source: Source,
    cursor: ParseCursor | None = None,
    diagnostics: Diagnostics | None = None,
) -> Iterator[Record]:
    """Parse ``source`` from ``cursor`` (whole file when None), yielding enriched records."""
    if source.row.parser is None:
        return
    spec = get_parser(source.row.parser)
    cursor = cursor if cursor is not None else ParseCursor()
    diagnostics = diagnostics if diagnostics is not None else Diagnostics()
    # enrich() inlined, its git_info looked up again only when the cwd changes (most of a
    # file's records share one): a call or two less for every record of a build
    last_cwd: str | None = None
    info = git_info("")
    try:
        for record in spec.parse(source_ref(source), cursor, diagnostics):
            cwd = record.cwd
            if cwd:
                if cwd != last_cwd:
                    info = git_info(cwd)
                    last_cwd = cwd
                record.project = info.project or record.project or cwd
                if record.branch is None:
                    record.branch = info.branch
                if info.worktree:
                    record.worktree = info.worktree
            yield record
    except OSError as exc:
        diagnostics.add(source.path, "", f"unreadable: {exc.strerror or exc}")
    for usage in cursor.usage:
        enrich(usage)


#: what :func:`run` fills a record of a cwd with: (project, branch when the record has
#: none, worktree); none for a record without a cwd
Place = tuple[str | None, str | None, str | None]
_NOWHERE: Place = (None, None, None)


def run_lines(
    source: Source, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[tuple[Line, Place]]:
    """:func:`run` for a parser with a ``lines`` function, as its :data:`Line` tuples: each
    with where its cwd is (what ``run`` sets on each of the line's records: its
    ``project`` is the place's project or the cwd, its ``branch`` the line's or the
    place's, its ``worktree`` the place's); the usage enriched as ``run`` does."""
    spec = get_parser(source.row.parser or "")
    if spec.lines is None:
        raise ValueError(f"{spec.id} has no lines function")
    last_cwd: str | None = None
    place = _NOWHERE
    try:
        for line in spec.lines(source_ref(source), cursor, diagnostics):
            cwd = line[6]
            if not cwd:
                yield line, _NOWHERE
                continue
            if cwd != last_cwd:
                info = git_info(cwd)
                last_cwd = cwd
                place = (info.project or cwd, info.branch, info.worktree or None)
            yield line, place
    except OSError as exc:
        diagnostics.add(source.path, "", f"unreadable: {exc.strerror or exc}")
    for usage in cursor.usage:
        enrich(usage)


__all__ = ["ParseCursor", "ParserSpec", "SourceRef", "enrich", "get_parser", "run", "run_lines"]
