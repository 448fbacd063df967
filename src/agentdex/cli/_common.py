"""Shared CLI plumbing: JSON output, errors and exit codes, global options.

Every command prints either human output (Rich, see :mod:`agentdex.cli._output`)
or, with ``--json``, one stable JSON document (``docs/json-output.md``).
A failure prints one line, ``agentdex: <reason>``, to stderr and exits with
the error's code; with ``--json``/``--ndjson`` it also prints
``{"error": {"code": ..., "message": ...}}`` on stdout, so a program reading
stdout always gets JSON. A closed pipe (``agentdex search x | head``) ends
the run quietly with status 0, as ripgrep does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from agentdex.cli._argv import GLOBAL_OPTIONS as GLOBAL_OPTIONS
from agentdex.cli._argv import JSON_FLAGS as JSON_FLAGS
from agentdex.cli._argv import scan_arguments as scan_arguments
from agentdex.cli._emit import PipeClosed as PipeClosed
from agentdex.cli._emit import emit_json as emit_json
from agentdex.cli._emit import emit_ndjson as emit_ndjson
from agentdex.cli._emit import json_bytes as json_bytes
from agentdex.cli._emit import one_format as one_format
from agentdex.cli._emit import quiet_pipe_exit as _quiet_pipe_exit
from agentdex.cli._emit import report as _report
from agentdex.errors import EXIT_USAGE, AgentdexError

F = TypeVar("F", bound=Callable[..., Any])


def _merge_global_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    """``--json`` given to the command, or before it (``agentdex --json sources``)."""
    root = ctx.find_root().obj or {}
    return bool(value) or bool(root.get("json"))


json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    callback=_merge_global_json,
    help="Print stable JSON (see docs/json-output.md).",
)
ndjson_option = click.option(
    "--ndjson", is_flag=True, help="One JSON object per line (per result), for streaming."
)


def print_result(as_json: bool, data: Any, human: Callable[..., None], *args: Any) -> None:
    """``data`` as JSON, or through ``human(data, *args)`` (paged when long on a terminal)."""
    if as_json:
        emit_json(data)
        return
    from agentdex.cli._output import paged

    with paged():
        human(data, *args)


def home_of(ctx: click.Context) -> str | None:
    """The ``--home`` given to the top-level command, if any."""
    root = ctx.find_root()
    obj = root.obj or {}
    home: str | None = obj.get("home")
    return home


def console(stderr: bool = False) -> Any:
    """A Rich console that follows the terminal/pipe conventions (imported lazily)."""
    from agentdex.cli._output import console as _console

    return _console(stderr=stderr)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a one-line reason and exit with ``code``."""
    click.echo(f"agentdex: {message}", err=True)
    sys.exit(code)


# -- running the group --------------------------------------------------------------------


def run_main(group: click.Group, argv: list[str] | None) -> Any:
    """Run the click group, mapping every failure to its exit code (never a traceback)."""
    args, json_mode = scan_arguments(list(sys.argv[1:] if argv is None else argv))
    try:
        try:
            status = group.main(args=args, prog_name="agentdex", standalone_mode=False)
            if isinstance(status, int) and not isinstance(status, bool) and status:
                sys.exit(status)  # a command's ctx.exit(n)
            return status
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            if json_mode:
                _report("USAGE", exc.format_message(), exc.exit_code or EXIT_USAGE, True)
            else:
                exc.show()
            sys.exit(exc.exit_code if exc.exit_code else EXIT_USAGE)
        except click.Abort:
            click.echo("agentdex: aborted", err=True)
            sys.exit(130)
        except AgentdexError as exc:
            _report(exc.code, exc.message, exc.exit_code, json_mode, exc.detail)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            sys.exit(130)
    except (PipeClosed, BrokenPipeError):
        _quiet_pipe_exit()


# -- commands whose arguments are a query ------------------------------------------------


class QueryCommand(click.Command):
    """A command whose positional arguments form a query, where ``-word`` excludes a word.

    Click would read ``-backoff`` as the short options ``-b -a -c ...`` and
    fail. Here a dash token is an option only when it is one: a known long
    option, a cluster of known short flags (``-iw``), or a known short option
    with its value (``-n5``, ``-n 5``). Anything else (``-backoff``, ``-5``)
    is a query word. Options may come before, between or after the words.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, self._split(ctx, args))

    def _split(self, ctx: click.Context, args: list[str]) -> list[str]:
        long_opts: dict[str, bool] = {}
        short_opts: dict[str, click.Option] = {}
        for param in self.get_params(ctx):
            if not isinstance(param, click.Option):
                continue
            for name in (*param.opts, *param.secondary_opts):
                if name.startswith("--"):
                    long_opts[name] = _takes_value(param)
                elif len(name) == 2:
                    short_opts[name[1]] = param
        options: list[str] = []
        words: list[str] = []
        index = 0
        while index < len(args):
            token = args[index]
            index += 1
            if token == "--":
                words.extend(args[index:])
                break
            if token.startswith("--"):
                options.append(token)
                if long_opts.get(token.split("=", 1)[0]) and "=" not in token and index < len(args):
                    options.append(args[index])
                    index += 1
            elif (
                len(token) > 1
                and token.startswith("-")
                and _is_short_cluster(ctx, token, short_opts)
            ):
                value = None
                if len(token) == 2 and _takes_value(short_opts[token[1]]) and index < len(args):
                    value = args[index]
                    index += 1
                options.extend(_long_forms(token, value, short_opts))
            else:
                words.append(token)
        return [*options, "--", *words] if words else options


def _long_forms(token: str, value: str | None, short_opts: dict[str, click.Option]) -> list[str]:
    """A known short cluster as the long options it stands for (``-iw`` -> ``--ignore-case
    --word``, ``-n5`` / ``-n 5`` -> ``--limit=5``): click tries every dash token as a long
    option first, and its failed try builds a "did you mean" list (importing difflib)."""
    first = short_opts[token[1]]
    if _takes_value(first):
        name = _long_name(first, token[1])
        if name is None or (value is None and len(token) == 2):
            return [token] if value is None else [token, value]
        return [f"{name}={token[2:] if value is None else value}"]
    return [_long_name(short_opts[letter], letter) or f"-{letter}" for letter in token[1:]]


def _long_name(option: click.Option, letter: str) -> str | None:
    """The long name beside ``-letter`` (a ``--x/--no-x`` flag's ``-X`` may be the ``--no-x``)."""
    names = option.secondary_opts if f"-{letter}" in option.secondary_opts else option.opts
    return next((name for name in names if name.startswith("--")), None)


def _takes_value(option: click.Option) -> bool:
    return not (option.is_flag or option.count)


def _is_short_cluster(ctx: click.Context, token: str, short_opts: dict[str, click.Option]) -> bool:
    """``-iw`` (known flags) or ``-n5`` / ``-n`` (a known option and a valid value)."""
    first = short_opts.get(token[1])
    if first is not None and _takes_value(first):
        if len(token) == 2:
            return True
        try:
            first.type.convert(token[2:], first, ctx)
        except click.BadParameter:
            return False  # "-nothing" excludes "nothing"; it is not "-n othing"
        return True
    return all(
        letter in short_opts and not _takes_value(short_opts[letter]) for letter in token[1:]
    )
