"""One Amazon Q / Kiro CLI conversation state (the JSON of a ``conversations`` row) as records.

aws/amazon-q-developer-cli @ 15cc8f3c ``crates/chat-cli/src/cli/chat/conversation.rs``
(``ConversationState``: ``conversation_id``, ``history``, ``latest_summary``,
``model_info``...) and ``message.rs`` (serde's externally tagged enums):

* ``history`` entries: ``{"user", "assistant", "request_metadata"}`` since 2025-07-22
  (``HistoryEntry``), ``[user, assistant]`` pairs before.
* ``user.content``: ``{"Prompt": {"prompt"}}``, ``{"ToolUseResults": {"tool_use_results"}}``
  or ``{"CancelledToolUses": {"prompt", "tool_use_results"}}``; a result is ``{tool_use_id,
  content: [{"Text": s} | {"Json": v}], status: "Success"|"Error"}``. ``user.timestamp``
  (RFC 3339) is set on what the person typed (``set_next_user_message``) and, since
  2025-08-11, left null on prompts the CLI makes itself (an MCP prompt's messages, the
  "history has overflowed" notice, tool results folded into text): those are
  ``user``/``message``; before that date every message had a time.
* ``assistant``: ``{"Response": {message_id, content}}`` or ``{"ToolUse": {message_id,
  content, tool_uses: [{id, name, args, orig_name, orig_args}]}}``.
* ``request_metadata``: ``request_start_timestamp_ms``, ``stream_end_timestamp_ms``,
  ``model_id``. No token counts: Amazon Q and Kiro record none here (Kiro's credits are
  not tokens), so this store gives no usage.
* ``latest_summary``: ``[summary, request_metadata]`` left by ``/compact`` (the history it
  summarised is gone): ``system``/``summary``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentdex.parsers._agent_common import (
    as_text,
    clip,
    compact_json,
    dict_of,
    make_record,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers.base import SourceRef
from agentdex.readers import Diagnostics
from agentdex.records import Record, parse_timestamp

USER_VARIANTS = frozenset({"Prompt", "ToolUseResults", "CancelledToolUses"})
ASSISTANT_VARIANTS = frozenset({"Response", "ToolUse"})


def variant(value: object) -> tuple[str | None, dict[str, Any]]:
    """serde's externally tagged enum: ``{"Name": {...}}`` -> ("Name", {...})."""
    if isinstance(value, dict) and len(value) == 1:
        name, body = next(iter(value.items()))
        return str(name), dict_of(body)
    return None, {}


def entry_parts(entry: object) -> tuple[dict[str, Any], object, dict[str, Any]] | None:
    """(user, assistant, request_metadata) of a history entry, either era; None if neither."""
    if isinstance(entry, dict) and ("user" in entry or "assistant" in entry):
        return (
            dict_of(entry.get("user")),
            entry.get("assistant"),
            dict_of(entry.get("request_metadata")),
        )
    if isinstance(entry, list) and len(entry) == 2:
        return dict_of(entry[0]), entry[1], {}
    return None


def result_text(result: dict[str, Any]) -> str:
    parts = []
    for block in result.get("content") or []:
        name, _ = variant(block) if isinstance(block, dict) else (None, {})
        if isinstance(block, dict) and "Text" in block:
            parts.append(str_of(block["Text"]))
        elif isinstance(block, dict) and "Json" in block:
            parts.append(compact_json(block["Json"]))
        elif name is None:
            parts.append(as_text(block))
    return "\n".join(p for p in parts if p)


