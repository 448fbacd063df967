"""``agentdex worktree list|add|remove``: a thin shell over :mod:`agentdex.api.worktrees`.

Exit codes: 2 invalid branch name / bad path, 3 unknown branch or path,
4 conflict (already checked out, target exists, dirty, the primary
worktree), 5 over ``[worktrees] max``.
"""

from __future__ import annotations

from typing import Any

import click

from agentdex.cli._common import emit_json, json_option

repo_option = click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Any directory inside the repository (default: current directory).",
)


def _row(w: dict[str, Any]) -> str:
    marks = []
    if w["primary"]:
        marks.append("primary")
    if w["detached"]:
        marks.append("detached")
    if w["dirty"]:
        marks.append(f"dirty:{w['dirty_file_count']}")
    if w["locked"]:
        marks.append("locked")
    if w["prunable"]:
        marks.append("prunable")
    from agentdex.cli._format import shown_path

    return f"{shown_path(w['path'])}  {w['label']}  {w['head'] or '-'}  {' '.join(marks)}".rstrip()


@click.group("worktree")
def worktree() -> None:
    """List, add and remove git worktrees (sibling folders <repo>-wt-<branch>)."""


@worktree.command("list")
@repo_option
@json_option
def list_cmd(repo: str | None, as_json: bool) -> None:
    """Every worktree: path, branch (or short hash), HEAD, primary, dirty, prunable."""
    from agentdex.api.worktrees import list_worktrees

    rows = list_worktrees(repo)
    if as_json:
        emit_json({"worktrees": rows})
        return
    for w in rows:
        click.echo(_row(w))


@worktree.command("add")
@click.argument("branch")
@click.option("--new", "create", is_flag=True, help="Create BRANCH (from --base, default HEAD).")
@click.option("--base", default=None, help="Start point for --new.")
@repo_option
@json_option
def add_cmd(branch: str, create: bool, base: str | None, repo: str | None, as_json: bool) -> None:
    """Check BRANCH out in a new sibling worktree folder."""
    from agentdex.api.worktrees import add_worktree

    created = add_worktree(branch, create=create, base=base, repo=repo)
    if as_json:
        emit_json({"created": created})
        return
    from agentdex.cli._format import shown_path

    click.echo(f"created {shown_path(created['path'])}  ({created['label']} at {created['head']})")


@worktree.command("remove")
@click.argument("path")
@click.option("--force", is_flag=True, help="Remove even with uncommitted or untracked files.")
@repo_option
@json_option
def remove_cmd(path: str, force: bool, repo: str | None, as_json: bool) -> None:
    """Remove a linked worktree and detach the sessions bound to it."""
    from agentdex.api.worktrees import remove_worktree

    result = remove_worktree(path, force=force, repo=repo)
    if as_json:
        emit_json(result)
        return
    from agentdex.cli._format import shown_path

    click.echo(f"removed {shown_path(result['removed']['path'])}")
    for session_id in result["detached_sessions"]:
        click.echo(f"detached session {session_id}")
