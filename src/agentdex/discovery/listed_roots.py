"""Roots an agent lists in a file of its own: Crush's ``projects.json``.

Crush keeps one database per project (``<project>/.crush/crush.db``, or the
project's ``data_directory``) and remembers every project it ran in, with
its data folder, in ``projects.json`` in its global data folder
(charmbracelet/crush ``internal/projects/projects.go``, and
``internal/config/load.go`` ``GlobalConfigData``: ``$CRUSH_GLOBAL_DATA``, else
``$XDG_DATA_HOME/crush``, else ``~/.local/share/crush``; Windows
``%LOCALAPPDATA%\\crush``). Older Crush wrote no list: the project folders
agentdex already knows (other agents' records, ``AGENTDEX_PROJECT_ROOTS``) are
tried for a ``.crush`` folder too. Through WSL, each Windows profile's
``AppData/Local/crush`` list is read and its ``C:\\...`` paths are mapped.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from agentdex.discovery import observe, wsl
from agentdex.discovery.roots import (
    MAX_INDEXED_PROJECTS,
    Root,
    Warn,
    _existing,
    _indexed_projects,
    _is_dir,
    _override,
    _xdg,
    expand_project_roots,
)

_DRIVE = re.compile(r"\A([A-Za-z]):[\\/]")


def _global_dirs(home: Path, warn: Warn) -> list[Path]:
    pinned = _override("CRUSH_GLOBAL_DATA", warn)
    if pinned:
        return pinned
    paths = [_xdg("XDG_DATA_HOME", home, ".local/share") / "crush", home / ".local/share/crush"]
    if sys.platform.startswith("win"):
        local = os.environ.get("LOCALAPPDATA")
        paths.insert(0, Path(local) / "crush" if local else home / "AppData/Local/crush")
    return paths


def _windows_path(value: str) -> Path | None:
    """A ``C:\\...`` path as WSL sees it (``/mnt/c/...``, users under the WSL users root)."""
    match = _DRIVE.match(value)
    if not match:
        return None
    rest = value[match.end() :].replace("\\", "/")
    users = wsl.users_root()
    if match.group(1).lower() == "c" and rest.lower().startswith("users/"):
        return users / rest[len("users/") :]
    return users.parent.parent / match.group(1).lower() / rest


def _listed(projects_json: Path, windows: bool) -> list[Path]:
    """The data folders ``projects.json`` names (``data_dir``, relative to ``path``)."""
    import orjson

    observe.note(projects_json)
    try:
        data = orjson.loads(projects_json.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []
    entries = data.get("projects") if isinstance(data, dict) else None
    found: list[Path] = []
    for entry in entries[:MAX_INDEXED_PROJECTS] if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        path, data_dir = entry.get("path"), entry.get("data_dir") or ".crush"
        if not isinstance(path, str) or not isinstance(data_dir, str):
            continue
        if windows:
            project = _windows_path(path)
            pinned = _windows_path(data_dir)
            if project is None:
                continue
            found.append(pinned if pinned is not None else project / data_dir.replace("\\", "/"))
        else:
            found.append(Path(path) / data_dir)  # an absolute data_dir replaces the path
    return found


def crush_projects(home: Path, warn: Warn) -> list[Root]:
    """Every Crush data folder: from ``projects.json``, known projects, and through WSL."""
    folders: list[Path] = []
    for base in _global_dirs(home, warn):
        if _is_dir(base):
            folders.extend(_listed(base / "projects.json", windows=False))
            folders.append(base / ".crush")  # the server's own workspace
    known = expand_project_roots(_indexed_projects(home), children=False)
    for part in (os.environ.get("AGENTDEX_PROJECT_ROOTS") or "").split(os.pathsep):
        if part.strip():
            known += expand_project_roots([Path(part.strip()).expanduser()], children=True)
    folders.extend(project / ".crush" for project in known)
    roots = _existing("crush_projects", folders)
    for profile, host in wsl.windows_profiles():
        listed = _listed(profile / "AppData/Local/crush/projects.json", windows=True)
        roots.extend(_existing("crush_projects", listed, host))
    return roots
