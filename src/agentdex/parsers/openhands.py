"""OpenHands CLI (OpenHands/OpenHands-CLI on the software-agent-sdk).

Conversation events (``openhands.event_json.v1``)
    ``<conversations>/<conversation id>/events/event-<NNNNN>-<event id>.json``,
    one event per file, written once (sdk ``conversation/event_store.py``,
    ``persistence_const.py``). ``kind`` names the event class; ``timestamp`` is
    ``datetime.now().isoformat()``: local time without a zone, read in this
    machine's zone. Records (``locator`` ``<event file name>:json:/<field>``):

    * ``MessageEvent`` from ``user``: the ``llm_message`` text -> ``user``/
      ``prompt``, unless another agent sent it (``sender``: ``user``/
      ``message``), it is the follow-up the CLI's critic sends when it judges
      the task unfinished (``The task appears incomplete (iteration …``:
      ``user``/``message``; nothing but its text marks it) or a resume
      transcript the SDK replays (``<<RESUMED CONVERSATION>>``:
      ``system``/``message``); its
      ``extended_content`` (skills the SDK added) -> ``system``/``message``.
      From ``agent``: text -> ``assistant``/``message``, ``reasoning_content``
      (else the thinking blocks) -> ``reasoning``. From a hook or the
      environment -> ``system``/``message``.
    * ``ActionEvent``: reasoning as above, ``thought`` (the text the model wrote
      with its tool call) -> ``assistant``/``message``, ``tool_call`` ->
      ``tool_call``. ``ObservationEvent`` -> ``tool``/``tool_result``.
      ``UserRejectObservation``: a reason the person typed -> prompt, the
      default reason or a hook's -> ``tool_result``. ``AgentErrorEvent`` ->
      ``system``/``message``; ``Condensation``/``CondensationSummaryEvent``
      summaries -> ``system``/``summary``.
    * The system prompt, pauses, state updates, token and completion logs,
      hook runs and streaming deltas give nothing; an unknown ``kind`` is
      reported as format drift.

    cwd: ``workspace.working_dir`` of the conversation's ``base_state.json``
    (only that field, and the usage below, are read from it). **Unit**: an
    event file that gives a record. **Roles**: prompts and replies as above.

Usage (``openhands.base_state_json.v1``)
    ``base_state.json`` ``stats.usage_to_metrics.<llm>.token_usages[]``: one
    entry per model response (``response_id``); ``prompt_tokens`` include
    the cached ones (LiteLLM's convention), so fresh input is what remains
    after ``cache_read_tokens`` and ``cache_write_tokens``. No records.

Prompt history (``openhands.prompt_history_json.v1``)
    ``<persistence>/projects/<sha256(realpath of the work dir)>/prompt_history.json``:
    ``[{text, timestamp}]``, the last 100 prompts (``stores/prompt_history.py``).
    The work dir is found back by hashing the conversations' work dirs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    as_text,
    clip,
    dict_of,
    json_or_text,
    make_record,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import (
    ParseCursor,
    ParserSpec,
    RoleCounts,
    SourceRef,
    prompts_by_session,
)
from agentdex.readers import Diagnostics, read_json
from agentdex.records import Kind, Record, Role, Usage

RESUMED = "<<RESUMED CONVERSATION>>"
#: The follow-up the CLI's critic sends as a user message (tui/utils/critic/refinement.py).
REFINEMENT = re.compile(r"\AThe task appears incomplete \(iteration \d+/\d+, predicted success")
DEFAULT_REJECTION = "User rejected the action"
#: Event kinds that hold nothing to index.
SILENT = frozenset(
    {
        "SystemPromptEvent",
        "PauseEvent",
        "InterruptEvent",
        "ConversationStateUpdateEvent",
        "CondensationRequest",
        "TokenEvent",
        "LLMCompletionLogEvent",
        "HookExecutionEvent",
        "StreamingDeltaEvent",
        "ConversationErrorEvent",
        "ACPToolCallEvent",
    }
)
Item = tuple[Role, Kind, str, str, dict[str, Any]]  # role, kind, text, pointer, extra


def local_time(value: object) -> float | None:
    """An ISO time; one without a zone is this machine's local time (the SDK's ``now()``)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def _texts(value: object) -> str:
    return as_text(value).strip()