class StateReader:
    """Records of one conversation state; ``fallback`` is the time of records with none."""

    def __init__(
        self, ref: SourceRef, diag: Diagnostics, where: str, sid: str, fallback: float | None
    ) -> None:
        self.ref, self.diag, self.where, self.sid = ref, diag, where, sid
        self.last = fallback
        self.units = 0

    def records(self, state: dict[str, Any], cwd: str | None) -> Iterator[Record]:
        model = opt_str(dict_of(state.get("model_info")).get("model_id")) or opt_str(
            state.get("model")
        )
        summary = state.get("latest_summary")
        if isinstance(summary, list) and summary and str_of(summary[0]).strip():
            meta = dict_of(summary[1]) if len(summary) > 1 else {}
            stamp = parse_timestamp(meta.get("stream_end_timestamp_ms")) or self.last
            self.units += 1
            yield self._record("/latest_summary/0", "system", "summary", summary[0], stamp, cwd)
        history = state.get("history")
        for n, entry in enumerate(history if isinstance(history, list) else []):
            parts = entry_parts(entry)
            if parts is None:
                self.diag.unrecognised(
                    "history entry", type(entry).__name__, path=self.ref.path,
                    locator=f"{self.where}/history/{n}",
                )  # fmt: skip
                continue
            user, assistant, meta = parts
            here = cwd_of(user) or cwd
            out = list(self._user(f"/history/{n}/user", user, meta, here))
            out += self._assistant(f"/history/{n}/assistant", assistant, meta, here, model)
            if out:
                self.units += 1
                yield from out

    def _record(
        self, pointer: str, role: Any, kind: Any, text: str, stamp: float | None,
        cwd: str | None, **fields: Any,
    ) -> Record:  # fmt: skip
        extra = {k: v for k, v in fields.pop("extra", {}).items() if v is not None}
        return make_record(
            self.ref, f"{self.where}{pointer}", self.sid, role, kind, text,
            timestamp=stamp, cwd=cwd, extra=extra, **fields,
        )  # fmt: skip

    def _user(
        self, pointer: str, user: dict[str, Any], meta: dict[str, Any], cwd: str | None
    ) -> Iterator[Record]:
        name, body = variant(user.get("content"))
        typed_at = parse_timestamp(user.get("timestamp"))
        stamp = typed_at or parse_timestamp(meta.get("request_start_timestamp_ms")) or self.last
        self.last = stamp
        if name is None or name not in USER_VARIANTS:
            self.diag.unrecognised(
                "user content", name or type(user.get("content")).__name__,
                path=self.ref.path, locator=f"{self.where}{pointer}",
            )  # fmt: skip
            return
        prompt = str_of(body.get("prompt"))
        if prompt.strip():
            role, kind = ("user", "prompt") if typed_at is not None else ("user", "message")
            yield self._record(f"{pointer}/content/{name}/prompt", role, kind, prompt, stamp, cwd)
        for i, result in enumerate(body.get("tool_use_results") or []):
            result = dict_of(result)
            text = result_text(result)
            if not text.strip():
                continue
            yield self._record(
                f"{pointer}/content/{name}/tool_use_results/{i}", "tool", "tool_result",
                clip(text), stamp, cwd,
                extra={"call_id": opt_str(result.get("tool_use_id")),
                       "ok": result.get("status") != "Error" if "status" in result else None},
            )  # fmt: skip

    def _assistant(
        self, pointer: str, assistant: object, meta: dict[str, Any], cwd: str | None,
        model: str | None,
    ) -> list[Record]:  # fmt: skip
        name, body = variant(assistant)
        if name is None or name not in ASSISTANT_VARIANTS:
            if assistant is not None:
                self.diag.unrecognised(
                    "assistant message", name or type(assistant).__name__,
                    path=self.ref.path, locator=f"{self.where}{pointer}",
                )  # fmt: skip
            return []
        stamp = parse_timestamp(meta.get("stream_end_timestamp_ms")) or self.last
        self.last = stamp
        model = opt_str(meta.get("model_id")) or model
        out = []
        text = str_of(body.get("content"))
        if text.strip():
            message_id = opt_str(body.get("message_id"))
            out.append(
                self._record(f"{pointer}/{name}/content", "assistant", "message", text, stamp,
                             cwd, model=model, extra={"message_id": message_id})
            )  # fmt: skip
        for i, use in enumerate(body.get("tool_uses") or []):
            use = dict_of(use)
            out.append(
                self._record(
                    f"{pointer}/{name}/tool_uses/{i}", "assistant", "tool_call",
                    tool_call_text(use.get("name"), use.get("args")), stamp, cwd, model=model,
                    extra={"call_id": opt_str(use.get("id"))},
                )
            )  # fmt: skip
        return out


def cwd_of(user: dict[str, Any]) -> str | None:
    env = dict_of(dict_of(user.get("env_context")).get("env_state"))
    return opt_str(env.get("current_working_directory"))
