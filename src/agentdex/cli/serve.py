"""``agentdex serve``: the HTTP API on loopback, behind a bearer token.

Binds 127.0.0.1 by default; a non-loopback ``--host`` is refused unless
``--allow-remote`` is given. ``--port 0`` picks a free port: the socket is
bound here, before the URL is printed, so the printed URL is already
accepting connections (no race with a client reading it).

This is the one CLI module that imports :mod:`agentdex.http`: its job is to
run that app. Everything the app answers still goes through
:mod:`agentdex.api`.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from agentdex.cli._common import emit_ndjson, home_of, json_option
from agentdex.errors import AgentdexError, ConflictError, UsageError

F = TypeVar("F", bound=Callable[..., Any])


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    """Bind before printing the URL. A port in use is a conflict (exit 4), not a usage error;
    a host that is not an address of this machine is a usage error (2)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        message = f"cannot bind {host}:{port}: {exc.strerror or exc}"
        if exc.errno == errno.EADDRINUSE:
            raise ConflictError(f"{message} (another process has it; try --port 0)") from exc
        if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
            raise UsageError(message) from exc
        raise AgentdexError(message) from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


@dataclass(slots=True)
class Prepared:
    """A bound socket and the app to run on it (shared by ``serve`` and ``ui``)."""

    sock: socket.socket
    url: str
    app: Any
    token: str
    token_path: str
    workspace: str


def prepare(
    ctx: click.Context,
    host: str,
    port: int,
    allow_remote: bool,
    workspace: str | None,
    *,
    fallback_port: bool = False,
) -> Prepared:
    """Check the host, load the token (0600), bind the socket and build the app.

    ``fallback_port``: when ``port`` is taken, bind a free one instead of failing.
    """
    if not is_loopback(host) and not allow_remote:
        raise UsageError(
            f"refusing to bind non-loopback host {host}; pass --allow-remote to expose "
            "the API beyond this machine"
        )
    from agentdex.api.context import workspace_path
    from agentdex.asgi import build_app, load_or_create_token, token_path

    ws = workspace_path(workspace)
    token = load_or_create_token()
    path = token_path()
    if stat.S_IMODE(os.stat(path).st_mode) & 0o077:
        os.chmod(path, 0o600)  # a token others can read is no token
    try:
        sock = _bind(host, port)
    except ConflictError:  # the port is in use: fall back to a free one when allowed
        if not fallback_port or port == 0:
            raise
        sock = _bind(host, 0)
    bound_port = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host else host  # "::1" and "[::1]" alike
    url = f"http://{shown}:{bound_port}"
    app = build_app(token, home=home_of(ctx), cwd=ws, loopback_only=is_loopback(host))
    app.state.context_workspace = ws
    app.state.context_home = home_of(ctx)
    app.state.home = home_of(ctx)
    return Prepared(sock, url, app, token, str(path), ws)


def _team_mode(team: bool, url: str | None) -> str | None:
    """With --team: check the database now (one-line errors before binding); its masked URL.

    The URL goes into this process's ``AGENTDEX_TEAM_URL``, where the search
    workers and the MCP tools (scope "team") find it.
    """
    if not team:
        if url is not None:
            raise UsageError("--url is for the team database: add --team")
        return None
    from agentdex.api import team as team_api

    settings = team_api.check(url)
    os.environ["AGENTDEX_TEAM_URL"] = settings.url
    return settings.masked


def run_server(prepared: Prepared, host: str, log_level: str) -> None:
    """Serve until interrupted (the socket is already listening)."""
    import uvicorn

    from agentdex.asgi import server_config

    if not is_loopback(host):
        click.echo(f"agentdex: warning: serving on non-loopback {host}", err=True)
    sys.stdout.flush()
    server = uvicorn.Server(server_config(prepared.app, log_level=log_level))
    try:
        server.run(sockets=[prepared.sock])
    finally:
        prepared.sock.close()


host_option = click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to bind."
)
allow_remote_option = click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a non-loopback --host (the token is then the only protection).",
)
workspace_option = click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Default workspace of the context endpoints and MCP tools (default: current directory).",
)
log_level_option = click.option(
    "--log-level",
    default="warning",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)


def port_option(default: int) -> Callable[[F], F]:
    return click.option(
        "--port",
        type=click.IntRange(0, 65535),
        default=default,
        show_default=True,
        help="Port to bind (0 picks a free one).",
    )


@click.command("serve")
@host_option
@port_option(8765)
@allow_remote_option
@workspace_option
@log_level_option
@click.option(
    "--team",
    is_flag=True,
    help="Serve the team database (search, conversations, show) instead of this machine's index.",
)
@click.option("--url", "team_url", default=None, help="Team database URL (with --team).")
@json_option
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    allow_remote: bool,
    workspace: str | None,
    log_level: str,
    team: bool,
    team_url: str | None,
    as_json: bool,
) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json) with a bearer token.

    With --team, search, the conversation list and show read the team database
    (docs/team.md); MCP's search tool reaches it with scope "team".
    """
    masked = _team_mode(team, team_url)
    prepared = prepare(ctx, host, port, allow_remote, workspace)
    if masked is not None:
        prepared.app.state.team_url = os.environ["AGENTDEX_TEAM_URL"]
    url, token, path = prepared.url, prepared.token, prepared.token_path
    if as_json:
        emit_ndjson(
            {
                "url": url,
                "token": token,
                "token_path": path,
                "pid": os.getpid(),
                "workspace": prepared.workspace,
                "openapi": f"{url}/openapi.json",
                "mcp": f"{url}/mcp",
                **({"team": masked} if masked is not None else {}),
            }
        )
    else:
        click.echo(f"agentdex API at {url}  (OpenAPI: {url}/openapi.json, MCP: {url}/mcp)")
        click.echo(f"token: {token}  (stored in {path}, mode 0600)")
        if masked is not None:
            click.echo(f"team:  {masked}")
        click.echo(f"use:   curl -H 'Authorization: Bearer {token}' {url}/api/v0/context/snapshot")
    run_server(prepared, host, log_level)
