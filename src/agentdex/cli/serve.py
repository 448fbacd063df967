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

import click

from agentdex.cli._common import emit_ndjson, home_of, json_option
from agentdex.errors import AgentdexError, ConflictError, UsageError


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


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to bind (0 picks a free one).",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a non-loopback --host (the token is then the only protection).",
)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Default workspace of the context endpoints and MCP tools (default: current directory).",
)
@click.option(
    "--log-level",
    default="warning",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
@json_option
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    allow_remote: bool,
    workspace: str | None,
    log_level: str,
    as_json: bool,
) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json) with a bearer token."""
    if not is_loopback(host) and not allow_remote:
        raise UsageError(
            f"refusing to bind non-loopback host {host}; pass --allow-remote to expose "
            "the API beyond this machine"
        )
    import uvicorn

    from agentdex.api.context import workspace_path
    from agentdex.asgi import build_app, load_or_create_token, token_path

    ws = workspace_path(workspace)
    token = load_or_create_token()
    path = token_path()
    if stat.S_IMODE(os.stat(path).st_mode) & 0o077:
        os.chmod(path, 0o600)  # a token others can read is no token
    sock = _bind(host, port)
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound_port}"
    app = build_app(token, home=home_of(ctx), cwd=ws)
    app.state.context_workspace = ws
    app.state.context_home = home_of(ctx)
    if as_json:
        emit_ndjson(
            {
                "url": url,
                "token": token,
                "token_path": str(path),
                "pid": os.getpid(),
                "workspace": ws,
                "openapi": f"{url}/openapi.json",
                "mcp": f"{url}/mcp",
            }
        )
    else:
        click.echo(f"agentdex API at {url}  (OpenAPI: {url}/openapi.json, MCP: {url}/mcp)")
        click.echo(f"token: {token}  (stored in {path}, mode 0600)")
        click.echo(f"use:   curl -H 'Authorization: Bearer {token}' {url}/api/v0/context/snapshot")
    if not is_loopback(host):
        click.echo(f"agentdex: warning: serving on non-loopback {host}", err=True)
    sys.stdout.flush()
    config = uvicorn.Config(app, log_level=log_level, lifespan="on")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
