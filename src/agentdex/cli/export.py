"""``agentdex export``: one conversation as Markdown, standalone HTML or JSON."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
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
    # every error (not found, ambiguous...) is raised here, before a byte is written
    with api.open_export(ref, home_of(ctx), format=fmt, redact=redact) as stream:
        if output is None or str(output) == "-":
            _to_stdout(stream.chunks())
            return
        target = output / stream.filename if output.is_dir() else output
        written = _write(target, stream.chunks())
        report = stream.to_json(written)
    if as_json:
        emit_json({**report, "path": str(target.resolve())})
        return
    note = "" if report["redacted"] is None else f", {report['redacted']} secrets masked"
    click.echo(f"wrote {target} ({written} bytes, {fmt}{note})")


def _to_stdout(chunks: Iterator[str]) -> None:
    """Write the document as it is rendered; to a terminal, the document is read, not
    kept: nothing in it may drive the terminal (a ``\\r`` ending a chunk waits for the
    next one, so a ``\\r\\n`` split between two stays a line break)."""
    from agentdex.cli._output import terminal_safe

    tty = sys.stdout.isatty()
    held = ""
    for chunk in chunks:
        if not tty:
            sys.stdout.write(chunk)
            continue
        chunk = held + chunk
        held = "\r" if chunk.endswith("\r") else ""
        sys.stdout.write(terminal_safe(chunk[: len(chunk) - len(held)]))
    if held:
        sys.stdout.write(terminal_safe(held))
    sys.stdout.flush()


def _write(target: Path, chunks: Iterator[str]) -> int:
    """Write the chunks as they come, atomically (a reader never sees half a file), mode
    0600 (a transcript can hold secrets); the bytes written, or a clear error."""
    from agentdex.errors import AgentdexError, NotFoundError

    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise NotFoundError(f"cannot write {target}: folder {folder} does not exist")
    temp: str | None = None
    written = 0
    try:
        handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(handle, "wb") as stream:
            for chunk in chunks:
                data = chunk.encode("utf-8")
                stream.write(data)
                written += len(data)
        os.replace(temp, target)
    except OSError as exc:
        raise AgentdexError(f"cannot write {target}: {exc.strerror or exc}") from exc
    finally:
        if temp is not None:  # gone after os.replace; else a failed or interrupted write
            Path(temp).unlink(missing_ok=True)
    return written
