"""``agentdex export``: one conversation as Markdown, standalone HTML or JSON."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import click

from agentdex.api.export import FORMATS
from agentdex.cli._common import emit_json, home_of, json_option


@click.command("export")
@click.argument("ref")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="md",
    show_default=True,
    help="md: Markdown; html: one standalone file (no script, no external asset); "
    "json: the normalized records with a header.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=True, path_type=Path),
    default=None,
    help="Write to FILE (or into DIR under a generated name) instead of stdout.",
)
@click.option(
    "--redact",
    is_flag=True,
    help="Mask what looks like keys and tokens in the export (docs/resume-and-export.md).",
)
@json_option
@click.pass_context
def export(
    ctx: click.Context, ref: str, fmt: str, output: Path | None, redact: bool, as_json: bool
) -> None:
    """Export conversation REF (a session id, a unique prefix, or SESSION@LOCATOR)
    as a readable transcript: header (agent, project, branch, worktree, model,
    times), every message in order, tool calls, tool results and reasoning
    marked. --redact masks secrets in the export only; the index is unchanged.
    With -o, --json reports what was written.
    """
    from agentdex.api import export as api
    from agentdex.errors import UsageError

    if as_json and (output is None or str(output) == "-"):
        raise UsageError("--json reports a written file: add -o FILE (or use --format json)")
    document = api.export(ref, home_of(ctx), format=fmt, redact=redact)
    if output is None or str(output) == "-":
        from agentdex.cli._output import terminal_safe

        # to a terminal, the document is read, not kept: nothing in it may drive the terminal
        tty = sys.stdout.isatty()
        sys.stdout.write(terminal_safe(document.content) if tty else document.content)
        sys.stdout.flush()
        return
    target = output / document.filename if output.is_dir() else output
    _write(target, document.content)
    if as_json:
        emit_json({**document.to_json(), "path": str(target.resolve())})
        return
    note = "" if document.redacted is None else f", {document.redacted} secrets masked"
    click.echo(f"wrote {target} ({document.to_json()['bytes']} bytes, {fmt}{note})")


def _write(target: Path, content: str) -> None:
    """Write atomically (a reader never sees half a file), mode 0600 (a transcript can hold
    secrets); a clear error when it cannot."""
    from agentdex.errors import AgentdexError, NotFoundError

    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise NotFoundError(f"cannot write {target}: folder {folder} does not exist")
    temp: str | None = None
    try:
        handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(content)
        os.replace(temp, target)
    except OSError as exc:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
        raise AgentdexError(f"cannot write {target}: {exc.strerror or exc}") from exc
