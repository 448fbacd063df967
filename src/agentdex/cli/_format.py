"""Small human-output helpers shared by commands (no heavy imports).

``datetime`` is imported where a time is parsed, not here: a fresh search answered by
the resident imports this module for :func:`pinned_now` alone, and ``datetime`` was
~2 ms of its ~40 ms of CPU when ``$AGENTDEX_NOW`` is not set (nearly always).
"""

from __future__ import annotations

import os
import time


def human_size(size: int | None) -> str:
    """``1536`` -> ``1.5 KB``."""
    if size is None:
        return "-"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def pinned_now() -> float | None:
    """``$AGENTDEX_NOW`` (ISO-8601 time or epoch seconds), else None (the real clock).

    Relative times ("2d ago"), ``since:7d`` and recency ranking are computed
    as of this moment: the README's tour pins it so its output stays true.
    """
    value = os.environ.get("AGENTDEX_NOW", "").strip()
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    from datetime import datetime

    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        from agentdex.errors import UsageError

        raise UsageError(f"AGENTDEX_NOW={value}: not an ISO-8601 time or epoch seconds") from None
    if parsed.tzinfo is None:
        from datetime import UTC

        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def now() -> float:
    """The moment output is relative to: ``$AGENTDEX_NOW`` when set, else the clock."""
    pinned = pinned_now()
    return pinned if pinned is not None else time.time()


def relative_time(iso: str | None, at: float | None = None) -> str:
    """``2026-11-20T10:00:00Z`` -> ``2d ago`` (as of ``at``, default :func:`now`)."""
    if not iso:
        return "-"
    from datetime import datetime

    try:
        then = datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return iso
    delta = (at if at is not None else now()) - then
    if delta < 0:
        return "in the future"
    for seconds, unit in (
        (86400 * 365, "y"),
        (86400 * 30, "mo"),
        (86400, "d"),
        (3600, "h"),
        (60, "m"),
    ):
        if delta >= seconds:
            return f"{int(delta // seconds)}{unit} ago"
    return "just now"


def tilde(path: str, home: str) -> str:
    """Show ``path`` relative to ``home`` as ``~/...`` when it is inside it."""
    prefix = home.rstrip("/") + "/"
    return "~/" + path[len(prefix) :] if path.startswith(prefix) else path


def time_mark(store_id: str) -> str:
    """``~`` before a time the store did not record (its file's mtime stands in)."""
    from agentdex.catalogue import store

    try:
        return "~" if store(store_id).times == "file-mtime" else ""
    except KeyError:
        return ""


def shown_path(path: str | None, home: str | None = None) -> str | None:
    """A path as a person reads it: ``~/...`` on a terminal, absolute in a pipe."""
    if path is None:
        return None
    from agentdex.cli._output import is_terminal

    if not is_terminal():
        return path
    from agentdex.paths import home_dir

    return tilde(path, str(home_dir(home)))
