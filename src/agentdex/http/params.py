"""Input types whose OpenAPI schema states exactly what the server enforces.

Each constrained string is one regular expression used twice: the server
validates with it (a mismatch is a 400 ``USAGE`` error, before any library
call) and the OpenAPI document publishes it as ``pattern``. The patterns
stay in the subset where ECMA-262 (JSON Schema) and Python's ``re`` agree:
explicit character classes, no ``.``, ``\\s`` or ``\\d``; the end of the value is
``(?![\\s\\S])`` because Python's ``$`` also matches before a final newline.
Values are checked the way JSON Schema does (``re.search``).

``QUERY`` is a query in the agentdex query language (``docs/query-language.md``):
its grammar is not a regular language, so the schema names it with
``format: agentdex-query`` and a malformed query is a documented 400.
Schema-driven fuzzers are taught the format (``tests/schemathesis_hooks.py``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema

from agentdex.api.sessions import SESSION_ID_PATTERN
from agentdex.api.worktrees import BRANCH_PATTERN

#: One character of a path or name: anything but a control character.
_CHAR = r"[^\x00-\x1f\x7f]"
#: The end of the value, in both engines.
END = r"(?![\s\S])"
#: The value does not start with a ``..`` component ...
_FIRST_NOT_DOTDOT = rf"(?!\.\.(?:/|{END}))"
#: ... and has none later.
_LATER_NOT_DOTDOT = rf"(?!{_CHAR}*/\.\.(?:/|{END}))"

PATH_PATTERN = rf"^{_CHAR}+{END}"
WORKTREE_PATH_PATTERN = rf"^{_FIRST_NOT_DOTDOT}{_LATER_NOT_DOTDOT}{_CHAR}+{END}"
#: ``~``, ``~/...`` or absolute; no ``..`` component (so no ``~user`` either).
SOURCE_PATH_PATTERN = rf"^(?=~{END}|~/|/){_LATER_NOT_DOTDOT}{_CHAR}+{END}"
#: The URL form of a source path: as above, but the leading ``/`` may be left out.
SOURCE_PARAM_PATTERN = rf"^(?!~[^/]){_FIRST_NOT_DOTDOT}{_LATER_NOT_DOTDOT}{_CHAR}+{END}"
#: What Python's ``str.isspace`` calls whitespace, outside the control characters.
_SPACE = r"\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: A conversation reference (session id, prefix or SESSION@LOCATOR): no control
#: characters, and something besides whitespace (the library strips it).
REF_PATTERN = rf"^{_CHAR}*[^\x00-\x1f\x7f{_SPACE}]{_CHAR}*{END}"
#: (SESSION_ID_PATTERN and BRANCH_PATTERN come from the library: the same expressions
#: the sessions store and the worktree manager check.)
#: A start point for a new branch: any revision that cannot be read as an option.
REVISION_PATTERN = rf"^(?!-){_CHAR}+{END}"


def _matching(pattern: str, description: str) -> Any:
    """``str`` validated by ``pattern`` (Python ``re``) and documented with it."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if compiled.search(value) is None:
            raise ValueError(f"{description}: {value!r} does not match {pattern}")
        return value

    schema = {"type": "string", "pattern": pattern, "description": description}
    return Annotated[str, AfterValidator(check), WithJsonSchema(schema)]


Path = _matching(PATH_PATTERN, "a path (no control characters)")
WorktreePath = _matching(
    WORKTREE_PATH_PATTERN, "a worktree path (no control characters, no '..' component)"
)
WorktreeRef = _matching(
    WORKTREE_PATH_PATTERN, "a branch checked out in a worktree, or a worktree's path"
)
SourcePath = _matching(SOURCE_PATH_PATTERN, "an absolute or ~/ path, no '..' component")
SourceParam = _matching(
    SOURCE_PARAM_PATTERN, "a source path, URL-encoded; the leading '/' may be left out"
)
SessionId = _matching(SESSION_ID_PATTERN, "a session id or a unique prefix of one")
Branch = _matching(BRANCH_PATTERN, "a branch name git accepts (git check-ref-format --branch)")
Revision = _matching(REVISION_PATTERN, "a revision (branch, tag or commit) to start from")
Ref = _matching(REF_PATTERN, "a session id, a unique prefix of one, or SESSION@LOCATOR")
#: a calendar date, YYYY-MM-DD (one of that shape that is no date, 2026-02-30, is a 400)
_DAY_PATTERN = rf"^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}{END}"
_day = re.compile(_DAY_PATTERN)


def _day_check(value: str) -> str:
    if _day.search(value) is None:
        raise ValueError(f"a date YYYY-MM-DD: {value!r} does not match {_DAY_PATTERN}")
    return value


Day = Annotated[
    str,
    AfterValidator(_day_check),
    WithJsonSchema({"type": "string", "format": "date", "description": "a date YYYY-MM-DD"}),
]
AgentId = _matching(rf"^[a-z0-9][a-z0-9._-]{{0,63}}{END}", "an agent id")


def _query_check(value: str) -> str:
    if not value.strip():
        raise ValueError("the query is empty")
    return value


#: A valid calendar date, year 0001 to 9999 (February 29th only in leap years).
_LEAP = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = (
    r"(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
_DATE = rf"(?:(?!0000)[0-9]{{4}}-{_MONTH_DAY}|{_LEAP}-02-29)"
_CLOCK = r"(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]{1,6})?)?"
_ZONE = r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])?"
#: Every form a time of the context history takes (``at``, ``from``, ``to``), exactly: an
#: ISO-8601 date or date and time (UTC unless it says), an age (``30m``, ``12h``, ``7d``,
#: ``2w``, ``1y``; also ``s``, ``min``), ``now``, ``today``, ``yesterday``, or ``vN``.
TIME_PATTERN = (
    rf"^(?:now|today|yesterday|v[0-9]{{1,9}}|[0-9]{{1,9}}(?:\.[0-9]{{1,6}})?(?:s|min|m|h|d|w|y)"
    rf"|{_DATE}(?:[T ]{_CLOCK}{_ZONE})?){END}"
)
#: A time or version of the context history: what the pattern allows, the server accepts.
Time = _matching(
    TIME_PATTERN,
    "a time: an ISO-8601 date or date and time (2026-01-31, 2026-01-31T09:30Z, "
    "2026-01-31T09:30:00+02:00), an age (30m, 12h, 7d, 2w, 1y), now, today or yesterday; "
    "or vN, the Nth recorded version",
)

QUERY_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "format": "agentdex-query",
    "description": "A query in the agentdex query language (docs/query-language.md); "
    "a malformed one is a 400.",
}
Query = Annotated[str, AfterValidator(_query_check), WithJsonSchema(QUERY_SCHEMA)]
