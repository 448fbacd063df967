"""The ``agentdex`` command line: a thin click shell over :mod:`agentdex.api`.

The group and its options are in :mod:`agentdex.cli._group` (``cli``,
``COMMANDS``: register a command there); subcommands live one module each
and are imported only when run, so ``agentdex --help`` stays fast. This
module imports no click: :func:`main` first starts a search's refresh check
(:mod:`agentdex.api.check_early`), runs a search that needs no click without
it (:mod:`agentdex.cli._fast`), and otherwise imports and runs the group.
"""

from __future__ import annotations

import sys
from typing import Any

#: names of the click group's module, imported on first use (``from agentdex.cli import cli``)
_GROUP = ("cli", "COMMANDS", "LazyGroup")


def __getattr__(name: str) -> Any:
    if name not in _GROUP:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from agentdex.cli import _group

    return getattr(_group, name)


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point.

    A local search that checks for changes has its check forked here, before
    click and the search modules are imported (:func:`agentdex.cli._argv.checked_search`
    guesses it from the arguments; a check the command did not take is killed). A
    search whose command line click would take as it is runs without click
    (:mod:`agentdex.cli._fast`); every other command line goes through click.
    A command that allowed it (:mod:`agentdex.cli._exit`) ends the process
    here once it is done, without the interpreter's teardown; ``argv``
    given (a caller running the CLI in its own process) never does either."""
    from agentdex.cli import _exit
    from agentdex.paths import data_dir, private_umask, tighten

    private_umask()  # whatever agentdex writes is 0600 in 0700 folders
    tighten(data_dir())
    if argv is not None:
        from agentdex.cli._common import run_main
        from agentdex.cli._group import cli

        return run_main(cli, argv)
    from agentdex.cli._argv import checked_search, search_call

    search, home = checked_search(sys.argv[1:])
    if search:
        from agentdex.api import search_resident

        if not search_resident.listening(home):  # else the resident checks, not a fork
            from agentdex.api import check_early

            check_early.start(home)
    call = search_call(sys.argv[1:])
    try:
        if call is not None:  # a search click would run as it is: run it without click
            from agentdex.cli import _fast

            _fast.run(*call)  # exits
        from agentdex.cli._common import run_main
        from agentdex.cli._group import cli

        status = run_main(cli, argv)
    except SystemExit as exc:
        _discard_early()
        _exit.leave(exc.code)
        raise
    finally:
        _discard_early()
    if status is None:
        _exit.leave(0)
    return status


def _discard_early() -> None:
    """Kill a refresh check forked for a search that did not take it (if one was forked)."""
    early = sys.modules.get("agentdex.api.check_early")
    if early is not None:
        early.discard()


__all__ = ["COMMANDS", "cli", "main"]
