"""Claude Code: project transcripts, subagent transcripts and ``history.jsonl``.

Transcripts (``claude-code.transcript_jsonl.v1``)
    ``projects/<slug>/<session>.jsonl``, one JSON object per line. Eras
    handled: v1.0.x (inline subagents as ``isSidechain: true`` lines,
    leading ``summary`` lines without a ``sessionId``, resumed sessions whose
    file mixes two ``sessionId``s), v2.x (``<session>/subagents/agent-<id>.jsonl``
    files whose lines carry the *parent* ``sessionId`` and an ``agentId``; the
    older flat ``projects/<slug>/agent-<id>.jsonl`` likewise), and v2.1's many
    bookkeeping line types, which are skipped silently.

    Per line (``locator`` ``line:N``, ``offset`` = byte offset of the line;
    a line giving several records numbers them in ``extra["part"]`` and
    locates the further ones ``line:N#1``, ``line:N#2``; a subagent file,
    which shares its parent's session, prefixes its name:
    ``agent-<id>.jsonl:line:N``):

    * ``user`` line: its text (a string, or all ``text`` blocks joined) is
      one record. It is ``user``/``prompt`` (a person typed it) unless it is
      ``isCompactSummary`` (``system``/``summary``), ``isMeta`` or wrapped
      harness output such as ``<local-command-stdout>``/``<system-reminder>``
      (``system``/``message``), a slash command ``<command-name>``/``<bash-input>``
      (``user``/``message``), or on a sidechain, i.e. a task written by the
      parent agent (``user``/``message``). Each ``tool_result`` block is a
      ``tool``/``tool_result`` record, so a line of only tool results is
      never a prompt. Images are not text and give nothing.
    * ``assistant`` line: ``text`` -> ``message``, ``thinking`` ->
      ``reasoning``, ``tool_use`` -> ``tool_call`` (tool name + compact JSON
      input), in block order.
    * ``summary`` line: a ``system``/``summary`` record and a title candidate.
    * ``ai-title``/``custom-title``/``summary``: ``cursor.titles[session]``,
      ``custom-title`` beating ``ai-title`` beating ``summary``; later lines
      of the same rank win.

    **Usage** (``cursor.usage``): one per API message, named by
    ``message.id`` (else ``requestId``, else the line's ``uuid``). Claude Code
    writes a message once per content block, each line repeating the input and
    cache counts while ``output_tokens`` grows, so the message's last line in
    the file gives its counts (``input_tokens`` -> input,
    ``cache_read_input_tokens`` -> cache read, ``cache_creation_input_tokens``
    -> cache write, its ``cache_creation.ephemeral_1h_input_tokens`` part ->
    ``cache_write_1h_tokens``, ``output_tokens`` -> output, thinking included;
    no reasoning split is recorded) and its first line the time. Lines of model
    ``<synthetic>`` (written by Claude Code, not by a model) carry no usage.

    ``cwd`` comes from each line's ``cwd`` (it changes mid-session; the slug
    is never decoded, so ``cwd`` stays None when no line has one), the branch
    from ``gitBranch``, the model from ``message.model``. The session is the
    line's ``sessionId``, else the last one seen, else the parent directory
    of a ``subagents/`` file, else the file stem. Sidechain records carry
    ``extra["sidechain"]`` and ``extra["agent_id"]`` when known.

    **Unit** (``cursor.units`` and ``count_raw``): one line that gives at
    least one record, i.e. a ``user``/``assistant`` line whose
    ``message.content`` is a non-blank string or holds a non-blank ``text``
    or ``thinking`` block, a ``tool_use`` or a ``tool_result`` block; or a
    ``summary`` line with a non-blank ``summary``. **Roles**
    (``count_roles``, :mod:`agentdex.parsers._claude_counts`): per session,
    user lines whose text a person typed, and assistant text blocks.

History (``claude-code.history_jsonl.v1``)
    ``history.jsonl``: ``{display, pastedContents, timestamp (ms), project,
    sessionId}``, one ``user``/``prompt`` record per line (its roles: one
    prompt per line, by ``sessionId``), located ``history.jsonl:line:N``
    (the session's transcript has lines of its own); ``cwd`` is
    ``project``. ``[Pasted text #N ...]`` placeholders expand from
    ``pastedContents[N].content`` or, when only a ``contentHash`` was kept,
    from ``paste-cache/<hash>.txt`` beside ``history.jsonl``; a placeholder
    that cannot be expanded stays as written (with a diagnostic). A line
    without ``sessionId`` (old versions) gets session ``unknown``.
    **Unit**: a line with a non-blank ``display`` string.

Both parsers are resumable; ``cursor.state`` keeps the last session, cwd,
branch and the rank of each session's title.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._claude_counts import (
    COMMAND_WRAPPERS,
    SYSTEM_WRAPPERS,
    count_history_roles,
    count_transcript_roles,
)
from agentdex.parsers._jsonl import LineStream, clip, compact_json, raw_objects
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import Line, ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics, guard
from agentdex.records import MAX_CALL_TOKENS, Kind, Record, Role, Usage, parse_timestamp

#: the one type a count read fast is (:func:`_counts`)
_INTS = frozenset({int})

#: Title line types, by strength: a title the user set beats one the model wrote.
TITLE_RANK = {"summary": 1, "ai-title": 2, "custom-title": 3}
#: Line types Claude Code writes that hold nothing to index (harness events, UI state,
#: snapshots; titles are read above); any other type is reported as format drift.
SKIPPED_TYPES = frozenset(
    {"system", "attachment", "file-history-snapshot", "queue-operation", "last-prompt", "mode",
     "permission-mode", "ai-title", "custom-title", "agent-name", "pr-link", "progress"}
)  # fmt: skip
_TITLE_FIELD = {"summary": "summary", "ai-title": "aiTitle", "custom-title": "customTitle"}

#: Largest paste-cache file read to expand a placeholder.
MAX_PASTE_BYTES = 8 * 1024 * 1024
_PASTED = re.compile(r"\[Pasted text #(\d+)(?: \+\d+ lines?)?\]")
_HASH = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


# --------------------------------------------------------------------------- transcripts


def _subagent_of(path: Path) -> tuple[str | None, str | None]:
    """(parent session, agent id) implied by a subagent file's path."""
    stem = path.stem
    agent = stem[len("agent-") :] if stem.startswith("agent-") else None
    if path.parent.name == "subagents":
        return path.parent.parent.name, agent
    return None, agent


