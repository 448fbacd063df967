"""Cursor CLI (``cursor-agent``).

- ``~/.cursor/projects/<slug>/agent-transcripts/<uuid>/<uuid>.jsonl`` (and
  ``.../subagents/*.jsonl``): ``{role, message: {content: [text|tool_use]}}``
  lines with no timestamps (the file's mtime stands in). User text is
  wrapped in ``<user_query>``. ``<slug>`` is the cwd with ``/`` as ``-``
  (lossy): it is resolved against the disk when that is unambiguous.
- ``~/.config/cursor/prompt_history.json``: a JSON array of prompt strings.

A content block type other than text/tool_use/tool_result, or a role other
than user/assistant, is format drift (the transcripts record no version).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from agentdex.parsers._agent_common import (
    as_text,
    clip,
    dict_of,
    file_mtime,
    make_record,
    number_parts,
    strip_tags,
    tool_call_text,
    typed_prompts,
)
from agentdex.parsers._jsonl import raw_objects
from agentdex.parsers.base import (
    ParseCursor,
    ParserSpec,
    RoleCounts,
    SourceRef,
    add_role,
    prompts_by_session,
)
from agentdex.readers import Diagnostics, JsonlReader, read_json
from agentdex.records import Record

_BLOCK_TYPES = (None, "text", "output_text", "tool_use", "tool_result")
_ROLES = ("user", "assistant")


@lru_cache(maxsize=256)
def decode_slug(slug: str) -> str | None:
    """The existing directory a ``home-me-src-my-app`` slug names, or None.

    Walks from ``/``, at each level taking the longest dash-joined run of
    segments that exists as a directory (``my-app`` before ``my``).
    """
    parts = [p for p in slug.split("-") if p]
    current = Path("/")
    i = 0
    while i < len(parts):
        for j in range(len(parts), i, -1):
            candidate = current / "-".join(parts[i:j])
            if candidate.is_dir():
                current, i = candidate, j
                break
        else:
            return None
    return str(current) if i and str(current) != "/" else None


def _session_of(path: Path) -> tuple[str, Path | None]:
    parts = path.parts
    if "agent-transcripts" in parts:
        idx = len(parts) - 1 - parts[::-1].index("agent-transcripts")
        slug_dir = Path(*parts[:idx])
        session = parts[idx + 1] if idx + 2 < len(parts) else path.stem
        return session, slug_dir
    return path.stem, None


def parse_transcript(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    sid, slug_dir = _session_of(path)
    cwd = decode_slug(slug_dir.name) if slug_dir is not None else None
    mtime = file_mtime(path)
    reader = JsonlReader(path, diagnostics, start_offset=cursor.offset, start_line=cursor.line)
    for line in reader:
        entry = line.value
        if not isinstance(entry, dict):
            continue
        role = entry.get("role")
        message = dict_of(entry.get("message"))
        content = message.get("content", entry.get("content"))
        blocks = content if isinstance(content, list) else [content]
        loc = f"line:{line.lineno}"
        extra = {"project_slug": slug_dir.name} if slug_dir is not None and not cwd else {}
        common = {"timestamp": mtime, "cwd": cwd, "offset": line.offset}
        records: list[Record] = []
        if role not in _ROLES:
            diagnostics.unrecognised("message role", role, path=ref.path, locator=loc)
        for block in blocks:
            if isinstance(block, dict) and block.get("type") not in _BLOCK_TYPES:
                diagnostics.unrecognised("content block", block.get("type"), path=ref.path,
                                         locator=loc)  # fmt: skip
            if isinstance(block, dict) and block.get("type") == "tool_use":
                records.append(
                    make_record(
                        ref,
                        loc,
                        sid,
                        "assistant",
                        "tool_call",
                        tool_call_text(block.get("name"), block.get("input")),
                        extra=extra,
                        **common,
                    )
                )
                continue
            if isinstance(block, dict) and block.get("type") == "tool_result":
                text = as_text(block.get("content")).strip()
                if text:
                    records.append(
                        make_record(
                            ref, loc, sid, "tool", "tool_result", clip(text), extra=extra, **common
                        )
                    )
                continue
            text = as_text([block]).strip()
            if not text:
                continue
            if role == "user":
                text = strip_tags(text, drop=(), unwrap=("user_query",))
                if text:
                    records.append(
                        make_record(ref, loc, sid, "user", "prompt", text, extra=extra, **common)
                    )
            elif role == "assistant":
                records.append(
                    make_record(ref, loc, sid, "assistant", "message", text, extra=extra, **common)
                )
        if records:
            cursor.units += 1
            yield from number_parts(records)
    cursor.resume_offset, cursor.resume_line = reader.resume_offset, reader.resume_line


def count_transcript(path: Path) -> int:
    """Lines of role user/assistant with at least one non-empty text or tool block."""
    count = 0
    for entry in raw_objects(path):
        if not isinstance(entry, dict) or entry.get("role") not in ("user", "assistant"):
            continue
        message = entry.get("message")
        body = message if isinstance(message, dict) else {}  # random JSON: `message: true`
        content = body.get("content", entry.get("content"))
        blocks = content if isinstance(content, list) else [content]
        if any(
            (isinstance(b, str) and b.strip())
            or (
                isinstance(b, dict)
                and (b.get("type") == "tool_use" or str(b.get("text") or "").strip())
            )
            for b in blocks
        ):
            count += 1
    return count


def count_transcript_roles(path: Path) -> RoleCounts:
    """Text blocks of user lines (prompts) and of assistant lines (replies)."""
    counts: RoleCounts = {}
    session = _session_of(path)[0]
    for entry in raw_objects(path):
        role = {"user": "prompts", "assistant": "replies"}.get(str(entry.get("role")))
        message = entry.get("message")
        content = (message if isinstance(message, dict) else {}).get(
            "content", entry.get("content")
        )
        for block in content if isinstance(content, list) else [content]:
            text = block if isinstance(block, str) else None
            if isinstance(block, dict) and block.get("type") in (None, "text", "output_text"):
                text = block.get("text") if isinstance(block.get("text"), str) else None
            if (
                role
                and text
                and text.replace("<user_query>", "").replace("</user_query>", "").strip()
            ):
                add_role(counts, session, role)
    return counts


def parse_prompt_history(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    data = read_json(ref.path, diagnostics)
    if data is None:
        return
    if not isinstance(data, list):
        diagnostics.add(ref.path, "", "prompt history is not a JSON array; skipped")
        return
    yield from typed_prompts(ref, cursor, data, "", "cursor-cli.prompt_history")


def count_prompt_history(path: Path) -> int:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return 0
    return sum(1 for s in data if isinstance(s, str) and s.strip()) if isinstance(data, list) else 0


def count_prompt_history_roles(path: Path) -> RoleCounts:
    """Each non-blank string of the list is a prompt."""
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    items = data if isinstance(data, list) else []
    return prompts_by_session(("cursor-cli.prompt_history", item) for item in items)


PARSERS = (
    ParserSpec(
        "cursor-cli.transcript_jsonl.v1",
        parse_transcript,
        resumable=True,
        count_raw=count_transcript,
        count_roles=count_transcript_roles,
    ),
    ParserSpec(
        "cursor-cli.prompt_history_json.v1",
        parse_prompt_history,
        count_raw=count_prompt_history,
        count_roles=count_prompt_history_roles,
    ),
)
