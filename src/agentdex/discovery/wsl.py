"""The WSL bridge: chat written by a Windows-side editor, seen from inside WSL.

Exactly as ADR 0009 (``shared/seeds/000``) describes: probe
``${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/AppData/Roaming/<edition>/User``
only when ``/proc/version`` says ``microsoft`` and only for directories
that exist. ``AGENTDEX_WSL=1|0`` forces detection on or off (tests, demos).
"""

from __future__ import annotations

import os
from pathlib import Path

PROC_VERSION = "/proc/version"
DEFAULT_USERS_ROOT = "/mnt/c/Users"


def is_wsl() -> bool:
    """True inside WSL (or when ``AGENTDEX_WSL`` forces it)."""
    forced = os.environ.get("AGENTDEX_WSL")
    if forced in {"0", "1"}:
        return forced == "1"
    try:
        with open(PROC_VERSION, encoding="utf-8", errors="replace") as handle:
            return "microsoft" in handle.read(4096).lower()
    except OSError:
        return False


def users_root() -> Path:
    return Path(os.environ.get("AGENTDEX_WSL_USERS_ROOT") or DEFAULT_USERS_ROOT)


def windows_app_dirs(editions: tuple[str, ...], app: str | None = None) -> list[tuple[Path, str]]:
    """``(user_dir, host)`` pairs for Windows profiles; empty unless on WSL.

    ``host`` names the side the files were written on (``windows:<user>``).
    With ``app`` given, returns ``Roaming/<app>`` dirs instead of editions'
    ``User`` dirs (for stores such as Cursor that share the layout).
    """
    from agentdex.discovery import observe

    found: list[tuple[Path, str]] = []
    for profile, host in windows_profiles():
        roaming = profile / "AppData" / "Roaming"
        names = (app,) if app else editions
        for name in names:
            candidate = roaming / name / "User"
            observe.note(candidate)
            if candidate.is_dir():
                found.append((candidate, host))
    return found


def windows_profiles() -> list[tuple[Path, str]]:
    """``(profile dir, host)`` for every Windows user profile; empty unless on WSL."""
    if not is_wsl():
        return []
    from agentdex.discovery import observe

    root = users_root()
    observe.note(root)
    try:
        with os.scandir(root) as entries:
            users = sorted(
                (entry for entry in entries if entry.is_dir(follow_symlinks=False)),
                key=lambda entry: entry.name,
            )
    except OSError:
        return []
    return [(Path(entry.path), f"windows:{entry.name}") for entry in users]
