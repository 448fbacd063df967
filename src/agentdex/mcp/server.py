"""The agentdex MCP server: tools and resources over :mod:`agentdex.api`.

Built on the SDK's low-level ``Server`` so every tool's JSON schema is ours
(enums from the catalogue) and every failure is a tool result with
``isError`` — a bad argument, a missing session, an API that is not in this
build — never a crashed connection. Handlers run the (blocking) library
calls in a worker thread so one slow call never stalls the HTTP transport.
Every response goes through :func:`agentdex.mcp.budget.fit`.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from functools import partial
from typing import Any

import anyio
import mcp_types as types
import orjson
from jsonschema import Draft202012Validator
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from agentdex import __version__
from agentdex.errors import AgentdexError
from agentdex.mcp import budget, resources
from agentdex.mcp.tools import TOOLS, Settings, ToolSpec, Unavailable

log = logging.getLogger("agentdex.mcp")

INSTRUCTIONS = (
    "agentdex indexes every AI coding agent's history on this machine (Claude Code, Codex, "
    "Gemini CLI, VS Code Copilot...). Use `search` to find whether a problem was solved before "
    "and in which project/worktree, `show_session` with a result's ref to read that exchange, "
    "`workspace_context` to see what a directory tells its agents. Read the "
    "agentdex://query-language resource before writing non-trivial queries. Responses are "
    "size-limited; a cut response has 'response_truncated' with the arguments for the next page."
)
#: MCP error code for an unknown resource URI (the spec's "resource not found").
RESOURCE_NOT_FOUND = -32002


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)],
        is_error=True,
    )


def _validation_message(tool: ToolSpec, arguments: dict[str, Any]) -> str | None:
    """One line per argument problem, or None when the arguments are valid."""
    validator = Draft202012Validator(tool.input_schema())
    problems = []
    for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path) or "arguments"
        problems.append(f"{where}: {error.message}")
    if not problems:
        return None
    return f"invalid arguments for {tool.name}: " + "; ".join(problems)


class AgentdexMCP:
    """The tools and resources, independent of the transport that carries them."""

    def __init__(
        self,
        *,
        home: str | None = None,
        cwd: str | None = None,
        max_bytes: int | None = None,
    ) -> None:
        self.settings = Settings(home=home) if cwd is None else Settings(home=home, cwd=cwd)
        self.max_bytes = budget.resolve_max_bytes(max_bytes)
        self.tools = {tool.name: tool for tool in TOOLS}

    def list_tools(self) -> list[types.Tool]:
        return [
            types.Tool(
                name=tool.name,
                title=tool.title,
                description=tool.description,
                input_schema=tool.input_schema(),
                output_schema=tool.output,
                annotations=types.ToolAnnotations(
                    title=tool.title, read_only_hint=True, open_world_hint=False
                ),
            )
            for tool in self.tools.values()
        ]

    def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        cancel: threading.Event | None = None,
    ) -> types.CallToolResult:
        """Run one tool to a result; every failure becomes an ``isError`` result.

        ``cancel``, set from another thread, asks a running search to stop.
        """
        tool = self.tools.get(name)
        if tool is None:
            return _error_result(f"unknown tool {name!r}; tools: {', '.join(self.tools)}")
        args = dict(arguments or {})
        problem = _validation_message(tool, args)
        if problem is not None:
            return _error_result(problem)
        try:
            settings = self.settings if cancel is None else replace(self.settings, cancel=cancel)
            payload = tool.handler(args, settings)
        except Unavailable as exc:
            return _error_result(f"{name} is not available in this build ({exc})")
        except AgentdexError as exc:
            detail = f" ({exc.detail})" if exc.detail else ""
            return _error_result(f"{exc.code}: {exc.message}{detail}")
        except Exception as exc:  # a library bug must not take the server down
            log.exception("tool %s failed", name)
            return _error_result(f"internal error in {name}: {type(exc).__name__}: {exc}")
        paging = tool.paging(args, payload) if tool.paging is not None else None
        text = budget.fit(payload, self.max_bytes, paging)
        # The same fitted object twice: structured (the current spec) and as text (older clients).
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=orjson.loads(text),
        )

    def list_resources(self) -> list[types.Resource]:
        return [
            types.Resource(
                uri=spec.uri,
                name=spec.name,
                title=spec.title,
                description=spec.description,
                mime_type=spec.mime_type,
            )
            for spec in resources.RESOURCES
        ]

    def list_resource_templates(self) -> list[types.ResourceTemplate]:
        spec = resources.CATALOGUE_TEMPLATE
        return [
            types.ResourceTemplate(
                uri_template=spec.uri,
                name=spec.name,
                title=spec.title,
                description=spec.description,
                mime_type=spec.mime_type,
            )
        ]

    def read_resource(self, uri: str) -> types.ReadResourceResult:
        found = resources.read(uri, self.max_bytes)
        if found is None:
            known = [spec.uri for spec in (*resources.RESOURCES, resources.CATALOGUE_TEMPLATE)]
            raise MCPError(
                RESOURCE_NOT_FOUND, f"no resource {uri!r}; resources: {', '.join(known)}"
            )
        mime_type, text = found
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=mime_type, text=text)]
        )


def build_server(
    *, home: str | None = None, cwd: str | None = None, max_bytes: int | None = None
) -> Server[Any]:
    """The MCP server object, ready for any transport (stdio or streamable HTTP)."""
    core = AgentdexMCP(home=home, cwd=cwd, max_bytes=max_bytes)

    async def on_list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=core.list_tools())

    async def on_call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        from agentdex.api.semantic_background import note_activity

        note_activity()  # the background embedding steps aside while a tool runs
        cancel = threading.Event()
        call = partial(core.call, params.name, params.arguments, cancel)
        try:
            # abandon_on_cancel: a cancelled call returns at once; ``cancel`` stops its work
            return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            cancel.set()
            raise

    async def on_list_resources(_ctx: Any, _params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=core.list_resources())

    async def on_list_resource_templates(
        _ctx: Any, _params: Any
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=core.list_resource_templates())

    async def on_read_resource(
        _ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await anyio.to_thread.run_sync(core.read_resource, str(params.uri))

    return Server(
        "agentdex",
        version=__version__,
        title="agentdex",
        description="Search every AI coding agent's history, sessions and workspace context.",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
    )


async def serve_stdio(
    *, home: str | None = None, cwd: str | None = None, max_bytes: int | None = None
) -> None:
    """Serve one MCP client on stdin/stdout until it disconnects.

    Malformed lines get JSON-RPC errors (:mod:`agentdex.mcp.stdio`).
    """
    from agentdex.mcp.stdio import serve_checked_stdio

    await serve_checked_stdio(build_server(home=home, cwd=cwd, max_bytes=max_bytes))


def streamable_http(
    *, home: str | None = None, cwd: str | None = None, max_bytes: int | None = None
) -> tuple[Any, Any]:
    """(ASGI app, session manager) serving MCP over streamable HTTP.

    The app answers at whatever path it is routed to; the caller runs
    ``manager.run()`` for the app's lifetime and puts auth in front of it.
    Host and Origin headers are checked against loopback (DNS rebinding).
    """
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )
    from mcp.server.transport_security import TransportSecuritySettings

    loopback = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    server = build_server(home=home, cwd=cwd, max_bytes=max_bytes)
    manager = StreamableHTTPSessionManager(app=server, security_settings=loopback)
    return StreamableHTTPASGIApp(manager), manager