def _user_text_kind(obj: dict[str, Any], text: str, sidechain: bool) -> tuple[Role, Kind]:
    if obj.get("isCompactSummary"):
        return "system", "summary"
    head = text.lstrip()
    if obj.get("isMeta") or head.startswith(SYSTEM_WRAPPERS):
        return "system", "message"
    if head.startswith(COMMAND_WRAPPERS) or sidechain:
        return "user", "message"
    return "user", "prompt"


def _tool_result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        return "\n".join(parts)
    return "" if content is None else compact_json(content)


Item = tuple[Role, Kind, str, dict[str, Any]]


def _line_items(obj: dict[str, Any], sidechain: bool) -> list[Item]:
    """The (role, kind, text, extra) items a user/assistant line holds, in order."""
    message = obj.get("message")
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    items: list[Item] = []
    if obj.get("type") == "user":
        texts: list[str] = []
        results: list[Item] = []
        blocks = [content] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            if isinstance(block, str):  # a bare string stands for a text block
                block = {"type": "text", "text": block}
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                texts.append(block["text"])
            elif btype == "tool_result":
                extra: dict[str, Any] = {"tool_use_id": block.get("tool_use_id")}
                if block.get("is_error"):
                    extra["is_error"] = True
                text = clip(_tool_result_text(block.get("content")), extra)
                results.append(("tool", "tool_result", text, extra))
        if texts:
            joined = "\n\n".join(texts)
            role, kind = _user_text_kind(obj, joined, sidechain)
            items.append((role, kind, joined, {}))
        items.extend(results)
        return items
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            items.append(("assistant", "message", block["text"], {}))
        elif btype == "thinking":
            thought = block.get("thinking") or block.get("text")
            if isinstance(thought, str) and thought.strip():
                items.append(("assistant", "reasoning", thought, {}))
        elif btype in ("tool_use", "server_tool_use"):
            extra = {"tool": block.get("name"), "tool_use_id": block.get("id")}
            text = clip(f"{block.get('name') or 'tool'} {compact_json(block.get('input'))}", extra)
            items.append(("assistant", "tool_call", text, extra))
    if isinstance(content, str) and content.strip():
        items.append(("assistant", "message", content, {}))
    return items


