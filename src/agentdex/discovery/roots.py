"""Named discovery roots: where each agent's folder is on this machine.

Each function takes the home directory and returns candidate roots
(existing directories only). Env overrides that name a missing directory
fall back to the default with a warning. Catalogue rows refer to these
roots by name; this module is the only place that knows env variables and
OS layouts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentdex.discovery import wsl

VSCODE_EDITIONS = ("Code", "Code - Insiders", "VSCodium", "Code - OSS")


@dataclass(frozen=True, slots=True)
class Root:
    """A directory a store's globs are applied to; ``host`` is set across the WSL bridge."""

    name: str
    path: Path
    host: str | None = None


Warn = Callable[[str], None]


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _override(var: str, warn: Warn) -> list[Path] | None:
    """Directories named by env ``var`` (comma-separated); None when unset or all missing."""
    value = os.environ.get(var)
    if not value:
        return None
    found: list[Path] = []
    for part in value.split(","):
        part = part.strip()
        if not part:
            continue
        path = Path(part).expanduser()
        if _is_dir(path):
            found.append(path)
        else:
            warn(f"{var}={part} is not a directory; using the default location")
    return found or None


def _existing(name: str, paths: list[Path], host: str | None = None) -> list[Root]:
    seen: set[str] = set()
    roots: list[Root] = []
    for path in paths:
        key = os.path.normcase(os.path.abspath(path))
        if key in seen or not _is_dir(path):
            continue
        seen.add(key)
        roots.append(Root(name, Path(os.path.abspath(path)), host))
    return roots


def _xdg(var: str, home: Path, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value and os.path.isabs(value) else home / default


def claude(home: Path, warn: Warn) -> list[Root]:
    paths = _override("CLAUDE_CONFIG_DIR", warn) or [
        home / ".claude",
        _xdg("XDG_CONFIG_HOME", home, ".config") / "claude",
    ]
    return _existing("claude", paths)


def codex(home: Path, warn: Warn) -> list[Root]:
    return _existing("codex", _override("CODEX_HOME", warn) or [home / ".codex"])


def gemini(home: Path, warn: Warn) -> list[Root]:
    base = _override("GEMINI_CLI_HOME", warn)
    return _existing("gemini", [p / ".gemini" for p in base] if base else [home / ".gemini"])


def _platform_app_dirs(home: Path) -> list[Path]:
    """Where per-user application folders live for the running OS."""
    if sys.platform == "darwin":
        return [home / "Library" / "Application Support"]
    if sys.platform.startswith("win"):
        appdata = os.environ.get("APPDATA")
        return [Path(appdata)] if appdata else [home / "AppData" / "Roaming"]
    return [_xdg("XDG_CONFIG_HOME", home, ".config")]


def vscode_user(home: Path, warn: Warn) -> list[Root]:
    """VS Code ``User`` dirs for every edition, the remote server, and the WSL bridge."""
    pinned = _override("VSCODE_APPDATA", warn)
    if pinned:
        paths: list[Path] = []
        for base in pinned:
            if (base / "User").is_dir():
                paths.append(base / "User")
            else:
                paths.extend(base / edition / "User" for edition in VSCODE_EDITIONS)
        return _existing("vscode_user", paths)
    paths = [base / ed / "User" for base in _platform_app_dirs(home) for ed in VSCODE_EDITIONS]
    paths.append(home / ".vscode-server" / "data" / "User")
    roots = _existing("vscode_user", paths)
    for user_dir, host in wsl.windows_app_dirs(VSCODE_EDITIONS):
        roots.extend(_existing("vscode_user", [user_dir], host))
    return roots


RESOLVERS: dict[str, Callable[[Path, Warn], list[Root]]] = {
    "claude": claude,
    "codex": codex,
    "gemini": gemini,
    "vscode_user": vscode_user,
}


def register(name: str, resolver: Callable[[Path, Warn], list[Root]]) -> None:
    """Add a named root (used by agent modules that bring new locations)."""
    if name in RESOLVERS and RESOLVERS[name] is not resolver:
        raise ValueError(f"discovery root {name!r} registered twice")
    RESOLVERS[name] = resolver