@lru_cache(maxsize=64)
def _state(path: str, mtime: float) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def base_state(conversation: Path) -> dict[str, Any]:
    path = conversation / "base_state.json"
    try:
        return _state(str(path), path.stat().st_mtime)
    except OSError:
        return {}


def working_dir(conversation: Path) -> str | None:
    return opt_str(dict_of(base_state(conversation).get("workspace")).get("working_dir"))


def _reasoning(event: dict[str, Any]) -> str:
    text = str_of(event.get("reasoning_content")).strip()
    if text:
        return text
    blocks = event.get("thinking_blocks")
    thoughts = [str_of(dict_of(b).get("thinking")).strip() for b in blocks or []]
    return "\n".join(t for t in thoughts if t) if isinstance(blocks, list) else ""


def _message_items(event: dict[str, Any]) -> list[Item]:
    source, message = event.get("source"), dict_of(event.get("llm_message"))
    text = _texts(message.get("content"))
    items: list[Item] = []
    if source == "agent":
        if reasoning := _reasoning(message) or _reasoning(event):
            items.append(("assistant", "reasoning", reasoning, "/llm_message/reasoning", {}))
        if text:
            items.append(("assistant", "message", text, "/llm_message/content", {}))
        return items
    if text and source == "user":
        if text.startswith(RESUMED):
            items.append(("system", "message", text, "/llm_message/content", {"resumed": True}))
        elif opt_str(event.get("sender")):
            extra = {"sender": event["sender"]}
            items.append(("user", "message", text, "/llm_message/content", extra))
        elif REFINEMENT.match(text):
            extra = {"refinement": True}
            items.append(("user", "message", text, "/llm_message/content", extra))
        else:
            items.append(("user", "prompt", text, "/llm_message/content", {}))
    elif text:
        items.append(("system", "message", text, "/llm_message/content", {"source": source}))
    if extended := _texts(event.get("extended_content")):
        items.append(("system", "message", extended, "/extended_content", {"skills": True}))
    return items


def event_items(event: dict[str, Any]) -> list[Item] | None:
    """The records one event gives; None for a kind this parser does not know."""
    kind = event.get("kind")
    if kind == "MessageEvent":
        return _message_items(event)
    if kind == "ActionEvent":
        items: list[Item] = []
        if reasoning := _reasoning(event):
            items.append(("assistant", "reasoning", reasoning, "/reasoning_content", {}))
        if thought := _texts(event.get("thought")):
            items.append(("assistant", "message", thought, "/thought", {}))
        call = dict_of(event.get("tool_call"))
        args = json_or_text(call.get("arguments"))
        name = opt_str(event.get("tool_name")) or opt_str(call.get("name"))
        extra = {"call_id": opt_str(event.get("tool_call_id")), "summary": event.get("summary")}
        items.append(("assistant", "tool_call", tool_call_text(name, args), "/tool_call", extra))
        return items
    if kind == "ObservationEvent":
        observation = dict_of(event.get("observation"))
        text = _texts(observation.get("content"))
        extra = {"call_id": opt_str(event.get("tool_call_id")), "tool": event.get("tool_name")}
        if observation.get("is_error"):
            extra["is_error"] = True
        return [("tool", "tool_result", clip(text), "/observation", extra)] if text else []
    if kind == "UserRejectObservation":
        reason = str_of(event.get("rejection_reason")).strip()
        typed = event.get("rejection_source", "user") == "user" and reason != DEFAULT_REJECTION
        if not reason:
            return []
        if typed:
            return [("user", "prompt", reason, "/rejection_reason", {"rejected": True})]
        return [("tool", "tool_result", reason, "/rejection_reason", {"rejected": True})]
    if kind == "AgentErrorEvent":
        error = str_of(event.get("error")).strip()
        return [("system", "message", error, "/error", {"error": True})] if error else []
    if kind in ("Condensation", "CondensationSummaryEvent"):
        summary = str_of(event.get("summary")).strip()
        return [("system", "summary", summary, "/summary", {})] if summary else []
    if kind in SILENT:
        return []
    return None


