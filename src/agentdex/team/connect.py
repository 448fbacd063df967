"""Connecting to the team database: URLs shown masked, failures as one-line errors.

The URL is a libpq ``postgresql://`` URL; every libpq parameter in it is honoured
(``sslmode``, ``sslrootcert``, ``connect_timeout``, ...), and a password may also
come from ``PGPASSWORD`` or ``~/.pgpass`` as with ``psql``. A password is never
printed: :func:`mask_url` replaces it with ``***`` (and drops ``password=``
parameters).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from agentdex.errors import AgentdexError, ConflictError, UsageError

CONNECT_TIMEOUT = 10
#: what a connection says it is (``pg_stat_activity.application_name``)
APPLICATION = "agentdex"


class TeamUnreachable(AgentdexError):
    """The server cannot be reached, or the connection was lost."""

    code = "TEAM_UNREACHABLE"


class TeamAuthFailed(AgentdexError):
    """The server refused the login (wrong password, unknown role, no access)."""

    code = "TEAM_AUTH"


class TeamPermission(AgentdexError):
    """Logged in, but this role may not do that (a reader pushing, another machine's rows)."""

    code = "FORBIDDEN"


def mask_url(url: str) -> str:
    """``url`` with its password (in the authority or as ``password=``) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable team URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{host}"
    query = parts.query
    if query:
        pairs = [(k, "***" if k.lower() == "password" else v) for k, v in parse_qsl(query)]
        query = urlencode(pairs, safe="*/:")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def validate_url(url: str | None) -> str:
    """The URL if it is a ``postgresql://`` URL, else a usage error saying where to set one."""
    if not url:
        raise UsageError(
            "no team database: set AGENTDEX_TEAM_URL, `[team] url` in the config, or pass --url"
        )
    if not re.match(r"^postgres(ql)?://", url):
        raise UsageError(f"team URL must start with postgresql:// (got {mask_url(url)})")
    return url


def _explain(exc: Exception, masked: str) -> AgentdexError:
    """A libpq/psycopg failure as one line (never the password, never a traceback)."""
    import psycopg

    text = " ".join(str(exc).split())
    sqlstate = getattr(exc, "sqlstate", None) or ""
    lowered = text.lower()
    if sqlstate == "28P01" or "password authentication failed" in lowered:
        return TeamAuthFailed(f"{masked}: login refused (wrong password or unknown role)")
    if sqlstate.startswith("28") or "no pg_hba.conf entry" in lowered:
        return TeamAuthFailed(f"{masked}: login refused: {_short(text)}")
    if sqlstate == "3D000" or ("database" in lowered and "does not exist" in lowered):
        return TeamUnreachable(f"{masked}: no such database")
    if "ssl" in lowered and ("not support" in lowered or "required" in lowered):
        return TeamUnreachable(f"{masked}: {_short(text)}")
    if isinstance(exc, psycopg.OperationalError):
        return TeamUnreachable(f"cannot reach the team database {masked}: {_short(text)}")
    return AgentdexError(f"team database {masked}: {_short(text)}")


def _short(text: str) -> str:
    text = re.sub(r"password=\S+", "password=***", text)
    text = re.sub(
        r'(connection failed: )?connection to server at "[^"]*"( \([^)]*\))?, port \d+ failed: ',
        "",
        text,
    )
    return text[:300]


def connect(url: str, *, masked: str | None = None, autocommit: bool = True) -> Any:
    """A psycopg connection, or a one-line :class:`AgentdexError`."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - a dependency of agentdex
        raise AgentdexError(
            "the team commands need psycopg: pip install 'psycopg[binary]'"
        ) from None
    masked = masked or mask_url(url)
    try:
        conn = psycopg.connect(
            url,
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT,
            application_name=APPLICATION,
        )
    except psycopg.Error as exc:
        raise _explain(exc, masked) from None
    return conn


def lost(exc: Exception, masked: str, doing: str) -> AgentdexError:
    """An error met while talking to the server, as one line (what was going on, and why)."""
    import psycopg

    sqlstate = getattr(exc, "sqlstate", None) or ""
    if sqlstate == "42501":  # insufficient_privilege, or a row-level security refusal
        return TeamPermission(
            f"{masked}: not allowed for this role while {doing}: {_short(str(exc))}"
        )
    if sqlstate in ("55P03", "40P01", "40001"):
        return ConflictError(f"{masked}: {doing} collided with another session; run it again")
    if isinstance(exc, psycopg.OperationalError) or sqlstate.startswith(("08", "57")):
        return TeamUnreachable(
            f"lost the connection to the team database {masked} while {doing}"
            f" ({_short(str(exc))}); what was committed stays, run it again to finish"
        )
    return _explain(exc, masked)


@contextmanager
def talking(masked: str, doing: str) -> Iterator[None]:
    """Turn any psycopg error raised inside into :func:`lost`'s one-line error."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        raise lost(exc, masked, doing) from None
