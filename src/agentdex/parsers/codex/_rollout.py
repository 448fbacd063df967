"""Codex JSONL rollouts (``codex.rollout_jsonl.v1``): the resumable parser.

**What the person typed is decided by structure.** Codex writes a typed
text twice: as a ``response_item`` user message (what the model saw) and
as an ``event_msg`` (``user_message``, or a user ``item_completed``: what
the person typed; Codex's own titles and first-message previews read only
these events). It also writes user-role items nobody typed: instructions,
environment context, notices. So, once a rollout has user events, a user
item is typed only when an event of the same turn is its twin; an item
without one is injected context, whatever its text says, even redacted or
re-worded. Rollouts (or their older parts) without user events fall back
to the text rules of :mod:`._items` (known injected prefixes, IDE wrappers).

A turn is the stretch between two agent outputs (a reply, reasoning, a
tool call or result). Its typed-looking user texts are held until it ends
(at most :data:`HELD_MAX` at once), then paired: each event with an item of
the same typed text (whitespace-insensitive, an IDE wrapper's request),
else with the nearest unpaired item (a redacted or re-wrapped twin). The
first of a pair is kept (the event decides whether it is a prompt or text
an agent wrote); an unpaired event is kept. While texts are held, the
stream commits nothing from the first held line on (:meth:`LineStream.hold`),
so a resume decides the turn again with whatever was appended.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentdex.parsers._agent_common import number_parts
from agentdex.parsers._jsonl import LineStream
from agentdex.parsers.base import Line, ParseCursor, SourceRef
from agentdex.parsers.codex._items import (
    DELEGATION_PREFIX,
    HELD_MAX,
    ITEM_TYPES,
    LINE_TYPES,
    SKIPPED_ITEM_TYPES,
    Item,
    blocks_text,
    event_user_text,
    is_injected,
    is_subagent,
    items_of,
    session_from_name,
    text_key,
    unknown_item,
    user_items,
)
from agentdex.parsers.codex._usage import is_token_count, note_token_count
from agentdex.readers import Diagnostics
from agentdex.records import Record, parse_timestamp


@dataclass(slots=True)
class _Held:
    """A typed-looking user text waiting for its turn to end."""

    origin: str  # "item" or "event"
    text: str
    lineno: int
    offset: int
    timestamp: float | None
    context: tuple[Any, ...]  # (session, model, cwd, branch) as of its line


def _nearest(candidates: list[int], at: int) -> int:
    """The candidate closest to ``at``, the earlier one on a tie."""
    return min(candidates, key=lambda i: (abs(i - at), i > at))


def pair_turn(held: list[_Held]) -> dict[int, int]:
    """Twins among a turn's held texts: index -> its partner's index (both directions)."""
    partner: dict[int, int] = {}
    keys: dict[int, str] = {}

    def same(i: int, j: int) -> bool:
        """Do held texts ``i`` and ``j`` have one :func:`text_key`? (equal texts do: the
        key, a split and join of the whole text, is made only for texts that differ)"""
        if held[i].text == held[j].text:
            return True
        for k in (i, j):
            if k not in keys:
                keys[k] = text_key(held[k].text)
        return keys[i] == keys[j]

    items = [i for i, h in enumerate(held) if h.origin == "item"]
    events = [i for i, h in enumerate(held) if h.origin == "event"]
    for same_text in (True, False):
        for event in events:
            if event in partner:
                continue
            free = [i for i in items if i not in partner and (not same_text or same(i, event))]
            if free:
                item = _nearest(free, event)
                partner[item], partner[event] = event, item
    return partner


def resolve_turn(
    held: list[_Held], events_seen: bool, subagent: bool
) -> list[tuple[_Held, list[Item]]]:
    """What each held text gives, in line order (a dropped twin gives nothing)."""
    partner = pair_turn(held)
    decided: list[tuple[_Held, list[Item]]] = []
    for index, entry in enumerate(held):
        twin = partner.get(index)
        if twin is not None and twin < index:
            continue  # the second of a pair: its twin stands for both
        if entry.origin == "event" or twin is not None:
            event = entry if entry.origin == "event" else held[twin or 0]
            by_agent = subagent or event.text.lstrip().startswith(DELEGATION_PREFIX)
            given = user_items(entry.text, subagent, by_agent=by_agent)
            if entry.origin == "event":
                given = [(r, k, t, {**e, "from_event": True}) for r, k, t, e in given]
        elif events_seen:  # a user item no event vouches for: context Codex added
            given = [("system", "message", entry.text, {"injected": True, "no_event": True})]
        else:
            given = user_items(entry.text, subagent)
        decided.append((entry, given))
    return decided


def envelope(obj: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """(line type, payload), reading the early unwrapped era too."""
    payload = obj.get("payload")
    if isinstance(payload, dict):
        return obj.get("type"), payload
    if obj.get("type") in ITEM_TYPES or (obj.get("type") is None and "role" in obj):
        return "response_item", obj
    if obj.get("type") is None and "id" in obj and "timestamp" in obj:
        return "session_meta", obj
    return None, None


_INITIAL: dict[str, Any] = {
    "session": None,
    "meta_seen": False,
    "cwd": None,
    "branch": None,
    "model": None,
    "subagent": False,
    "copying": False,
    "events": False,  # a user event has been seen (so items need a twin to be typed)
    "usage_total": None,
    "version": None,  # cli_version of the session_meta
}


def _context(state: dict[str, Any], payload: dict[str, Any], ltype: str, path: Any) -> None:
    """Apply a ``session_meta`` or ``turn_context`` line to the state."""
    if ltype == "turn_context":
        state["copying"] = False
        if isinstance(payload.get("cwd"), str) and payload["cwd"]:
            state["cwd"] = payload["cwd"]
        if isinstance(payload.get("model"), str) and payload["model"]:
            state["model"] = payload["model"]
        return
    meta_id = payload.get("id")
    if not state["meta_seen"]:
        state["meta_seen"] = True
        state["session"] = meta_id if isinstance(meta_id, str) and meta_id else None
        state["session"] = state["session"] or session_from_name(path)
        if isinstance(payload.get("cwd"), str) and payload["cwd"]:
            state["cwd"] = payload["cwd"]
        git = payload.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str):
            state["branch"] = git["branch"] or None
        state["subagent"] = is_subagent(payload)
        version = payload.get("cli_version")
        state["version"] = version if isinstance(version, str) and version else None
    elif isinstance(meta_id, str) and meta_id != state["session"]:
        state["copying"] = True


def _user_text(ltype: str | None, payload: dict[str, Any]) -> tuple[str, str] | None:
    """(origin, text) of a user item or user event with text; None for any other line."""
    if ltype == "response_item":
        if payload.get("role") == "user" and payload.get("type") in (None, "message"):
            text = blocks_text(payload.get("content"))
            return ("item", text) if text.strip() else None
        return None
    if ltype == "event_msg":
        typed = event_user_text(payload)
        return ("event", typed) if typed and typed.strip() else None
    return None


def _line_items(state: dict[str, Any], ltype: str | None, payload: dict[str, Any]) -> list[Item]:
    """The records a line that is not a held user text gives."""
    if ltype == "response_item":
        return items_of(payload, state["subagent"])
    if ltype == "compacted":
        message = payload.get("message")
        if isinstance(message, str) and message.strip():
            return [("system", "summary", message, {})]
    return []


class _Rollout:
    """One parse: the stream, the held texts of the current turn, record building."""

    def __init__(self, ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> None:
        self.ref, self.source = ref, os.fspath(ref.path)
        self.stream = LineStream(ref, cursor, diag, _INITIAL)
        self.state = self.stream.state
        self.held: list[_Held] = []

    def context(self) -> tuple[Any, ...]:
        state = self.state
        session = state["session"] or session_from_name(self.ref.path)
        return session, state["model"], state["cwd"], state["branch"]

    def line(
        self, lineno: int, offset: int, timestamp: float | None, context: tuple[Any, ...],
        items: list[Item],
    ) -> Line:  # fmt: skip
        """The :data:`Line` of a line's items (:func:`line_records` makes its records)."""
        session, model, cwd, branch = context
        return "", lineno, offset, session, timestamp, model, cwd, branch, items, _NO_EXTRA

    def end_turn(self) -> Iterator[Line]:
        """Decide the held texts (the turn ended, or too many are held) and release."""
        if not self.held:
            return
        decided = resolve_turn(self.held, self.state["events"], self.state["subagent"])
        self.held = []
        given = [(h, items) for h, items in decided if items]
        self.stream.produced_earlier(len(given))
        for entry, items in given:
            yield self.line(entry.lineno, entry.offset, entry.timestamp, entry.context, items)
        self.stream.release()

    def hold(self, origin: str, text: str, line: Any, timestamp: float | None) -> Iterator[Line]:
        self.stream.hold()
        if origin == "event":
            self.state["events"] = True
        self.held.append(_Held(origin, text, line.lineno, line.offset, timestamp, self.context()))
        if len(self.held) >= HELD_MAX:
            yield from self.end_turn()


