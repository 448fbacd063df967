"""The command line read before click is imported: global options anywhere, and whether
this run is a local search that checks for changes first.

:func:`agentdex.cli.main` reads the arguments here to start a search's refresh
check at the process's start (:mod:`agentdex.api.check_early`); click parses
them afterwards as before. Nothing here imports click.
"""

from __future__ import annotations

import os
import stat
from typing import Any

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


# -- a search's command line, read without click ------------------------------------------

#: the group's own options before a subcommand (True: takes a value)
GROUP_OPTIONS: dict[str, bool] = {**GLOBAL_OPTIONS, "--json": False}
#: ``--color``'s choices (the group's click.Choice)
COLORS = ("auto", "always", "never")
#: ``agentdex search``'s options as :mod:`agentdex.cli.search` declares them: long name ->
#: (parameter, what its value is: ``None`` a flag, else ``int``, ``sort``, ``seconds``, ``str``)
SEARCH_OPTIONS: dict[str, tuple[str, str | None]] = {
    "--json": ("as_json", None),
    "--ndjson": ("ndjson", None),
    "--limit": ("limit", "int"),
    "--sort": ("sort", "sort"),
    "--regex": ("regex", None),
    "--word": ("word", None),
    "--ignore-case": ("ignore_case", None),
    "--case-sensitive": ("case_sensitive", None),
    "--no-refresh": ("no_refresh", None),
    "--here": ("here", None),
    "--only-here": ("only_here", None),
    "--no-dedup": ("no_dedup", None),
    "--lexical": ("lexical", None),
    "--semantic": ("semantic", None),
    "--exact-count": ("exact_count", None),
    "--time-budget": ("time_budget", "seconds"),
    "--team": ("team", None),
    "--url": ("url", "str"),
}
#: the one-letter flags of :data:`SEARCH_OPTIONS`, which may be clustered (``-iw``); the
#: one other letter is ``-n`` (``--limit``), and ``-h`` is help (click's)
SEARCH_FLAGS = {"E": "--regex", "w": "--word", "i": "--ignore-case", "s": "--case-sensitive"}
SORTS = ("relevance", "time")
#: ``--time-budget``'s upper bound (:data:`agentdex.config.MAX_TIME_BUDGET`; a test
#: holds them equal: the config module is not imported to read it)
MAX_SECONDS = 3600.0


def search_defaults() -> dict[str, Any]:
    """Every search parameter at the value click gives it when the option is absent."""
    values: dict[str, Any] = {name: False for name, kind in SEARCH_OPTIONS.values() if not kind}
    values.update(limit=20, sort="relevance", time_budget=None, url=None)
    return values


def search_call(args: list[str]) -> tuple[dict[str, Any], dict[str, Any], bool] | None:
    """``sys.argv[1:]`` of a search click would run without an error or help, read as
    click reads it: ``(the group's values, the search's, JSON errors?)``; None for anything else
    (another command, ``--help``, an unknown option or a bad value, no query), which
    then goes through click as before and gets click's message and exit status.

    The group's values: ``home``, ``home_from_env``, ``color``, ``no_pager``,
    ``json``; the search's: :func:`search_defaults` overridden, and ``query``, the
    words, split from the options as :class:`agentdex.cli._common.QueryCommand` does.
    JSON errors: a ``--json`` or ``--ndjson`` anywhere (:func:`scan_arguments`)."""
    ordered, json_mode = scan_arguments(args)
    group: dict[str, Any] = {"home": None, "color": "auto", "no_pager": False, "json": False}
    index = 0
    while index < len(ordered) and ordered[index] != "search":
        name, has_value, value = ordered[index].partition("=")
        takes = GROUP_OPTIONS.get(name)
        if takes is None or (has_value and not takes):
            return None  # -V, --help, an unknown option or another command: click's
        if takes and not has_value:
            index += 1
            if index >= len(ordered):
                return None
            value = ordered[index]
        if name == "--color" and value not in COLORS:
            return None
        group[name[2:].replace("-", "_")] = value if takes else True
        index += 1
    if index >= len(ordered):
        return None
    group["home_from_env"] = group["home"] is None and bool(os.environ.get("AGENTDEX_HOME"))
    if group["home_from_env"]:
        group["home"] = os.environ["AGENTDEX_HOME"]
    if group["home"] is not None and not _usable_home(group["home"]):
        return None  # click's Path check, or agentdex's "no such directory": theirs say why
    values = _search_values(ordered[index + 1 :])
    if values is None or not values["query"]:
        return None
    return group, values, json_mode


def _usable_home(home: str) -> bool:
    """Would click's ``Path(file_okay=False)`` take ``home``, and the group's check find a
    directory there (``~`` expanded)?"""
    found = os.path.isdir(os.path.expanduser(home))
    try:
        mode = os.stat(home).st_mode
    except OSError:
        return found  # click takes a path that does not exist as it is
    return found and stat.S_ISDIR(mode) and os.access(home, os.R_OK)


def _search_values(args: list[str]) -> dict[str, Any] | None:
    """The search's own arguments (after ``search``) read as click reads them, or None."""
    values = search_defaults()
    words: list[str] = []
    index = 0
    while index < len(args):
        token = args[index]
        index += 1
        if token == "--":
            words.extend(args[index:])
            break
        if token.startswith("--"):
            name, has_value, value = token.partition("=")
            option = SEARCH_OPTIONS.get(name)
            if option is None or (has_value and option[1] is None):
                return None  # --help, an unknown option, a flag given a value
            if option[1] is not None and not has_value:
                if index >= len(args) and not words:
                    return None
                # the last token: click reads the "--" QueryCommand puts before the words
                value = args[index] if index < len(args) else "--"
                index += 1
            if not _set(values, option, value):
                return None
            continue
        letters = token[1:] if len(token) > 1 and token.startswith("-") else ""
        if letters[:1] == "n":
            if len(letters) == 1:  # -n VALUE
                if index >= len(args):
                    return None
                letters, index = "n" + args[index], index + 1
            if not _set(values, SEARCH_OPTIONS["--limit"], letters[1:]):
                if len(token) == 2:
                    return None
                words.append(token)  # "-nothing" excludes "nothing"; it is not "-n othing"
            continue
        if letters and all(letter in SEARCH_FLAGS or letter == "h" for letter in letters):
            if "h" in letters:
                return None  # help
            for letter in letters:
                values[SEARCH_OPTIONS[SEARCH_FLAGS[letter]][0]] = True
            continue
        words.append(token)
    values["query"] = tuple(words)
    return values


def _set(values: dict[str, Any], option: tuple[str, str | None], value: str) -> bool:
    """Store an option's value converted as click converts it; False when click would not
    take it (click then says why)."""
    name, kind = option
    if kind is None:
        values[name] = True
        return True
    try:
        if kind == "int":
            values[name] = int(value)
        elif kind == "seconds":
            seconds = float(value)
            if not 0 < seconds <= MAX_SECONDS:
                return False
            values[name] = seconds
        elif kind == "sort":
            if value not in SORTS:
                return False
            values[name] = value
        else:
            values[name] = value
    except ValueError:
        return False
    return True