def parse_event(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Records of one event file (read whole; event files never change)."""
    path = Path(ref.path)
    conversation = path.parent.parent
    cursor.units = 0
    event = read_json(path, diag)
    if not isinstance(event, dict):
        if event is not None:
            diag.add(path, "", "not a JSON object; skipped")
        return
    items = event_items(event)
    if items is None:
        diag.unrecognised("event kind", event.get("kind"), path=path, locator="json:/kind")
        return
    if not items:
        return
    cursor.units = 1
    stamp = local_time(event.get("timestamp"))
    cwd = working_dir(conversation)
    for role, kind, text, pointer, extra in items:
        yield make_record(
            ref,
            f"{path.name}:json:{pointer}",  # one file per event: the name makes it unique
            conversation.name,
            role,
            kind,
            text,
            timestamp=stamp,
            cwd=cwd,
            extra={k: v for k, v in extra.items() if v is not None},
        )


def _raw(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def count_event(path: Path) -> int:
    """1 when the event carries text the documented rules index (or is a tool call)."""
    event = _raw(path)
    kind = event.get("kind")
    if kind == "ActionEvent":
        return 1
    fields = {
        "ObservationEvent": lambda e: as_text(dict_of(e.get("observation")).get("content")),
        "UserRejectObservation": lambda e: str_of(e.get("rejection_reason")),
        "AgentErrorEvent": lambda e: str_of(e.get("error")),
        "Condensation": lambda e: str_of(e.get("summary")),
        "CondensationSummaryEvent": lambda e: str_of(e.get("summary")),
    }
    if kind in fields:
        return int(bool(fields[kind](event).strip()))
    if kind != "MessageEvent":
        return 0
    message = dict_of(event.get("llm_message"))
    pieces = [
        as_text(message.get("content")),
        as_text(event.get("extended_content")) if event.get("source") != "agent" else "",
        str_of(message.get("reasoning_content")) if event.get("source") == "agent" else "",
        str_of(event.get("reasoning_content")) if event.get("source") == "agent" else "",
    ]
    thinking = [message.get("thinking_blocks"), event.get("thinking_blocks")]
    has_thinking = event.get("source") == "agent" and any(
        isinstance(b, dict) and str_of(b.get("thinking")).strip()
        for blocks in thinking
        if isinstance(blocks, list)
        for b in blocks
    )
    return int(any(p.strip() for p in pieces) or has_thinking)


def count_event_roles(path: Path) -> RoleCounts:
    event = _raw(path)
    kind, source = event.get("kind"), event.get("source")
    text = as_text(dict_of(event.get("llm_message")).get("content")).strip()
    prompts = replies = 0
    if kind == "MessageEvent" and source == "user" and text and not event.get("sender"):
        prompts = int(
            not text.startswith(RESUMED)
            and not text.startswith("The task appears incomplete (iteration")
        )
    elif kind == "MessageEvent" and source == "agent":
        replies = int(bool(text))
    elif kind == "ActionEvent":
        replies = int(bool(as_text(event.get("thought")).strip()))
    elif kind == "UserRejectObservation":
        reason = str_of(event.get("rejection_reason")).strip()
        prompts = int(bool(reason) and event.get("rejection_source", "user") == "user"
                      and reason != DEFAULT_REJECTION)  # fmt: skip
    conversation = path.parent.parent.name
    return {conversation: {"prompts": prompts, "replies": replies}} if prompts or replies else {}


# ----------------------------------------------------------------------------- usage


def _usages(state: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str | None]]:
    """(llm id, token usage entry, model) per model response in ``base_state.json``."""
    metrics = dict_of(dict_of(state.get("stats")).get("usage_to_metrics"))
    for name, metric in metrics.items():
        entries = dict_of(metric).get("token_usages")
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict):
                yield str(name), entry, opt_str(entry.get("model"))


def parse_base_state(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """No records: one :class:`Usage` per model response the conversation's stats list."""
    path = Path(ref.path)
    cursor.units = 0
    state = read_json(path, diag)
    if not isinstance(state, dict):
        return
    cwd = opt_str(dict_of(state.get("workspace")).get("working_dir"))
    for index, (name, entry, model) in enumerate(_usages(state)):
        cursor.units += 1
        locator = f"json:/stats/usage_to_metrics/{name}/token_usages/{index}"
        counts = read_counts(
            entry,
            ["prompt_tokens", "completion_tokens"],
            ["cache_read_tokens", "cache_write_tokens", "reasoning_tokens"],
        )
        if isinstance(counts, str):
            cursor.skip_usage(diag, path, locator, counts)
            continue
        cached = counts["cache_read_tokens"] + counts["cache_write_tokens"]
        cursor.add_usage(
            Usage(
                agent=ref.agent,
                store=ref.store,
                source_path=os.fspath(path),
                locator=locator,
                session_id=path.parent.name,
                call_id=opt_str(entry.get("response_id")) or f"{path.parent.name}@{locator}",
                input_tokens=max(0, counts["prompt_tokens"] - cached),
                cache_read_tokens=counts["cache_read_tokens"],
                cache_write_tokens=counts["cache_write_tokens"],
                output_tokens=counts["completion_tokens"],
                reasoning_tokens=counts["reasoning_tokens"],
                model=model,
                cwd=cwd,
                host=ref.host,
            ),
            diag,
        )
    yield from ()


def count_base_state(path: Path) -> int:
    return sum(1 for _ in _usages(_raw(path)))


# ----------------------------------------------------------------------------- prompt log


@lru_cache(maxsize=8)
def _projects(conversations: str, mtime: float) -> dict[str, str]:
    """sha256(realpath of a work dir) -> work dir, for the work dirs conversations name."""
    found: dict[str, str] = {}
    try:
        folders = list(Path(conversations).iterdir())
    except OSError:
        return found
    for folder in folders:
        cwd = working_dir(folder)
        if cwd:
            found[hashlib.sha256(cwd.encode("utf-8")).hexdigest()] = cwd
    return found


def project_dir(persistence: Path, digest: str) -> str | None:
    """The work dir whose prompt log is ``projects/<digest>`` (from the default conversations
    folder's work dirs; a project only a moved conversations folder names stays unnamed)."""
    conversations = persistence / "conversations"
    try:
        mtime = conversations.stat().st_mtime
    except OSError:
        return None
    return _projects(str(conversations), mtime).get(digest)


def _history(path: Path, diag: Diagnostics) -> list[Any]:
    data = read_json(path, diag)
    return data if isinstance(data, list) else []


def _log_session(path: Path) -> tuple[str, str | None]:
    """(conversation id, work dir) of ``<persistence>/projects/<sha256>/prompt_history.json``."""
    cwd = project_dir(path.parent.parent.parent, path.parent.name)
    return f"openhands-prompts:{cwd or path.parent.name}", cwd


def parse_prompt_history(
    ref: SourceRef, cursor: ParseCursor, diag: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    session, cwd = _log_session(path)
    cursor.units = 0
    for index, entry in enumerate(_history(path, diag)):
        text = str_of(dict_of(entry).get("text")).strip()
        if not text:
            continue
        cursor.units += 1
        yield make_record(
            ref,
            f"json:/{index}",
            session,
            "user",
            "prompt",
            text,
            timestamp=local_time(dict_of(entry).get("timestamp")),
            cwd=cwd,
        )


def _entries(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return data if isinstance(data, list) else []


def count_prompt_history(path: Path) -> int:
    return sum(1 for e in _entries(path) if isinstance(e, dict) and str_of(e.get("text")).strip())


def count_prompt_history_roles(path: Path) -> RoleCounts:
    session = _log_session(path)[0]
    return prompts_by_session((session, dict_of(e).get("text")) for e in _entries(path))


PARSERS = (
    ParserSpec(
        "openhands.event_json.v1",
        parse_event,
        count_raw=count_event,
        count_roles=count_event_roles,
    ),
    ParserSpec("openhands.base_state_json.v1", parse_base_state, count_raw=count_base_state),
    ParserSpec(
        "openhands.prompt_history_json.v1",
        parse_prompt_history,
        count_raw=count_prompt_history,
        count_roles=count_prompt_history_roles,
    ),
)