def _drift(
    diag: Diagnostics, ref: SourceRef, lineno: int, version: str | None, ltype: str | None,
    payload: dict[str, Any],
) -> None:  # fmt: skip
    """Report a line or response item type this parser does not know (format drift)."""
    found: tuple[str, object] | None = None
    if ltype not in LINE_TYPES:
        found = ("record type", ltype)
    elif ltype == "response_item":
        found = unknown_item(payload)
    if found is not None:
        diag.unrecognised(*found, version=version, path=ref.path, locator=f"line:{lineno}")


#: the line types :func:`_drift` has nothing to say about (a tuple: a line's type may be
#: anything JSON holds, a list included)
_KNOWN_LINES = tuple(ltype for ltype in LINE_TYPES if ltype != "response_item")
#: the response item types :func:`unknown_item` has nothing to say about whatever else the
#: item holds (a message's role is checked): most lines of a rollout, two calls less each
_QUIET_ITEMS = tuple(t for t in (*ITEM_TYPES, *SKIPPED_ITEM_TYPES) if t != "message")


def _time(obj: dict[str, Any], payload: dict[str, Any]) -> float | None:
    """A line's time: the envelope's, else the payload's (read only for lines that give
    something)."""
    return parse_timestamp(obj.get("timestamp")) or parse_timestamp(payload.get("timestamp"))


