"""A fresh ``agentdex search`` without click: the group's and the command's work, in order.

Importing click, the group and the search command, and click's parsing, cost a
fresh search ~20 ms of the ~120 ms it spends before its answer (docs/performance.md,
s10-start). :func:`agentdex.cli.main` runs a search here when
:func:`agentdex.cli._argv.search_call` has read its command line exactly as click
would (anything else, ``--help`` and every mistake included, goes through click):
the group's callback (output settings, the ``--home`` check, the missing-config
warning), then :func:`agentdex.cli._searching.run`, with failures mapped to the
same messages and exit statuses as :func:`agentdex.cli._common.run_main`.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

from agentdex.cli._emit import PipeClosed, quiet_pipe_exit, report, say
from agentdex.errors import AgentdexError


def run(group: dict[str, Any], values: dict[str, Any], json_mode: bool) -> NoReturn:
    """Run the search :func:`agentdex.cli._argv.search_call` read and exit with its status
    (``json_mode``: failures also as JSON on stdout)."""
    try:
        try:
            status = _search(group, values)
        except AgentdexError as exc:
            report(exc.code, exc.message, exc.exit_code, json_mode, exc.detail)
            sys.exit(exc.exit_code)
        except (EOFError, KeyboardInterrupt):
            say("")  # click's blank line closing the terminal's ^C
            say("agentdex: aborted")
            sys.exit(130)
    except (PipeClosed, BrokenPipeError):
        quiet_pipe_exit()
    sys.exit(status)


def _search(group: dict[str, Any], values: dict[str, Any]) -> int:
    from agentdex.cli._output import configure
    from agentdex.cli._searching import run as run_search
    from agentdex.config import missing_config_warning

    configure(group["color"], pager=not group["no_pager"])
    message = missing_config_warning()
    if message:
        say(f"agentdex: warning: {message}")
    options = dict(values)
    options["as_json"] = options["as_json"] or group["json"]
    return run_search(options.pop("query"), home=group["home"], **options)
