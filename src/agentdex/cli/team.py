"""``agentdex team init|push|status``: team history on PostgreSQL (a thin shell over api.team).

Exit codes (docs/json-output.md): 0 ok; 1 the server cannot be reached, refused
the login, or the connection was lost mid-push (what was committed stays); 2 no
URL or a bad one; 3 the database has no agentdex schema; 4 another push from this
machine is running; 8 the database's schema is from a newer (or older) agentdex.
See docs/team.md.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from agentdex.cli._common import console, emit_json, home_of, json_option

URL_HELP = "postgresql:// URL of the team database [default: AGENTDEX_TEAM_URL or [team] url]"
MACHINE_HELP = "This machine's name there [default: AGENTDEX_MACHINE, [team] machine, host name]"


@click.group("team")
def team() -> None:
    """Push this machine's history to a team PostgreSQL database; see what is pending.

    Search it with `agentdex search --team`, serve it with `agentdex serve --team`.
    Secrets are redacted before anything is sent; projects listed in `[team] exclude`
    never leave this machine. See docs/team.md.
    """


@team.command("init")
@click.option("--url", default=None, help=URL_HELP)
@json_option
def init(url: str | None, as_json: bool) -> None:
    """Create or upgrade the team schema and the writer/reader roles (database owner)."""
    from agentdex.api import team as api

    info = api.init(url)
    if as_json:
        emit_json(info)
        return
    done = ", ".join(info["applied"]) or "nothing (already up to date)"
    click.echo(f"{info['url']}: applied {done}")
    click.echo(
        f"roles: {info['roles']['writer']} (push), {info['roles']['reader']} (search);"
        " docs/team.md shows how to add a machine"
    )


@team.command("push")
@click.option("--url", default=None, help=URL_HELP)
@click.option("--machine", default=None, help=MACHINE_HELP)
@click.option("--no-refresh", is_flag=True, help="Push the index as it is (no refresh first).")
@json_option
@click.pass_context
def push(
    ctx: click.Context, url: str | None, machine: str | None, no_refresh: bool, as_json: bool
) -> None:
    """Send what changed since the last push: new and changed conversations, removals.

    A second push with nothing changed sends nothing. A push stopped half-way
    (killed, the network lost) leaves whole conversations and is finished by
    the next one.
    """
    from agentdex.api import team as api

    progress = None
    if not as_json and sys.stderr.isatty():

        def progress(result: Any) -> None:
            click.echo(
                f"\r  {result.conversations_sent} conversations, {result.records_added} records,"
                f" {result.bytes_sent / 1e6:.1f} MB sent",
                err=True,
                nl=False,
            )

    result = api.push(
        url, machine=machine, home=home_of(ctx), refresh_first=not no_refresh, progress=progress
    )
    if progress is not None:
        click.echo("", err=True)
    data = result.to_json()
    if as_json:
        emit_json(data)
        return
    for warning in data["warnings"]:
        click.echo(f"agentdex: {warning}", err=True)
    click.echo(
        f"pushed {data['machine']} to {data['url']}: {data['conversations_sent']} conversations"
        f" sent ({data['records_added']} records added, {data['records_removed']} removed,"
        f" {data['bytes_sent'] / 1e6:.2f} MB), {data['conversations_unchanged']} unchanged,"
        f" {data['conversations_removed']} removed, {data['tombstones']} forgotten;"
        f" {data['redactions']} secrets redacted; {data['seconds']:.2f} s"
    )


@team.command("status")
@click.option("--url", default=None, help=URL_HELP)
@click.option("--machine", default=None, help=MACHINE_HELP)
@json_option
@click.pass_context
def status(ctx: click.Context, url: str | None, machine: str | None, as_json: bool) -> None:
    """What was pushed when, and what a push would send now (nothing is written)."""
    from agentdex.api import team as api

    info = api.status(url, machine=machine, home=home_of(ctx))
    if as_json:
        emit_json(info)
        return
    out = console()
    out.print(f"machine {info['machine']} at {info['url']} (role {info['owner']})", soft_wrap=True)
    out.print(
        f"here: {info['conversations_local']} conversations, {info['records_local']} records;"
        f" pushed: {info['conversations_pushed']} conversations, {info['records_pushed']} records"
    )
    pending = info["pending"]
    if info["up_to_date"]:
        out.print("up to date: a push would send nothing")
    else:
        out.print(
            f"pending: {pending['conversations_new']} new, {pending['conversations_changed']}"
            f" changed, {pending['conversations_removed']} to remove"
        )
    for push in info["pushes"]:
        out.print(
            f"  push {push['id']}: {push['status']}, started {push['started_at']},"
            f" {push['conversations']} conversations, +{push['records_added']}"
            f" -{push['records_removed']} records",
            soft_wrap=True,
        )
    if info["exclude"]:
        out.print("never pushed: " + ", ".join(info["exclude"]), soft_wrap=True)