def rollout_lines(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Line]:
    """What each line of one JSONL rollout gives, as a :data:`Line` (a held user text's
    once its turn is decided; :func:`parse_rollout` makes the records of them)."""
    run = _Rollout(ref, cursor, diag)
    state = run.state
    for line, obj in run.stream.lines():
        payload = obj.get("payload")
        if isinstance(payload, dict):  # the envelope (what :func:`envelope` reads first)
            ltype = obj.get("type")
        else:
            ltype, payload = envelope(obj)
        if payload is None:
            if "payload" in obj:
                diag.add(ref.path, f"line:{line.lineno}", "payload is not an object")
            continue
        if ltype not in _KNOWN_LINES and (  # a response item, or a type this parser does not know
            ltype != "response_item" or payload.get("type") not in _QUIET_ITEMS
        ):
            _drift(diag, ref, line.lineno, state["version"], ltype, payload)
        if ltype == "session_meta" and run.held:
            yield from run.end_turn()  # a turn never straddles a session header
        if ltype in ("session_meta", "turn_context"):
            _context(state, payload, ltype, ref.path)
            continue
        # token counts, copied ones too: they keep their parent's name
        if ltype == "event_msg" and is_token_count(ltype, payload):
            note_token_count(run.stream, line, obj, payload, ref, cursor, diag)
            continue
        if state["copying"]:
            continue
        user = _user_text(ltype, payload)
        if user is not None and not is_injected(user[1]):
            timestamp = _time(obj, payload)
            yield from run.hold(user[0], user[1], line, timestamp)
            continue
        if user is not None:  # text Codex composed: never a twin, never held
            if user[0] == "event":
                state["events"] = True
            items = [(r, k, t, {**e, "from_event": True} if user[0] == "event" else e)
                     for r, k, t, e in user_items(user[1], state["subagent"])]  # fmt: skip
        else:
            items = _line_items(state, ltype, payload)
        if run.held and any(item[0] in ("assistant", "tool") for item in items):
            yield from run.end_turn()  # the agent answered: the turn's texts are decided
        if not items:
            continue  # (most event lines: echoes of response items)
        run.stream.produced()
        timestamp = _time(obj, payload)
        yield run.line(line.lineno, line.offset, timestamp, run.context(), items)
    yield from run.end_turn()


#: the shared extras of a rollout's lines (none: each item's own)
_NO_EXTRA: dict[str, Any] = {}


def line_records(ref: SourceRef, source: str, line: Line) -> list[Record]:
    """The records of a rollout's :data:`Line`."""
    _, lineno, offset, session, timestamp, model, cwd, branch, items, _ = line
    locator = f"line:{lineno}"
    agent, store, host = ref.agent, ref.store, ref.host
    # positional, in the field order (``Record``'s keyword call costs ~2.5x as much)
    records = []
    for role, kind, text, extra in items:
        if not extra:
            kept = {}
        elif None in extra.values():
            kept = {k: v for k, v in extra.items() if v is not None}
        else:  # (most: a comprehension is a call per record)
            kept = dict(extra)
        record = Record(
            agent, store, source, locator, session, role, kind, text, timestamp, model, cwd,
            None, branch, None, host, offset, kept,
        )  # fmt: skip
        records.append(record)
    return number_parts(records) if len(records) > 1 else records


def parse_rollout(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Stream the records of one JSONL rollout."""
    source = os.fspath(ref.path)
    for line in rollout_lines(ref, cursor, diag):
        yield from line_records(ref, source, line)
