"""``agentdex session ...``: sessions with their own work directory.

A thin shell over :mod:`agentdex.api.sessions`.

Exit codes: 2 usage (an invalid id, no command to run), 3 unknown session /
directory / worktree / command, 4 conflict (an ambiguous id prefix, no work
dir to run in), 6 corrupt session log, and ``session run`` returns the
command's own exit status.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from agentdex.cli._common import emit_json, home_of, json_option


def _summary(s: dict[str, Any]) -> str:
    from agentdex.cli._format import shown_path
    from agentdex.cli._output import terminal_safe

    where = shown_path(s["working_directory"]) or "(no work directory)"
    label = f"  {s['label']}" if s["label"] else ""
    bound = f"  [worktree {shown_path(s['worktree'])}]" if s["worktree"] else ""
    return terminal_safe(f"{s['id']}  {where}{bound}{label}")


@click.group("session")
def session() -> None:
    """Sessions: an append-only log each, with their own work directory."""


@session.command("new")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=str), default=None)
@click.option("--worktree", "worktree_ref", default=None, help="Branch or path of a worktree.")
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Repository for --worktree (default: current directory).",
)
@click.option("--label", default=None)
@click.option("--agent", default=None, help="Command 'session run' starts, e.g. 'claude'.")
@click.option(
    "-q", "--quiet", is_flag=True, help="Print only the new id: sid=$(agentdex session new -q)."
)
@json_option
def new_cmd(
    workdir: str | None,
    worktree_ref: str | None,
    repo: str | None,
    label: str | None,
    agent: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Create a session (with no work directory unless one is given)."""
    from agentdex.api.sessions import new_session

    created = new_session(
        workdir=workdir, worktree=worktree_ref, label=label, agent=agent, repo=repo
    )
    if as_json:
        emit_json({"created": created})
    elif quiet:
        click.echo(created["id"])
    else:
        click.echo(f"created {_summary(created)}")


@session.command("list")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Only sessions whose work directory is DIR or inside it.",
)
@json_option
def list_cmd(workdir: str | None, as_json: bool) -> None:
    """Sessions, oldest first."""
    from agentdex.api.sessions import list_sessions

    result = list_sessions(workdir)
    if as_json:
        emit_json(result)
        return
    for s in result["sessions"]:
        click.echo(_summary(s))
    for problem in result["unreadable"]:
        click.echo(f"agentdex: skipped {problem['id']}: {problem['message']}", err=True)


@session.command("show")
@click.argument("session_id")
@json_option
@click.pass_context
def show_cmd(ctx: click.Context, session_id: str, as_json: bool) -> None:
    """One session: work directory, worktree, processes, linked agent history."""
    from agentdex.api.sessions import show_session
    from agentdex.cli._output import terminal_safe

    data = show_session(session_id, home=home_of(ctx))
    if as_json:
        emit_json(data)
        return
    click.echo(_summary(data))
    click.echo(f"created {data['created']}  last activity {data['last_activity']}")
    if data["agent"]:
        click.echo(f"agent: {data['agent']}")
    if data["last_exit_code"] is not None:
        click.echo(f"last exit code: {data['last_exit_code']}")
    if not data["history_available"]:
        click.echo("history: not available in this build")
    for row in data["history"]:
        line = f"  {row.get('agent')}  {row.get('session_id')}  {row.get('title') or ''}"
        click.echo(terminal_safe(line))


@session.command("workdir")
@click.argument("session_id")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=str))
@click.option("--clear", is_flag=True, help="Remove the session's work directory.")
@json_option
def workdir_cmd(session_id: str, directory: str | None, clear: bool, as_json: bool) -> None:
    """Set or clear ONE session's work directory."""
    from agentdex.api.sessions import set_workdir
    from agentdex.errors import UsageError

    if clear == (directory is not None):
        raise UsageError("give a DIRECTORY or --clear (exactly one)")
    data = set_workdir(session_id, None if clear else directory)
    if as_json:
        emit_json(data)
        return
    click.echo(_summary(data))


@session.command("run", context_settings={"ignore_unknown_options": True})
@click.argument("session_id")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run_cmd(session_id: str, command: tuple[str, ...]) -> None:
    """Run the session's agent (or the command after --) in its work directory."""
    from agentdex.api.sessions import run_session

    sys.exit(run_session(session_id, command))


@session.command("context")
@click.argument("session_id")
@json_option
def context_cmd(session_id: str, as_json: bool) -> None:
    """The workspace context snapshot of the session's work directory."""
    from agentdex.api.sessions import session_context

    snapshot = session_context(session_id)
    if hasattr(snapshot, "to_json"):
        snapshot = snapshot.to_json()
    emit_json(snapshot)
