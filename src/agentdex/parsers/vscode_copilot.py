"""VS Code (GitHub Copilot Chat): chat sessions and the inline-chat prompt history.

Eras handled
------------
* ``chatSessions/<id>.json`` and ``globalStorage/emptyWindowChatSessions/*.json``:
  one serialized session (v3 ``{version, sessionId, creationDate,
  lastMessageDate, customTitle?, requests[]}``; v1/v2 documents with the same
  ``requests[]`` shape are read the same way), decoded whole with
  :func:`read_json` (size-capped).
* ``chatSessions/<id>.jsonl`` (VS Code >= 1.109): a mutation log replayed by
  :mod:`agentdex.parsers._vscode_mutation_log` to the same state (kept in
  memory; not resumable).
* ``globalStorage/state.vscdb``: the ``ItemTable`` key ``inline-chat-history``
  only (a JSON array of prompts), read with one parameterized ``SELECT`` on a
  read-only connection with a short busy timeout; ``secret://`` keys are
  never read or listed. A locked, corrupt or missing database is skipped
  with a diagnostic.

Mapping (per request ``i``, records in the order of the parts they come from)
-------------------------------------------------------------------------------
``message.text`` -> user/prompt at ``json:/requests/<i>/message``.
``response[]`` parts: the markdown fragments (``{value}``,
``markdownContent``, inline references) of one model round -> **one**
assistant/message, a reply, at ``json:/requests/<i>/response/<j>`` (``j``
= its first fragment). In agent mode a response holds several rounds: the
model writes, calls a tool, writes again (``result.metadata.toolCallRounds``
has one entry per round), so a tool invocation part ends a reply. Within a
round VS Code streams the text in pieces and splits it around code-block
URIs and edits (a lone ``{"value": "\n```\n"}`` closes the code block an
edit opened): those pieces are one reply.
``thinking`` -> assistant/reasoning, one per run of thinking parts;
``toolInvocationSerialized`` / ``toolInvocation`` -> assistant/tool_call
with a readable text (past-tense message, terminal command), plus
tool/tool_result when output was saved; ``textEditGroup`` ->
assistant/tool_call naming the edited file; ``warning`` -> system/message.
When a request has no tool parts (older sessions), the calls in
``result.metadata.toolCallRounds[].toolCalls[]`` become tool_call records,
with tool_result from ``toolCallResults[<id>].content`` when saved.
``result.errorDetails.message`` -> system/message. UI-only parts (progress,
undo stops, code-block URIs...) are skipped and never split the reply;
unknown kinds are listed in one diagnostic per file and reported as format
drift ("response part", with the request's ``agent.extensionVersion``). ``customTitle`` is
the session title. Every record of a request carries the request's
``timestamp``: the store has no other, so order comes from the parts.

cwd comes from the sibling ``workspaceStorage/<md5>/workspace.json``
(``folder``, or the directory of a ``workspace`` ``.code-workspace`` file)
through :func:`agentdex.uris.uri_to_path` (``vscode-remote://wsl+<distro>/p``
gives ``/p``); empty-window chats and non-path URIs have no cwd. ``host`` is
the source's (set for chat found across the WSL bridge).

Units counted
-------------
Chat sessions: requests with a non-empty ``message.text`` (the prompt
record is emitted for exactly those). Inline history: non-empty prompts.
``count_raw`` (:mod:`agentdex.parsers._vscode_counts`) recounts both
without this module's code; ``count_roles`` counts per session the
requests with a prompt and those whose response has reply text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._vscode_counts import (
    count_inline_raw,
    count_inline_roles,
    count_session_raw,
    count_session_roles,
)
from agentdex.parsers._vscode_inline import parse_inline_history
from agentdex.parsers._vscode_mutation_log import replay
from agentdex.parsers._vscode_text import (
    compact,
    markdown_value,
    message_text,
    readable_links,
    reply_piece,
    thinking_text,
    uri_label,
    workspace_cwd,
)
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics, read_json
from agentdex.records import Kind, Record, Role, parse_timestamp

_TOOL_KINDS = frozenset({"toolInvocationSerialized", "toolInvocation"})
#: Parts that only drive the UI: nothing to index.
_UI_KINDS = frozenset(
    {
        "codeblockUri",
        "undoStop",
        "progressMessage",
        "progressTask",
        "progressTaskSerialized",
        "prepareToolInvocation",
        "command",
        "confirmation",
        "elicitation",
        "elicitationSerialized",
        "extensions",
        "mcpServersStarting",
        "notebookEditGroup",
        "treeData",
        "pullRequest",
        "reference",
        "references",
        "codeCitation",
        "agentDetection",
        "multiDiffData",
        "toolInvocationStream",
        "questionCarousel",
        "workspaceEdit",
        "clearToPreviousToolInvocation",
    }
)
# --------------------------------------------------------------------------- sessions


class _Session:
    """Turns one replayed/decoded session into records."""

    def __init__(self, ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> None:
        self.ref, self.cursor, self.diagnostics = ref, cursor, diagnostics
        self.session_id = ref.path.stem
        self.cwd: str | None = None
        self.unknown: Counter[str] = Counter()
        self.version: str | None = None  # the Copilot Chat extension's, per request

    def record(
        self,
        locator: str,
        role: Role,
        kind: Kind,
        text: str,
        timestamp: float | None,
        model: str | None,
        extra: dict[str, Any] | None = None,
    ) -> Record:
        return Record(
            agent=self.ref.agent,
            store=self.ref.store,
            source_path=str(self.ref.path),
            locator=locator,
            session_id=self.session_id,
            role=role,
            kind=kind,
            text=text,
            timestamp=timestamp,
            model=model,
            cwd=self.cwd,
            host=self.ref.host,
            extra=extra or {},
        )

    def records(self, state: dict[str, Any]) -> Iterator[Record]:
        sid = state.get("sessionId")
        if isinstance(sid, str) and sid:
            self.session_id = sid
        title = state.get("customTitle")
        if isinstance(title, str) and title.strip():
            self.cursor.titles[self.session_id] = title.strip()
        requests = state.get("requests")
        if not isinstance(requests, list):
            self.diagnostics.add(self.ref.path, "json:/requests", "no requests[]; skipped")
            return
        fallback = parse_timestamp(state.get("creationDate"))
        for i, request in enumerate(requests):
            if isinstance(request, dict):
                yield from self.request(i, request, fallback)
        if self.unknown:
            kinds = ", ".join(f"{k}×{n}" for k, n in sorted(self.unknown.items()))
            self.diagnostics.add(self.ref.path, "", f"unknown response parts skipped: {kinds}")

    def request(self, i: int, request: dict[str, Any], fallback: float | None) -> Iterator[Record]:
        stamp = parse_timestamp(request.get("timestamp")) or fallback
        model = request.get("modelId") if isinstance(request.get("modelId"), str) else None
        base = {"request_id": request.get("requestId")}
        agent = request.get("agent")
        version = agent.get("extensionVersion") if isinstance(agent, dict) else None
        self.version = version if isinstance(version, str) else None
        prompt = message_text(request.get("message"))
        if prompt.strip():
            self.cursor.units += 1
            loc = f"json:/requests/{i}/message"
            yield self.record(loc, "user", "prompt", prompt, stamp, None, dict(base))
        response = request.get("response")
        shown: Counter[str] = Counter()
        if isinstance(response, list):
            yield from self.response(i, response, stamp, model, base, shown)
        result = request.get("result")
        metadata = result.get("metadata") if isinstance(result, dict) else None
        if isinstance(metadata, dict) and not shown:
            # Older sessions keep tool calls only here. When tool parts exist they already
            # show every call (under VS Code tool ids, which differ from these model-facing
            # names, so the two cannot be matched one by one).
            yield from self.rounds(i, metadata, stamp, model, base)
        error = result.get("errorDetails") if isinstance(result, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
            yield self.record(
                f"json:/requests/{i}/result/errorDetails",
                "system",
                "message",
                error["message"],
                stamp,
                model,
                {**base, "type": "error"},
            )

    def rounds(
        self,
        i: int,
        metadata: dict[str, Any],
        stamp: float | None,
        model: str | None,
        base: dict[str, Any],
    ) -> Iterator[Record]:
        """Tool calls (and saved results) from ``result.metadata.toolCallRounds``."""
        rounds = metadata.get("toolCallRounds")
        results = metadata.get("toolCallResults")
        results = results if isinstance(results, dict) else {}
        for r, round_ in enumerate(rounds if isinstance(rounds, list) else []):
            calls = round_.get("toolCalls") if isinstance(round_, dict) else None
            for c, call in enumerate(calls if isinstance(calls, list) else []):
                name = call.get("name") if isinstance(call, dict) else None
                if not isinstance(name, str) or not name:
                    continue
                args = call.get("arguments")
                text = f"{name}({compact(args)})" if args not in (None, "", "{}") else name
                loc = f"json:/requests/{i}/result/metadata/toolCallRounds/{r}/toolCalls/{c}"
                call_id = call.get("id")
                extra = {**base, "tool": name, "call_id": call_id}
                yield self.record(loc, "assistant", "tool_call", text, stamp, model, extra)
                saved = results.get(call_id) if isinstance(call_id, str) else None
                content = saved.get("content") if isinstance(saved, dict) else None
                output = "\n".join(
                    part["value"]
                    for part in (content if isinstance(content, list) else [])
                    if isinstance(part, dict) and isinstance(part.get("value"), str)
                )
                if output.strip():
                    loc = f"json:/requests/{i}/result/metadata/toolCallResults/{call_id}"
                    yield self.record(loc, "tool", "tool_result", output, stamp, None, dict(extra))

    def response(
        self,
        i: int,
        parts: list[Any],
        stamp: float | None,
        model: str | None,
        base: dict[str, Any],
        shown: Counter[str],
    ) -> Iterator[Record]:
        """One reply per model round (the markdown fragments up to a tool call, wherever
        they streamed), reasoning runs, and the tool parts, each at the index of its
        (first) part."""
        placed: list[tuple[int, Record]] = []
        reply: list[str] = []
        reply_at: int | None = None
        apart = False  # a tool call or edit came between two fragments of the reply
        thought: list[str] = []
        thought_at = 0

        def end_reply() -> None:
            nonlocal reply_at, apart
            text = "".join(reply)
            if reply_at is not None and text.strip():
                loc = f"json:/requests/{i}/response/{reply_at}"
                record = self.record(loc, "assistant", "message", text, stamp, model, dict(base))
                placed.append((reply_at, record))
            reply.clear()
            reply_at, apart = None, False

        def end_thinking() -> None:
            text = "".join(thought)
            if text.strip():
                loc = f"json:/requests/{i}/response/{thought_at}"
                placed.append(
                    (thought_at, self.record(loc, "assistant", "reasoning", text, stamp, model))
                )
            thought.clear()

        for j, part in enumerate(parts):
            if not isinstance(part, dict):
                continue
            raw_kind = part.get("kind")
            kind = None if raw_kind is None else str(raw_kind)  # hashable for set lookups
            if kind in _UI_KINDS:
                continue  # UI-only parts sit between fragments without ending anything
            if kind == "thinking":
                if not thought:
                    thought_at = j
                thought.append(thinking_text(part.get("value")))
                continue
            end_thinking()
            piece = reply_piece(kind, part)
            if piece is not None:
                if apart and reply and not (reply[-1].endswith("\n") or piece.startswith("\n")):
                    reply.append("\n\n")
                reply.append(piece)
                reply_at, apart = (j if reply_at is None else reply_at), False
                continue
            apart = bool(reply)
            loc = f"json:/requests/{i}/response/{j}"
            if kind in _TOOL_KINDS:
                end_reply()  # the model called a tool: its round's text is one reply
                placed.extend((j, r) for r in self.tool(loc, part, stamp, model, base, shown))
            elif kind == "textEditGroup":
                target = uri_label(part.get("uri"))
                extra = {**base, "tool": "textEditGroup"}
                text = f"Edited {target}".strip()
                placed.append(
                    (j, self.record(loc, "assistant", "tool_call", text, stamp, model, extra))
                )
            elif kind == "warning":
                text = markdown_value(part.get("content"))
                if text.strip():
                    extra = {**base, "type": "warning"}
                    placed.append(
                        (j, self.record(loc, "system", "message", text, stamp, model, extra))
                    )
            else:
                self.unknown[str(kind)] += 1
                self.diagnostics.unrecognised("response part", str(kind), version=self.version,
                    path=self.ref.path, locator=f"json:/requests/{i}/response/{j}")  # fmt: skip
        end_thinking()
        end_reply()
        placed.sort(key=lambda item: item[0])
        for _, record in placed:
            yield record

    def tool(
        self,
        loc: str,
        part: dict[str, Any],
        stamp: float | None,
        model: str | None,
        base: dict[str, Any],
        shown: Counter[str],
    ) -> Iterator[Record]:
        tool_id = part.get("toolId") if isinstance(part.get("toolId"), str) else None
        shown[tool_id or ""] += 1
        said = markdown_value(part.get("pastTenseMessage")) or markdown_value(
            part.get("invocationMessage")
        )
        lines = [readable_links(said).strip()] if said.strip() else []
        specific = part.get("toolSpecificData")
        output = ""
        if isinstance(specific, dict):
            command = specific.get("commandLine")
            if isinstance(command, dict):
                line = (
                    command.get("userEdited")
                    or command.get("toolEdited")
                    or command.get("original")
                )
                if isinstance(line, str) and line:
                    lines.append(f"$ {line}")
            elif specific.get("kind") == "input" and specific.get("rawInput") not in (None, {}):
                lines.append(compact(specific["rawInput"]))
            term_out = specific.get("terminalCommandOutput")
            if isinstance(term_out, dict) and isinstance(term_out.get("text"), str):
                output = term_out["text"]
        details = part.get("resultDetails")
        if not output and isinstance(details, dict) and isinstance(details.get("output"), list):
            output = "\n".join(
                o["value"]
                for o in details["output"]
                if isinstance(o, dict) and isinstance(o.get("value"), str)
            )
        text = "\n".join(lines) or tool_id or "tool"
        extra = {**base, "tool": tool_id, "call_id": part.get("toolCallId")}
        yield self.record(loc, "assistant", "tool_call", text, stamp, model, extra)
        if output.strip():
            yield self.record(
                f"{loc}/result", "tool", "tool_result", output, stamp, None, dict(extra)
            )


def _is_file(path: Path, diagnostics: Diagnostics) -> bool:
    try:
        if path.is_file():
            return True
    except OSError:
        pass
    diagnostics.add(path, "", "not a regular file; skipped")
    return False


def parse_chat_session(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    """Records of one chat session (.json document or .jsonl mutation log)."""
    if not _is_file(ref.path, diagnostics):
        return
    if ref.path.suffix == ".jsonl":
        state = replay(ref.path, diagnostics)
        if state is None:
            diagnostics.add(ref.path, "", "mutation log has no initial state; skipped")
            return
    else:
        state = read_json(ref.path, diagnostics)
        if state is None:
            return
    if not isinstance(state, dict):
        diagnostics.add(ref.path, "", "session is not an object; skipped")
        return
    session = _Session(ref, cursor, diagnostics)
    session.cwd = workspace_cwd(ref.path, diagnostics)
    yield from session.records(state)


PARSERS: tuple[ParserSpec, ...] = (
    ParserSpec(
        "vscode-copilot.chat_session.v1",
        parse_chat_session,
        resumable=False,
        count_raw=count_session_raw,
        count_roles=count_session_roles,
    ),
    ParserSpec(
        "vscode-copilot.inline_history.v1",
        parse_inline_history,
        resumable=False,
        count_raw=count_inline_raw,
        count_roles=count_inline_roles,
    ),
)
