"""``agentdex audit``: parsed records against each parser's independent raw count."""

from __future__ import annotations

from typing import Any

import click

from agentdex.cli._common import console, home_of, json_option, print_result


@click.command("audit")
@json_option
@click.option("--all", "show_all", is_flag=True, help="List healthy sources too.")
@click.pass_context
def audit(ctx: click.Context, as_json: bool, show_all: bool) -> None:
    """Parse every source and compare with an independent raw count.

    A format change that silently parses nothing shows up as ``silent``; a
    parser that drops or invents units, reads harness text as prompts or
    splits a reply shows up as ``mismatch`` naming the conversation; a
    branch the agent no longer shows (Cursor) is listed as ``abandoned``.
    Record types, parts and fields an agent wrote that agentdex does not
    recognise are listed per agent and agent version (format drift).
    Exit status is 0 either way (problems are data, not usage errors).
    """
    from agentdex.api import history

    data = history.audit(home_of(ctx))
    print_result(as_json, data, _human, show_all)


def _human(data: dict[str, Any], show_all: bool) -> None:
    from agentdex.cli._format import tilde

    out = console()
    totals = data["totals"]
    styles = {"ok": "green", "empty": "yellow", "not-parsed": "dim"}
    for row in data["sources"]:
        roles = row.get("roles") or {}
        listed = roles.get("problems") or []
        if not show_all and row["status"] in {"ok", "not-parsed"} and not listed:
            continue
        raw = "-" if row["raw"] is None else str(row["raw"])
        out.print(
            f"[{styles.get(row['status'], 'red')}]{row['status']:<11}[/] "
            f"{row['store']:<30} records {row['records']:>6}  units {row['units']:>6}/{raw:<6} "
            f"{_roles(roles)}diag {row.get('diagnostic_count', 0):>3}  "
            f"{tilde(row['path'], data['home'])}",
            soft_wrap=True,
        )
        for diag in row["diagnostics"][:3]:
            out.print(f"    [dim]{diag['locator']} {diag['message']}[/]", soft_wrap=True)
        for conv in listed[:5]:
            colour = "red" if conv["status"] == "mismatch" else "yellow"
            out.print(
                f"    [{colour}]{conv['status']}[/] {conv['session_id']}: prompts "
                f"{conv['prompts']}/{conv['raw_prompts']}, replies "
                f"{conv['replies']}/{conv['raw_replies']}",
                soft_wrap=True,
            )
    drift = data.get("drift") or []
    if drift:
        out.print(
            "[bold]format drift[/] [dim](written by the agent, not recognised by agentdex)[/]"
        )
    for line in drift:
        version = line["version"] or "version not recorded"
        out.print(
            f"  [yellow]{line['agent']}[/] {version}: {line['what']} {line['name']!r} "
            f"x{line['count']} in {line['files']} file(s)  "
            f"[dim]first {tilde(line['path'], data['home'])} {line['locator']}[/]",
            soft_wrap=True,
        )
    out.print(
        f"{totals['sources']} sources, {totals['records']} records, "
        f"{totals['units']} units parsed of {totals['raw']} counted raw, "
        f"prompts {totals['prompts']}/{totals['raw_prompts']}, "
        f"replies {totals['replies']}/{totals['raw_replies']}, "
        f"{totals['problems']} with problems"
        + (f", {totals['abandoned']} abandoned branches" if totals["abandoned"] else "")
        + (f", {totals['drift']} unrecognised kinds" if totals.get("drift") else "")
    )


def _roles(roles: dict[str, object]) -> str:
    """``prompts p/raw  replies r/raw`` (parsed/independent), or nothing without a counter."""
    if not roles or roles.get("raw_prompts") is None:
        return ""
    return (
        f"prompts {roles['prompts']}/{roles['raw_prompts']}  "
        f"replies {roles['replies']}/{roles['raw_replies']}  "
    )
