"""Kimi CLI's small stores: session titles and the shell's prompt recall list.

Titles (``kimi-cli.state_json.v1``): ``<session>/state.json`` keeps
``custom_title`` (set by ``/title``, or generated after the first turn;
``session_state.py``); older sessions kept ``title`` in ``metadata.json``
(migrated into ``state.json`` when Kimi opens them). No records: a title
fills ``cursor.titles``; a *unit* is a title found. ``Untitled`` is none.

Prompt recall (``kimi-cli.user_history_jsonl.v1``): ``user-history/<md5(work
dir)>.jsonl``, one ``{"content": ...}`` per line, appended by the shell
(``ui/shell/prompt.py``; a repeat of the last entry is not written; commands
are kept), no times: one ``user``/``prompt`` per line of the work dir's
prompt log (conversation ``kimi-input:<work dir>``), at the file's time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from agentdex.parsers._agent_common import file_mtime, make_record, str_of
from agentdex.parsers._jsonl import LineStream, raw_objects
from agentdex.parsers.base import ParseCursor, RoleCounts, SourceRef, prompts_by_session
from agentdex.parsers.kimi_cli._common import session_place, work_dir
from agentdex.readers import Diagnostics, read_json
from agentdex.records import Record


def _title(path: Path, value: object) -> str | None:
    if not isinstance(value, dict):
        return None
    key = "custom_title" if path.name == "state.json" else "title"
    title = " ".join(str_of(value.get(key)).split())
    return title if title and title != "Untitled" else None


def parse_state(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    path = Path(ref.path)
    session, _, _ = session_place(path)
    title = _title(path, read_json(path, diag))
    cursor.units = 0
    if title is not None:
        cursor.units = 1
        cursor.titles[session] = title
    yield from ()


def count_state(path: Path) -> int:
    try:
        return int(_title(path, json.loads(path.read_text(encoding="utf-8"))) is not None)
    except (OSError, ValueError):
        return 0


def _log_session(ref_root: Path, path: Path) -> tuple[str, str | None]:
    cwd = work_dir(ref_root, path.stem)
    return f"kimi-input:{cwd or path.stem}", cwd


def parse_user_history(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    path = Path(ref.path)
    session, cwd = _log_session(Path(ref.root), path)
    stamp = file_mtime(path)
    stream = LineStream(ref, cursor, diag, {})
    for line, entry in stream.lines():
        text = str_of(entry.get("content")).strip()
        if not text:
            continue
        stream.produced()
        yield make_record(
            ref,
            f"line:{line.lineno}",
            session,
            "user",
            "prompt",
            text,
            timestamp=stamp,
            cwd=cwd,
            offset=line.offset,
        )


def count_user_history(path: Path) -> int:
    return sum(1 for obj in raw_objects(path) if str_of(obj.get("content")).strip())


def count_user_history_roles(path: Path) -> RoleCounts:
    session = f"kimi-input:{work_dir(path.parent.parent, path.stem) or path.stem}"
    return prompts_by_session((session, obj.get("content")) for obj in raw_objects(path))