def _note_title(
    stream: LineStream, cursor: ParseCursor, session: str, ltype: str, title: Any
) -> None:
    if not isinstance(title, str) or not title.strip():
        return
    ranks: dict[str, int] = stream.state.setdefault("title_rank", {})
    rank = TITLE_RANK[ltype]
    if rank >= ranks.get(session, 0):
        ranks[session] = rank
        cursor.titles[session] = title.strip()


_CLAUDE_REQUIRED = ("input_tokens", "output_tokens")
_CLAUDE_OPTIONAL = ("cache_read_input_tokens", "cache_creation_input_tokens")


def _counts(raw: Any) -> tuple[int, ...] | str:
    """``read_counts`` of a Claude usage object as (input, output, cache read, cache
    creation), or why it is bad: most are a dict of in-range ints, read without the
    general path's calls (once per assistant line of every build)."""
    if type(raw) is dict:
        get = raw.get
        read, created = get("cache_read_input_tokens"), get("cache_creation_input_tokens")
        counts: tuple[Any, ...] = (
            get("input_tokens"),
            get("output_tokens"),
            0 if read is None else read,  # optional: absent or null is 0
            0 if created is None else created,
        )
        if (
            _INTS.issuperset(map(type, counts))
            and min(counts) >= 0
            and max(counts) <= MAX_CALL_TOKENS
        ):
            return counts
    found = read_counts(raw, _CLAUDE_REQUIRED, _CLAUDE_OPTIONAL)
    if isinstance(found, str):
        return found
    return tuple(found[name] for name in (*_CLAUDE_REQUIRED, *_CLAUDE_OPTIONAL))


def _call_id(obj: dict[str, Any], message: dict[str, Any]) -> str | None:
    for value in (message.get("id"), obj.get("requestId"), obj.get("uuid")):
        if isinstance(value, str) and value:
            return value
    return None


def _note_usage(
    calls: dict[str, Usage],
    obj: dict[str, Any],
    message: dict[str, Any],
    where: tuple[SourceRef, str, int, str, str],
    cursor: ParseCursor,
    diag: Diagnostics,
    timestamp: float | None,
) -> Usage | None:
    """The assistant line's usage as its message's (a later line of it replaces the counts)."""
    raw = message.get("usage")
    model = message.get("model")
    if raw is None or model == "<synthetic>":
        return None
    ref, locator, offset, session, source = where
    counts = _counts(raw)
    one_hour: Any = 0
    if isinstance(raw, dict) and isinstance(raw.get("cache_creation"), dict):
        one_hour = raw["cache_creation"].get("ephemeral_1h_input_tokens") or 0
    if isinstance(counts, str):
        cursor.skip_usage(diag, ref.path, locator, counts)
        return None
    call = _call_id(obj, message)
    if call is None:
        cursor.skip_usage(diag, ref.path, locator, "no message id")
        return None
    # positional, in the field order (a keyword call costs ~2.5x as much, per model call)
    usage = Usage(
        ref.agent, ref.store, source, locator, session, call, counts[0], counts[2], counts[3],
        counts[1], 0, one_hour, timestamp, model if isinstance(model, str) else None, None,
        None, None, None, ref.host, offset,
    )  # fmt: skip
    earlier = calls.get(call)
    if earlier is not None:
        usage.timestamp = earlier.timestamp if earlier.timestamp is not None else usage.timestamp
        usage.session_id = earlier.session_id
    calls[call] = usage
    return usage


