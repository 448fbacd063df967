"""Helpers shared by the line-based parsers (Claude Code, Codex).

Two halves that deliberately share no code path:

* :func:`stream` drives :class:`agentdex.readers.JsonlReader` for a parser:
  fresh state on a full parse, state restored on a resume, and the state
  committed only up to the last newline-terminated line, so a torn last line
  that is yielded now and read again next time never counts twice.
* :func:`raw_objects` is the naive reader the ``count_raw`` functions use:
  ``json.loads`` per line, nothing else, so ``audit`` compares the parser
  against an independent pass over the file.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from typing import Any

import orjson

from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import MAX_LINE_BYTES, Diagnostics, JsonlLine, JsonlReader, guard

#: Tool calls and tool outputs longer than this are cut (``extra["truncated"]``).
MAX_TOOL_TEXT = 64 * 1024


#: the types ``copy.deepcopy`` returns as they are
_ATOMS = frozenset({str, int, float, bool, type(None)})


def copy_state(state: dict[str, Any]) -> dict[str, Any]:
    """``copy.deepcopy(state)``: a parser's state is most often a flat dict of strings,
    numbers and flags, copied as one ``dict``, with a list or dict of them copied as one
    too (Codex holds a line's state for every typed-looking text, its running token total
    a list: deepcopy's memo and dispatch cost ~25 us a turn, more than the parse of it)."""
    if not _ATOMS.issuperset(map(type, state)):
        return copy.deepcopy(state)
    copied = dict(state)
    if _ATOMS.issuperset(map(type, state.values())):
        return copied
    for key, value in state.items():
        kind = type(value)
        if kind in _ATOMS:
            continue
        if kind is list and _ATOMS.issuperset(map(type, value)):
            copied[key] = list(value)
        elif (
            kind is dict
            and _ATOMS.issuperset(map(type, value))
            and _ATOMS.issuperset(map(type, value.values()))
        ):
            copied[key] = dict(value)
        else:
            return copy.deepcopy(state)
    return copied


class LineStream:
    """Iterate a JSONL source for a resumable parser and keep its cursor honest.

    The parser mutates :attr:`state` while it handles lines and calls
    :meth:`produced` when a line gave at least one record. On exit the
    cursor holds the resume point, the state and the unit count as of the
    last complete line (plus the units of a decodable torn tail, which is
    re-read next time and therefore not committed).

    A parser that must see later lines before it can decide what an earlier
    one gives (Codex pairs a typed text with its twin at the end of a turn)
    calls :meth:`hold` on the first such line and :meth:`release` once it
    has yielded everything decided: while a hold is open, nothing from the
    held line on is committed, so a resume re-reads those lines (the index
    drops the records at or past the resume point) and decides again with
    what has been appended since.
    """

    def __init__(
        self,
        ref: SourceRef,
        cursor: ParseCursor,
        diagnostics: Diagnostics,
        initial: dict[str, Any],
    ) -> None:
        self.ref = ref
        self.cursor = cursor
        self.diagnostics = diagnostics
        if cursor.offset > 0:
            self.state = copy_state(initial)
            self.state.update(copy_state(cursor.state))
            self.units = int(self.state.get("units", 0))
            self.start_offset, self.start_line = cursor.offset, cursor.line
        else:  # a full parse ignores whatever state the cursor carried
            self.state = copy_state(initial)
            self.units = 0
            self.start_offset = self.start_line = 0
        self._line_units = 0
        self._committed: dict[str, Any] | None = None
        self._line: JsonlLine | None = None
        self._done = False
        #: (state, offset, line) to resume from while a hold is open.
        self._held: tuple[dict[str, Any], int, int] | None = None

    def produced(self) -> None:
        """The current line produced a record (counted once per line)."""
        if not self._line_units:
            self._line_units = 1
            self.units += 1

    def produced_earlier(self, lines: int) -> None:
        """``lines`` held lines (not the current one) produced records now (also after
        :meth:`lines` ended, when the parser decides what is still held at the end)."""
        self.units += lines
        if self._done:
            self.cursor.units = self.units

    def hold(self) -> None:
        """Commit nothing from the current line on (before the parser touches the state)."""
        if self._held is None and self._line is not None:
            state = copy_state(self.state)
            state["units"] = self.units
            self._held = (state, self._line.offset, self._line.lineno - 1)

    def release(self) -> None:
        """Everything read so far is decided: commit normally again."""
        self._held = None

    def lines(self) -> Iterator[tuple[JsonlLine, dict[str, Any]]]:
        """Yield each decodable JSON object line; non-objects get a diagnostic."""
        reader: JsonlReader | None = None
        try:
            reader = JsonlReader(
                self.ref.path,
                self.diagnostics,
                start_offset=self.start_offset,
                start_line=self.start_line,
            )
            for line in reader:
                self._line_units = 0
                self._line = line
                if not line.complete:
                    # A torn tail: snapshot what is committed before touching it.
                    self.state["units"] = self.units
                    self._committed = copy_state(self.state)
                if not isinstance(line.value, dict):
                    self.diagnostics.add(self.ref.path, f"line:{line.lineno}", "not an object")
                    continue
                yield line, line.value
        except OSError as exc:
            self.diagnostics.add(self.ref.path, "", f"unreadable: {exc.strerror or exc}")
        finally:
            self._done = True
            self.state["units"] = self.units
            committed = self._committed if self._committed is not None else self.state
            self.cursor.state = committed
            self.cursor.units = self.units
            if self._held is not None:  # re-read the held lines next time
                self.cursor.state = self._held[0]
                self.cursor.resume_offset, self.cursor.resume_line = self._held[1:]
            elif reader is not None:
                self.cursor.resume_offset = reader.resume_offset
                self.cursor.resume_line = reader.resume_line
            else:
                self.cursor.resume_offset = self.start_offset
                self.cursor.resume_line = self.start_line


def compact_json(value: Any) -> str:
    """One-line JSON for a tool input (keys kept in their recorded order)."""
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return str(value)


def clip(text: str, extra: dict[str, Any], limit: int = MAX_TOOL_TEXT) -> str:
    """Cut ``text`` at ``limit`` characters, flagging the cut in ``extra``."""
    if len(text) > limit:
        extra["truncated"] = len(text)
        return text[:limit]
    return text


def raw_objects(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Naively decode each line of a JSONL file; skip anything that is not an object.

    For ``count_raw`` only: stdlib ``json``, no offsets, no resume, never raises.
    """
    try:
        guard(path)
        handle = open(path, "rb")  # noqa: SIM115 - closed in finally, generator-friendly
    except OSError:
        return
    try:
        while True:
            try:
                raw = handle.readline(MAX_LINE_BYTES + 1)
            except OSError:
                return
            if not raw:
                return
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):
                    raw = handle.readline(1 << 20)
                continue
            try:
                value = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                continue
            if isinstance(value, dict):
                yield value
    finally:
        handle.close()
