"""Errors that carry an exit status, so every surface reports failures the same way.

Exit codes are part of the documented CLI contract (``docs/json-output.md``):

* 0 success, 1 a runtime failure, 2 a usage error (bad flag, malformed query);
* 3 a thing named does not exist (session, source, worktree);
* 4 a conflict (branch already checked out, target folder exists, dirty worktree);
* 5 a limit was hit (more worktrees than the configured maximum);
* 6 corrupt data (a session log whose first event is not ``start``);
* 7 partial: a search stopped at its time budget or was cancelled (the
  results found so far are printed);
* 8 unsupported: the request is valid but this agent or record cannot do it
  (e.g. resuming a VS Code chat from a command line).
"""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_CONFLICT = 4
EXIT_LIMIT = 5
EXIT_CORRUPT = 6
EXIT_PARTIAL = 7
EXIT_UNSUPPORTED = 8


class AgentdexError(Exception):
    """A failure with a one-line message and an exit status."""

    exit_code = EXIT_FAILURE
    code = "ERROR"

    def __init__(self, message: str, *, detail: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


class UsageError(AgentdexError):
    """The caller asked for something malformed (bad query, bad path, bad flag)."""

    exit_code = EXIT_USAGE
    code = "USAGE"


class NotFoundError(AgentdexError):
    """A named session, source or worktree does not exist."""

    exit_code = EXIT_NOT_FOUND
    code = "NOT_FOUND"


class ConflictError(AgentdexError):
    """The request conflicts with current state."""

    exit_code = EXIT_CONFLICT
    code = "CONFLICT"


class LimitError(AgentdexError):
    """A configured limit would be exceeded."""

    exit_code = EXIT_LIMIT
    code = "LIMIT"


class CorruptError(AgentdexError):
    """Stored data is not in the shape agentdex wrote; reported, never guessed at."""

    exit_code = EXIT_CORRUPT
    code = "CORRUPT"


class UnsupportedError(AgentdexError):
    """Valid input that this agent (or this record) cannot do, e.g. resume a VS Code chat."""

    exit_code = EXIT_UNSUPPORTED
    code = "UNSUPPORTED"


class RemoteError(AgentdexError):
    """An error a resident searcher's search met, with the code and exit status it had
    there: the CLI reports it as the search in its own process would have."""

    def __init__(self, code: str, message: str, exit_code: int, detail: Any = None) -> None:
        super().__init__(message, detail=detail)
        self.code = code
        self.exit_code = exit_code


class ConfigError(UsageError):
    """The configuration file is invalid (names file, line and key)."""

    code = "CONFIG"


class BusyError(LimitError):
    """Too many requests of one kind at once (HTTP 429 with ``Retry-After``)."""

    code = "BUSY"
    http_status = 429

    def __init__(self, message: str, *, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after