def transcript_lines(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Line]:
    """What each line of one transcript (main session or subagent file) gives, as a
    :data:`Line` (:func:`parse_transcript` makes the records of them)."""
    parent, file_agent = _subagent_of(ref.path)
    default_session = parent or ref.path.stem
    # A subagent file shares its parent's session: its locators name the file.
    qualifier = f"{ref.path.name}:" if parent is not None or file_agent is not None else ""
    stream = LineStream(
        ref, cursor, diag, {"session": None, "cwd": None, "branch": None, "title_rank": {}}
    )
    state = stream.state
    source = os.fspath(ref.path)
    calls: dict[str, Usage] = {}
    subagent = parent is not None or file_agent is not None
    for line, obj in stream.lines():
        get = obj.get
        value = get("cwd")
        if value and isinstance(value, str):
            state["cwd"] = value
        value = get("gitBranch")
        if value and isinstance(value, str):
            state["branch"] = value
        value = get("sessionId")
        if value and isinstance(value, str):
            state["session"] = value
        session = state["session"] or default_session
        ltype = get("type")
        if ltype in TITLE_RANK:
            _note_title(stream, cursor, session, ltype, obj.get(_TITLE_FIELD[ltype]))
        if ltype == "summary":
            summary = obj.get("summary")
            items: list[Item] = (
                [("system", "summary", summary, {})]
                if isinstance(summary, str) and summary.strip()
                else []
            )
        elif ltype in ("user", "assistant"):
            if not isinstance(obj.get("message"), dict):
                diag.add(ref.path, f"line:{line.lineno}", f"{ltype} line without a message object")
                continue
            sidechain = bool(get("isSidechain")) or subagent
            items = _line_items(obj, sidechain)
            if ltype == "assistant":
                where = (ref, f"{qualifier}line:{line.lineno}", line.offset, session, source)
                timestamp = parse_timestamp(get("timestamp"))
                usage = _note_usage(calls, obj, obj["message"], where, cursor, diag, timestamp)
                if usage is not None:
                    usage.cwd, usage.branch = state["cwd"], state["branch"]
        else:
            if ltype not in SKIPPED_TYPES:  # format drift: a line type this parser does not know
                diag.unrecognised(
                    "record type", ltype, version=obj.get("version"), path=ref.path,
                    locator=f"line:{line.lineno}",
                )  # fmt: skip
            continue
        if not items:
            continue
        stream.produced()
        message = get("message")
        model = message.get("model") if isinstance(message, dict) else None
        if not isinstance(model, str):
            model = None
        if ltype != "assistant":  # (an assistant line's was read for its usage)
            timestamp = parse_timestamp(get("timestamp"))
        shared: dict[str, Any] = _NO_EXTRA
        if subagent or get("isSidechain"):
            shared = {"sidechain": True}
            agent_id = get("agentId") or file_agent
            if agent_id:
                shared["agent_id"] = agent_id
        yield (
            qualifier, line.lineno, line.offset, session, timestamp, model, state["cwd"],
            state["branch"], items, shared,
        )  # fmt: skip
    for usage in calls.values():
        cursor.add_usage(usage, diag)


#: the shared extras of a line that has none (never changed: each record copies it)
_NO_EXTRA: dict[str, Any] = {}


def parse_transcript(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Stream the records of one transcript (main session or subagent file)."""
    source = os.fspath(ref.path)
    agent, store, host = ref.agent, ref.store, ref.host
    lines = transcript_lines(ref, cursor, diag)
    for prefix, lineno, offset, session, timestamp, model, cwd, branch, items, shared in lines:
        locator = f"{prefix}line:{lineno}"
        many = len(items) > 1
        for part, (role, kind, text, extra) in enumerate(items):
            if not extra:
                record_extra = dict(shared)
            elif None in extra.values():
                record_extra = {**shared, **{k: v for k, v in extra.items() if v is not None}}
            else:  # (most: a comprehension is a call per record)
                record_extra = {**shared, **extra}
            if many:
                record_extra["part"] = part
            # positional, in the field order (``Record``'s keyword call costs ~2.5x as much)
            yield Record(
                agent, store, source, f"{locator}#{part}" if part else locator, session,
                role, kind, text, timestamp, model, cwd, None, branch, None, host, offset,
                record_extra,
            )  # fmt: skip


def count_transcript(path: Path) -> int:
    """Independent unit count: see the module docstring's *Unit*."""
    count = 0
    for obj in raw_objects(path):
        kind = obj.get("type")
        if kind == "summary":
            count += isinstance(obj.get("summary"), str) and bool(obj["summary"].strip())
            continue
        if kind not in ("user", "assistant") or not isinstance(obj.get("message"), dict):
            continue
        content = obj["message"].get("content")
        if isinstance(content, str):
            count += bool(content.strip())
            continue
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, str) and kind == "user":
                block = {"type": "text", "text": block}
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            user_tool = kind == "user" and btype == "tool_result"
            assistant_tool = kind == "assistant" and btype in ("tool_use", "server_tool_use")
            body = block.get("text")
            if kind == "assistant" and btype == "thinking":
                body = block.get("thinking") or block.get("text")
            wordy = btype == "text" or (kind == "assistant" and btype == "thinking")
            if user_tool or assistant_tool or (wordy and isinstance(body, str) and body.strip()):
                count += 1
                break
    return count


