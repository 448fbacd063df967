"""Kimi CLI ``wire.jsonl``: what the UI was sent, with times (``kimi-cli.wire_jsonl.v1``).

Written by ``src/kimi_cli/wire/file.py`` since 2025-11-26: a first line
``{"type": "metadata", "protocol_version": "1.10"}`` (absent in the legacy
1.1 files), then ``{"timestamp": <unix float>, "message": {"type", "payload"}}``
per message, consecutive mergeable ones (text, thinking, tool-call pieces)
merged first (``wire/__init__.py``). The file is only appended to, so the
parser resumes.

Records per message type (``wire/types.py``; ``locator`` ``line:N``):

* ``TurnBegin.user_input`` -> ``user``/``prompt``; a ``/command`` ->
  ``user``/``message``; ``<system-reminder>`` text Kimi sends itself (a
  background task finished) -> ``system``/``message``; a turn a flow starts
  inside a running turn (the Ralph loop) -> ``user``/``message``.
  ``SteerInput`` (typed while a turn runs) and ``BtwBegin.question`` (a
  ``/btw`` side question) are prompts too, ``BtwEnd.response`` a reply.
* ``ContentPart`` ``text`` -> ``assistant``/``message`` (one reply per line:
  the writer merged its pieces), ``think`` -> ``reasoning`` (an encrypted
  one without text gives nothing); ``ToolCall`` -> ``tool_call``;
  ``ToolResult`` -> ``tool``/``tool_result`` (output, else message);
  ``ApprovalResponse.feedback`` (why a tool was refused) -> prompt;
  ``QuestionResponse`` answers -> ``user``/``message`` (options picked);
  ``Notification`` and ``PlanDisplay`` -> ``system``/``message``.
* ``StatusUpdate.token_usage`` -> one :class:`~agentdex.records.Usage` per
  model call (``message_id``; fresh input = ``input_other``).
* ``SubagentEvent`` -> its event, as the subagent's (``extra.sidechain``,
  ``extra.agent_id``), unless the subagent has its own
  ``subagents/<agent id>/wire.jsonl`` (2026-03 on), which is read instead. In
  a subagent's own wire every turn is ``user``/``message``: the parent
  agent wrote it.
* Control messages (steps, compaction marks, hooks, MCP loading, requests
  that only drive the UI) give nothing; an unknown type is reported as
  format drift with the file's protocol version.

**Unit**: a line that gives a record. **Roles**: prompts and replies as
above (:mod:`._counts` counts them apart).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    clip,
    dict_of,
    json_or_text,
    make_record,
    number_parts,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers._jsonl import LineStream
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.kimi_cli._common import (
    is_harness,
    output_text,
    session_place,
    slash_command,
    user_text,
    work_dir,
)
from agentdex.readers import Diagnostics
from agentdex.records import Kind, Record, Role, Usage

Item = tuple[Role, Kind, str, dict[str, Any]]

#: Message types that drive the UI or the run only: nothing to index.
CONTROL = frozenset(
    {
        "TurnEnd",
        "StepBegin",
        "StepInterrupted",
        "StepRetry",
        "CompactionBegin",
        "CompactionEnd",
        "HookTriggered",
        "HookResolved",
        "MCPLoadingBegin",
        "MCPLoadingEnd",
        "ToolCallPart",
        "ApprovalRequest",
        "ToolCallRequest",
        "QuestionRequest",
        "HookRequest",
        "HookResponse",
        "StatusUpdate",
    }
)
_INITIAL: dict[str, Any] = {"version": None, "depth": 0}


def turn_kind(text: str, *, nested: bool, by_agent: bool) -> tuple[Role, Kind]:
    """What a ``TurnBegin``'s input is (see the module docstring)."""
    if is_harness(text):
        return "system", "message"
    if by_agent or nested or slash_command(text) is not None:
        return "user", "message"
    return "user", "prompt"


