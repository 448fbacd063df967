"""Small human-output helpers shared by commands (no heavy imports)."""

from __future__ import annotations

import time
from datetime import datetime


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


def relative_time(iso: str | None, now: float | None = None) -> str:
    """``2026-11-20T10:00:00Z`` -> ``2d ago``."""
    if not iso:
        return "-"
    try:
        then = datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return iso
    delta = (now if now is not None else time.time()) - then
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