# --------------------------------------------------------------------------- history.jsonl


def _read_paste(history: Path, digest: Any, diag: Diagnostics, where: str) -> str | None:
    if not isinstance(digest, str) or not _HASH.match(digest):
        return None
    path = history.parent / "paste-cache" / f"{digest}.txt"
    try:
        guard(path)
        with open(path, "rb") as handle:
            data = handle.read(MAX_PASTE_BYTES + 1)
    except OSError:
        diag.add(history, where, f"paste-cache/{digest}.txt missing or unreadable")
        return None
    if len(data) > MAX_PASTE_BYTES:
        diag.add(history, where, f"paste-cache/{digest}.txt too large; cut")
        data = data[:MAX_PASTE_BYTES]
    return data.decode("utf-8", "replace")


def expand_pasted(
    display: str, pasted: Any, history: Path, diag: Diagnostics, where: str = ""
) -> str:
    """Replace ``[Pasted text #N ...]`` with the pasted text it stands for.

    >>> expand_pasted("Fix [Pasted text #1 +2 lines]", {"1": {"content": "a\\nb\\nc"}},
    ...               Path("/nowhere/history.jsonl"), Diagnostics())
    'Fix a\\nb\\nc'
    """
    entries = pasted if isinstance(pasted, dict) else {}

    def replace(match: re.Match[str]) -> str:
        entry = entries.get(match.group(1))
        if isinstance(entry, dict):
            content = entry.get("content")
            if isinstance(content, str):
                return content
            cached = _read_paste(history, entry.get("contentHash"), diag, where)
            if cached is not None:
                return cached
        else:
            diag.add(history, where, f"pasted text #{match.group(1)} not recorded")
        return match.group(0)

    return _PASTED.sub(replace, display)


def parse_history(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """One ``user``/``prompt`` record per prompt in ``history.jsonl``."""
    stream = LineStream(ref, cursor, diag, {})
    source = os.fspath(ref.path)
    for line, obj in stream.lines():
        display = obj.get("display")
        if not isinstance(display, str) or not display.strip():
            continue
        where = f"line:{line.lineno}"
        text = expand_pasted(display, obj.get("pastedContents"), ref.path, diag, where)
        project = obj.get("project")
        session = obj.get("sessionId")
        stream.produced()
        yield Record(
            agent=ref.agent,
            store=ref.store,
            source_path=source,
            locator=f"{ref.path.name}:{where}",
            session_id=session if isinstance(session, str) and session else "unknown",
            role="user",
            kind="prompt",
            text=text,
            timestamp=parse_timestamp(obj.get("timestamp")),
            cwd=project if isinstance(project, str) and project else None,
            host=ref.host,
            offset=line.offset,
        )


def count_history(path: Path) -> int:
    """Independent unit count: lines with a non-blank ``display`` string."""
    return sum(
        1
        for obj in raw_objects(path)
        if isinstance(obj.get("display"), str) and obj["display"].strip()
    )


PARSERS: tuple[ParserSpec, ...] = (
    ParserSpec(
        id="claude-code.transcript_jsonl.v1",
        parse=parse_transcript,
        lines=transcript_lines,
        resumable=True,
        count_raw=count_transcript,
        count_roles=count_transcript_roles,
    ),
    ParserSpec(
        id="claude-code.history_jsonl.v1",
        parse=parse_history,
        resumable=True,
        count_raw=count_history,
        count_roles=count_history_roles,
    ),
)