def _tool_result(payload: dict[str, Any]) -> str:
    value = dict_of(payload.get("return_value"))
    text = output_text(value.get("output")).strip() or str_of(value.get("message")).strip()
    if value.get("is_error") and str_of(value.get("message")).strip():
        text = f"ERROR: {value['message'].strip()}\n{text}".strip() if text else value["message"]
    return clip(text)


class _Wire:
    def __init__(self, ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> None:
        self.ref, self.cursor, self.diag = ref, cursor, diag
        self.session, group, self.agent_id = session_place(Path(ref.path))
        self.cwd = work_dir(Path(ref.root), group)
        self.stream = LineStream(ref, cursor, diag, _INITIAL)
        self.state = self.stream.state
        self.session_dir = Path(ref.path).parent
        if self.agent_id is not None:
            self.session_dir = self.session_dir.parent.parent

    def items(self, mtype: str, payload: dict[str, Any], by_agent: bool) -> list[Item]:
        """The records one message gives (``by_agent``: a subagent's)."""
        state = self.state
        if mtype in ("TurnBegin", "SteerInput"):
            text = user_text(payload.get("user_input")).strip()
            nested = mtype == "TurnBegin" and state["depth"] > 0 and not by_agent
            if mtype == "TurnBegin" and not by_agent:
                state["depth"] += 1
            if not text:
                return []
            role, kind = turn_kind(text, nested=nested, by_agent=by_agent)
            extra: dict[str, Any] = {"flow": True} if nested and kind == "message" else {}
            return [(role, kind, text, extra)]
        if mtype == "ContentPart":
            ptype = payload.get("type")
            if ptype == "text" and str_of(payload.get("text")).strip():
                return [("assistant", "message", payload["text"], {})]
            if ptype == "think" and str_of(payload.get("think")).strip():
                return [("assistant", "reasoning", payload["think"], {})]
            if ptype not in ("text", "think", "image_url", "audio_url", "video_url"):
                self.drift("content part", ptype)
            return []
        if mtype == "ToolCall":
            function = dict_of(payload.get("function"))
            args: Any = function.get("arguments")
            text = tool_call_text(function.get("name"), json_or_text(args))
            return [("assistant", "tool_call", text, {"call_id": opt_str(payload.get("id"))})]
        if mtype == "ToolResult":
            text = _tool_result(payload)
            extra = {"call_id": opt_str(payload.get("tool_call_id"))}
            return [("tool", "tool_result", text, extra)] if text else []
        return self.other_items(mtype, payload)

    def other_items(self, mtype: str, payload: dict[str, Any]) -> list[Item]:
        if mtype in ("ApprovalResponse", "ApprovalRequestResolved"):
            feedback = str_of(payload.get("feedback")).strip()
            return (
                [("user", "prompt", feedback, {"approval": payload.get("response")})]
                if (feedback)
                else []
            )
        if mtype == "QuestionResponse":
            answers = dict_of(payload.get("answers"))
            text = "\n".join(f"{q}: {a}" for q, a in answers.items() if str(a).strip())
            return [("user", "message", text, {"answers": True})] if text else []
        if mtype == "BtwBegin":
            question = str_of(payload.get("question")).strip()
            return [("user", "prompt", question, {"btw": True})] if question else []
        if mtype == "BtwEnd":
            answer = str_of(payload.get("response")).strip()
            return [("assistant", "message", answer, {"btw": True})] if answer else []
        if mtype == "Notification":
            text = "\n".join(
                t for t in (str_of(payload.get("title")), str_of(payload.get("body"))) if t.strip()
            )
            return [("system", "message", text, {"notification": True})] if text else []
        if mtype == "PlanDisplay":
            plan = str_of(payload.get("content")).strip()
            extra = {"plan_file": opt_str(payload.get("file_path"))}
            return [("system", "message", plan, extra)] if plan else []
        if mtype == "StepInterrupted":
            self.state["depth"] = 0  # an interrupted run ends every turn it had open
        elif mtype == "TurnEnd":
            self.state["depth"] = max(0, self.state["depth"] - 1)
        elif mtype not in CONTROL:
            self.drift("record type", mtype)
        return []

    def drift(self, what: str, name: object) -> None:
        self.diag.unrecognised(what, name, version=self.state["version"], path=self.ref.path)

    def subagent(self, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """(agent id, inner message) of a ``SubagentEvent`` to index here, else None."""
        agent = opt_str(payload.get("agent_id")) or opt_str(
            payload.get("parent_tool_call_id") or payload.get("task_tool_call_id")
        )
        inner = dict_of(payload.get("event"))
        if agent is None or not isinstance(inner.get("type"), str):
            return None
        own = self.session_dir / "subagents" / agent / "wire.jsonl"
        if payload.get("agent_id") and own.is_file():
            return None  # read from the subagent's own wire
        return agent, inner

    def usage(self, payload: dict[str, Any], line: Any, stamp: float | None) -> None:
        raw = payload.get("token_usage")
        if raw is None:
            return
        locator = f"line:{line.lineno}"
        counts = read_counts(
            raw, ["input_other", "output"], ["input_cache_read", "input_cache_creation"]
        )
        if isinstance(counts, str):
            self.cursor.skip_usage(self.diag, self.ref.path, locator, counts)
            return
        call = opt_str(payload.get("message_id")) or f"{self.session}@{locator}"
        self.cursor.add_usage(
            Usage(
                agent=self.ref.agent,
                store=self.ref.store,
                source_path=os.fspath(self.ref.path),
                locator=locator,
                session_id=self.session,
                call_id=call,
                input_tokens=counts["input_other"],
                cache_read_tokens=counts["input_cache_read"],
                cache_write_tokens=counts["input_cache_creation"],
                output_tokens=counts["output"],
                timestamp=stamp,
                cwd=self.cwd,
                host=self.ref.host,
                offset=line.offset,
            ),
            self.diag,
        )

    def records(self, line: Any, stamp: float | None, items: list[Item]) -> list[Record]:
        return number_parts(
            [
                make_record(
                    self.ref, f"line:{line.lineno}", self.session, role, kind, text,
                    timestamp=stamp, cwd=self.cwd, offset=line.offset,
                    extra={k: v for k, v in extra.items() if v is not None},
                )
                for role, kind, text, extra in items
            ]
        )  # fmt: skip


def _stamp(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and value > 0 else None


def parse_wire(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Stream the records of one ``wire.jsonl`` (a session's, or a subagent's own)."""
    run = _Wire(ref, cursor, diag)
    own_agent = run.agent_id
    for line, obj in run.stream.lines():
        if obj.get("type") == "metadata" or ("message" not in obj and "protocol_version" in obj):
            version = obj.get("protocol_version")
            run.state["version"] = str(version) if isinstance(version, str | int) else None
            continue
        message = dict_of(obj.get("message"))
        mtype, payload = message.get("type"), dict_of(message.get("payload"))
        if not isinstance(mtype, str):
            diag.add(ref.path, f"line:{line.lineno}", "no message type; skipped")
            continue
        stamp = _stamp(obj.get("timestamp"))
        agent = own_agent
        if mtype == "SubagentEvent":
            inner = run.subagent(payload)
            if inner is None:
                continue
            agent = inner[0]
            mtype, payload = inner[1]["type"], dict_of(inner[1].get("payload"))
        if mtype == "StatusUpdate":
            run.usage(payload, line, stamp)
        items = run.items(mtype, payload, by_agent=agent is not None)
        if not items:
            continue
        if agent is not None:
            items = [(r, k, t, {**e, "sidechain": True, "agent_id": agent}) for r, k, t, e in items]
        run.stream.produced()
        yield from run.records(line, stamp, items)
