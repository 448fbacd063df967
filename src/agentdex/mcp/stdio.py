"""``agentdex mcp``: the MCP server on stdin/stdout, answering malformed lines as JSON-RPC asks.

The SDK's stdio transport drops a line it cannot read without a word, so a
client that sent garbage waits forever. Here every line is checked first:
not JSON gets ``-32700 Parse error``; a batch (an array: MCP has none), a
missing or wrong ``"jsonrpc": "2.0"``, an ``id`` that is not a string or an
integer (``null`` included: MCP forbids it), or a message that is neither
a request, a notification nor a response gets ``-32600 Invalid Request``,
with the ``id`` when one could be read (else ``null``). The connection goes
on; the next request is answered as usual. Blank lines are skipped.

At end of input the server still answers the requests it has (for up to
``DRAIN_SECONDS``) before it exits: the SDK would otherwise cancel them, so
``printf '...' | agentdex mcp`` could lose the last answer.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from io import TextIOWrapper
from typing import IO, Any, cast

import anyio
import mcp_types as types
import orjson
from mcp.shared.message import SessionMessage

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
#: How long, at end of input, requests already received may take to be answered.
DRAIN_SECONDS = 30.0

Problem = tuple[int, str, str | int | None]


def _request_id(message: dict[str, Any]) -> str | int | None:
    value = message.get("id")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def check_line(line: str) -> Problem | None:
    """What is wrong with one line as a JSON-RPC 2.0 message for MCP, or None."""
    return _read_line(line)[0]


def _read_line(line: str) -> tuple[Problem | None, Any]:
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return (PARSE_ERROR, "Parse error: the line is not JSON", None), None
    return _problem(message), message


def _problem(message: Any) -> Problem | None:
    if isinstance(message, list):
        return INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not supported by MCP", None
    if not isinstance(message, dict):
        return INVALID_REQUEST, "Invalid Request: a message must be a JSON object", None
    request_id = _request_id(message)
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', request_id
    if "id" in message and request_id is None:
        return INVALID_REQUEST, "Invalid Request: 'id' must be a string or an integer", None
    if "method" in message:
        if not isinstance(message["method"], str):
            return INVALID_REQUEST, "Invalid Request: 'method' must be a string", request_id
        return None
    if request_id is not None and ("result" in message or "error" in message):
        return None  # a response to a request of ours
    return INVALID_REQUEST, "Invalid Request: neither a request nor a response", request_id


class CheckedLines:
    """The wire's lines, minus malformed ones, which are answered through ``reply``.

    ``unanswered`` holds the ids of requests passed on and not yet answered
    (:class:`FlushedAnswers` removes them once written out); at end of input
    the iteration waits for it to empty.
    """

    def __init__(self, source: AsyncIterator[str] | Any) -> None:
        self.source = source
        self.reply: Callable[[SessionMessage], Awaitable[None]] | None = None
        self.unanswered: set[str | int] = set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.source:
            if not line.strip():
                continue
            problem, message = _read_line(line)
            if problem is None:
                self._track(message)
                yield line
                continue
            code, message, request_id = problem
            error = types.JSONRPCError(
                jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
            )
            if self.reply is not None:
                await self.reply(SessionMessage(error))
        with anyio.move_on_after(DRAIN_SECONDS):
            while self.unanswered:
                await anyio.sleep(0.02)

    def _track(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            return
        request_id = _request_id(message)
        if request_id is not None:
            self.unanswered.add(request_id)
        elif method == "notifications/cancelled":  # a cancelled request gets no answer
            params = message.get("params")
            if isinstance(params, dict):
                self.unanswered.discard(params.get("requestId"))


class FlushedAnswers:
    """The wire's stdout for the transport: notes each response once it is flushed out."""

    def __init__(self, file: Any, lines: CheckedLines) -> None:
        self.file = file
        self.lines = lines
        self.written: list[str | int] = []

    async def write(self, text: str) -> None:
        await self.file.write(text)
        try:
            message = orjson.loads(text)
        except orjson.JSONDecodeError:
            return
        if isinstance(message, dict) and ("result" in message or "error" in message):
            request_id = _request_id(message)
            if request_id is not None:
                self.written.append(request_id)

    async def flush(self) -> None:
        await self.file.flush()
        for request_id in self.written:
            self.lines.unanswered.discard(request_id)
        self.written.clear()


@contextlib.contextmanager
def _claimed(
    fd: int, fallback: IO[bytes], mode: str, diversion: Callable[[], int]
) -> Iterator[IO[bytes]]:
    """The wire on fd ``fd`` moved to a private descriptor; ``fd`` itself points elsewhere.

    As the SDK's own transport does: nothing a handler starts can read the
    protocol stream from fd 0 or write stray bytes into it on fd 1. Restored
    on exit.
    """
    try:
        import fcntl

        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
        target = diversion()
    except (ImportError, OSError):  # no fcntl (Windows) or no such fd: use it in place
        yield fallback
        return
    os.dup2(target, fd)
    os.close(target)
    try:
        # closefd=False: a transport thread may still use it after we return
        yield os.fdopen(private, mode, closefd=False)
    finally:
        os.dup2(private, fd)


def _null_input() -> int:
    return os.open(os.devnull, os.O_RDONLY)


def _stderr_copy() -> int:
    return os.dup(2)


async def serve_checked_stdio(server: Any) -> None:
    """Run ``server`` (an SDK ``Server``) on stdio with every line checked first."""
    from mcp.server.stdio import stdio_server

    with (
        _claimed(0, sys.stdin.buffer, "rb", _null_input) as wire_in,
        _claimed(1, sys.stdout.buffer, "wb", _stderr_copy) as wire_out,
    ):
        reader = TextIOWrapper(wire_in, encoding="utf-8", errors="replace")
        lines = CheckedLines(anyio.wrap_file(reader))
        writer = TextIOWrapper(wire_out, encoding="utf-8", write_through=True)
        answers = FlushedAnswers(anyio.wrap_file(writer), lines)
        async with stdio_server(stdin=cast(Any, lines), stdout=cast(Any, answers)) as streams:
            lines.reply = streams[1].send
            await server.run(*streams, server.create_initialization_options())
