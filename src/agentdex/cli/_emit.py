"""What a command prints, without click: JSON on stdout, one-line reasons on stderr.

:mod:`agentdex.cli._common` re-exports these for every command; they live
here so that a fresh ``agentdex search``, which runs without importing click
(:mod:`agentdex.cli._fast`), prints and fails exactly as the click commands do.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

from agentdex.errors import UsageError


def json_bytes(data: Any, option: int = 0) -> bytes:
    """``data`` as JSON with every control character escaped (:mod:`agentdex.api.json_text`;
    orjson is imported there, when something is printed as JSON)."""
    from agentdex.api.json_text import json_bytes as encoded

    return encoded(data, option)


def emit_json(data: Any) -> None:
    """Write one JSON document to stdout."""
    from agentdex.api.json_text import json_document

    sys.stdout.buffer.write(json_document(data))
    sys.stdout.flush()


def emit_ndjson(data: Any) -> None:
    from agentdex.api.json_text import ndjson_line

    sys.stdout.buffer.write(ndjson_line(data))


def say(message: str) -> None:
    """One line on stderr, flushed (what ``click.echo(message, err=True)`` writes)."""
    stream = sys.stderr
    if stream is None:
        return
    stream.write(f"{message}\n")
    stream.flush()


def one_format(as_json: bool, ndjson: bool) -> None:
    """``--json`` and ``--ndjson`` are two formats: asking for both is a usage error."""
    if as_json and ndjson:
        raise UsageError("--json and --ndjson are two output formats; give one of them")


class PipeClosed(Exception):
    """stdout's reader went away (``| head``); not an OSError, so click does not catch it."""


def quiet_pipe_exit() -> NoReturn:
    """Exit 0 without the interpreter's "Exception ignored ... BrokenPipeError" at shutdown."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(0)


def report(code: str, message: str, exit_code: int, json_mode: bool, detail: Any = None) -> None:
    """One line on stderr; with --json also ``{"error": {...}}`` on stdout."""
    say(f"agentdex: {message}")
    if json_mode:
        error: dict[str, Any] = {"code": code, "message": message, "exit_code": exit_code}
        if detail is not None:
            error["detail"] = detail
        emit_ndjson({"error": error})
        sys.stdout.flush()
