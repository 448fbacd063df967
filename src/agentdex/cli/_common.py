"""Shared CLI plumbing: JSON output, error-to-exit-code mapping, the console.

Every command prints either human output (Rich) or, with ``--json``, one
stable JSON document (``docs/json-output.md``). Failures print one line,
``agentdex: <reason>``, to stderr and exit with the error's code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click
import orjson

from agentdex.errors import EXIT_USAGE, AgentdexError

F = TypeVar("F", bound=Callable[..., Any])

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print stable JSON (see docs/json-output.md)."
)


def emit_json(data: Any) -> None:
    """Write one JSON document to stdout."""
    sys.stdout.buffer.write(
        orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str)
    )
    sys.stdout.buffer.write(b"\n")
    sys.stdout.flush()


def emit_ndjson(data: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(data, default=str) + b"\n")


def home_of(ctx: click.Context) -> str | None:
    """The ``--home`` given to the top-level command, if any."""
    root = ctx.find_root()
    obj = root.obj or {}
    home: str | None = obj.get("home")
    return home


def console(stderr: bool = False) -> Any:
    """A Rich console (imported lazily)."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def fail(message: str, code: int = 1) -> None:
    """Print a one-line reason and exit with ``code``."""
    click.echo(f"agentdex: {message}", err=True)
    sys.exit(code)


def run_main(group: click.Group, argv: list[str] | None) -> Any:
    """Run the click group mapping AgentdexError to its exit code (no tracebacks)."""
    try:
        return group.main(args=argv, prog_name="agentdex", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code if exc.exit_code else EXIT_USAGE)
    except click.Abort:
        click.echo("agentdex: aborted", err=True)
        sys.exit(130)
    except AgentdexError as exc:
        fail(exc.message, exc.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except KeyboardInterrupt:
        sys.exit(130)
