"""The command line read before click is imported: global options anywhere, and whether
this run is a local search that checks for changes first.

:func:`agentdex.cli.main` reads the arguments here to start a search's refresh
check at the process's start (:mod:`agentdex.api.check_early`); click parses
them afterwards as before. Nothing here imports click.
"""

from __future__ import annotations

import os

#: Top-level options that may also be given after the subcommand (True: takes a value).
GLOBAL_OPTIONS: dict[str, bool] = {"--home": True, "--color": True, "--no-pager": False}
#: Options that switch a command to machine output (errors then come as JSON too).
JSON_FLAGS = ("--json", "--ndjson")

#: in a search's arguments: no local refresh check (or no search at all)
NOT_CHECKED = frozenset({"--no-refresh", "--team", "--url", "--help", "-h"})


def scan_arguments(args: list[str]) -> tuple[list[str], bool]:
    """Move global options given after the subcommand to the front; is this a JSON run?

    Scanning stops at ``--`` and at the command of ``session run ID ...``
    (whatever follows belongs to the command being run), so neither the
    hoisting nor the JSON detection can touch a child command's arguments.
    """
    hoisted: list[str] = []
    rest: list[str] = []
    positionals: list[str] = []
    json_mode = False
    index = 0
    while index < len(args):
        token = args[index]
        if token == "--" or (positionals[:2] == ["session", "run"] and len(positionals) >= 3):
            rest.extend(args[index:])
            break
        name = token.split("=", 1)[0]
        if name in GLOBAL_OPTIONS:
            takes_value = GLOBAL_OPTIONS[name]
            if takes_value and "=" not in token and index + 1 < len(args):
                hoisted.extend(args[index : index + 2])
                index += 2
                continue
            hoisted.append(token)
        else:
            if token in JSON_FLAGS:
                json_mode = True
            if not token.startswith("-"):
                positionals.append(token)
            rest.append(token)
        index += 1
    return hoisted + rest, json_mode


def checked_search(args: list[str]) -> tuple[bool, str | None]:
    """Does this command line (``sys.argv[1:]``) look like a local ``search`` that checks
    for changes first, and of which ``--home`` (or ``$AGENTDEX_HOME``, as click reads it)?

    A guess from the tokens alone, before click parses them: ``search`` as the
    subcommand after the top-level options, and none of :data:`NOT_CHECKED` before
    a ``--``. A wrong guess only costs a forked check nobody takes."""
    ordered, _json_mode = scan_arguments(args)
    home: str | None = None
    index = 0
    while index < len(ordered):
        name, has_value, value = ordered[index].partition("=")
        if name in GLOBAL_OPTIONS:
            if GLOBAL_OPTIONS[name] and not has_value:
                index += 1
                value = ordered[index] if index < len(ordered) else ""
            if name == "--home":
                home = value
        elif name != "--json":
            break
        index += 1
    rest = ordered[index:]
    if not rest or rest[0] != "search":
        return False, None
    for token in rest[1:]:
        if token == "--":
            break
        if token.split("=", 1)[0] in NOT_CHECKED:
            return False, None
    if home is None:
        home = os.environ.get("AGENTDEX_HOME") or None  # click's envvar: an empty one is unset
    return True, home
