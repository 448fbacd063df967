"""``agentdex ui``: the web explorer: the local server plus the page, opened in a browser.

It runs the same server as ``agentdex serve`` (loopback, bearer token) and
opens ``/#login=<one-time code>``: the page trades the code for the token
once, so the token never appears in a URL, a log or the browser history
(docs/web-ui.md). ``--no-open`` prints that link instead.
"""

from __future__ import annotations

import os
import threading
from urllib.parse import quote

import click

from agentdex.cli._common import emit_ndjson, json_option
from agentdex.cli.serve import (
    allow_remote_option,
    host_option,
    log_level_option,
    port_option,
    prepare,
    run_server,
    workspace_option,
)


def _open_browser(url: str) -> None:
    """Open ``url`` without blocking the server (a console browser may hold the terminal)."""
    import webbrowser

    def opener() -> None:
        try:
            opened = webbrowser.open(url)
        except Exception:  # any launcher failure: the printed link still works
            opened = False
        if not opened:
            click.echo(f"agentdex: could not open a browser; open this link: {url}", err=True)

    threading.Thread(target=opener, name="agentdex-open-browser", daemon=True).start()


@click.command("ui")
@click.argument("ref", required=False)
@host_option
@port_option(8765)
@allow_remote_option
@workspace_option
@click.option("--no-open", is_flag=True, help="Print the login link instead of opening it.")
@log_level_option
@json_option
@click.pass_context
def ui(
    ctx: click.Context,
    ref: str | None,
    host: str,
    port: int,
    allow_remote: bool,
    workspace: str | None,
    no_open: bool,
    log_level: str,
    as_json: bool,
) -> None:
    """Open the web explorer: search, conversations, context, sessions, worktrees.

    REF (optional) opens that conversation (a session id or SESSION@LOCATOR).
    When the default port is taken, a free one is used.
    """
    from agentdex.asgi import LOGIN_CODE_SECONDS, issue_login_code

    explicit_port = ctx.get_parameter_source("port") is click.core.ParameterSource.COMMANDLINE
    prepared = prepare(ctx, host, port, allow_remote, workspace, fallback_port=not explicit_port)
    code = issue_login_code(prepared.app)
    target = f"&next={quote('/c/' + ref, safe='')}" if ref else ""
    page = f"{prepared.url}/#login={code}{target}"
    if as_json:
        emit_ndjson(
            {
                "url": prepared.url,
                "page": page,
                "token_path": prepared.token_path,
                "pid": os.getpid(),
                "workspace": prepared.workspace,
                "opened": not no_open,
            }
        )
    elif no_open:
        click.echo(f"agentdex UI at {prepared.url}/")
        click.echo(f"open: {page}")
        minutes = round(LOGIN_CODE_SECONDS / 60)
        click.echo(f"      (the link logs in once and expires in {minutes} minutes;")
        click.echo(f"       later, paste the token stored in {prepared.token_path})")
    else:
        click.echo(f"agentdex UI at {prepared.url}/  (opening your browser; Ctrl-C stops)")
    if not no_open:
        _open_browser(page)
    run_server(prepared, host, log_level)
