"""``agentdex mcp``: the MCP server on stdin/stdout, answering malformed lines as JSON-RPC asks.

The SDK's stdio transport drops a line it cannot read without a word, so a
client that sent garbage waits forever. Here every line is checked first:
not JSON gets ``-32700 Parse error``; a batch (an array: MCP has none), a
missing or wrong ``"jsonrpc": "2.0"``, an ``id`` that is not a string or an
integer (``null`` included: MCP forbids it), or a message that is neither
a request, a notification nor a response gets ``-32600 Invalid Request``,
with the ``id`` when one could be read (else ``null``). The connection goes
on; the next request is answered as usual. Blank lines are skipped.
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

Problem = tuple[int, str, str | int | None]


def _request_id(message: dict[str, Any]) -> str | int | None:
    value = message.get("id")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def check_line(line: str) -> Problem | None:
    """What is wrong with one line as a JSON-RPC 2.0 message for MCP, or None."""
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return PARSE_ERROR, "Parse error: the line is not JSON", None
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
    """The wire's lines, minus malformed ones, which are answered through ``reply``."""

    def __init__(self, source: AsyncIterator[str] | Any) -> None:
        self.source = source
        self.reply: Callable[[SessionMessage], Awaitable[None]] | None = None

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.source:
            if not line.strip():
                continue
            problem = check_line(line)
            if problem is None:
                yield line
                continue
            code, message, request_id = problem
            error = types.JSONRPCError(
                jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
            )
            if self.reply is not None:
                await self.reply(SessionMessage(error))


@contextlib.contextmanager
def claimed_stdin() -> Iterator[IO[bytes]]:
    """The wire (fd 0) on a private descriptor, with fd 0 itself pointed at the null device.

    As the SDK's own transport does: nothing a handler starts can read the
    protocol stream. Restored on exit.
    """
    try:
        import fcntl

        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except (ImportError, OSError):  # no fcntl (Windows) or no fd 0: read it in place
        yield sys.stdin.buffer
        return
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # closefd=False: a reader thread may still block on it after we return
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        os.dup2(private, 0)


async def serve_checked_stdio(server: Any) -> None:
    """Run ``server`` (an SDK ``Server``) on stdio with every line checked first."""
    from mcp.server.stdio import stdio_server

    with claimed_stdin() as wire:
        text = TextIOWrapper(wire, encoding="utf-8", errors="replace")
        lines = CheckedLines(anyio.wrap_file(text))
        async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
            lines.reply = write_stream.send
            await server.run(read_stream, write_stream, server.create_initialization_options())
