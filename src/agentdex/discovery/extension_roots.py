"""Roots of the Cline-family VS Code extensions (Roo Code, Kilo Code) and Kilo's database.

Roo Code (``RooVeterinaryInc.roo-cline``) and the Kilo Code extension
(``kilocode.kilo-code``) keep Cline's task folders in their global storage
(VS Code writes the extension id lower-cased on disk), or under the folder
the ``<package>.customStoragePath`` setting names (Roo-Code
``src/utils/storage.ts``, ``getStorageBasePath``); both are read from each
VS Code edition's user ``settings.json``. Kilo's current CLI and extension
(an OpenCode fork) keep ``kilo.db`` in ``${XDG_DATA_HOME:-~/.local/share}/kilo``
on every OS (the ``xdg-basedir`` package), or the file ``$KILO_DB`` names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from agentdex.discovery import observe, wsl
from agentdex.discovery.roots import (
    Root,
    Warn,
    _existing,
    _is_dir,
    _xdg,
    cursor_user,
    extension_storage,
    pinned_db,
    vscode_user,
)

ROO_EXTENSIONS = ("rooveterinaryinc.roo-cline",)
KILO_EXTENSIONS = ("kilocode.kilo-code",)


def _custom_storage(setting: str, home: Path, warn: Warn) -> list[Path]:
    """Folders the ``setting`` names in the VS Code user settings of this machine."""
    pattern = re.compile(r'"' + re.escape(setting) + r'"\s*:\s*("(?:[^"\\\n]|\\.)*")')
    found: list[Path] = []
    for user in vscode_user(home, warn) + cursor_user(home, warn):
        if user.host is not None:
            continue
        settings = user.path / "settings.json"
        observe.note(settings)
        try:
            text = settings.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for match in pattern.finditer(text):
            try:
                value = json.loads(match.group(1))
            except ValueError:
                continue
            if isinstance(value, str) and value.strip():
                path = Path(value.strip()).expanduser()
                if _is_dir(path):
                    found.append(path)
                else:
                    warn(f"{setting} in {settings} names {value}, which is not a directory")
    return found


def roo_tasks(home: Path, warn: Warn) -> list[Root]:
    """Roo Code's global storage in every editor (and WSL), or its custom storage path."""
    custom = _custom_storage("roo-cline.customStoragePath", home, warn)
    return extension_storage("roo_tasks", ROO_EXTENSIONS, home, warn, custom)


def kilo_tasks(home: Path, warn: Warn) -> list[Root]:
    """The Kilo Code extension's global storage (its Cline-shaped era), or its custom path."""
    custom = _custom_storage("kilo-code.customStoragePath", home, warn)
    return extension_storage("kilo_tasks", KILO_EXTENSIONS, home, warn, custom)


def kilo_db(home: Path, warn: Warn) -> list[Root]:
    """Kilo's data dir (``${XDG_DATA_HOME:-~/.local/share}/kilo``) and the file ``$KILO_DB``."""
    data = _existing(
        "kilo_db",
        [_xdg("XDG_DATA_HOME", home, ".local/share") / "kilo", home / ".local/share/kilo"],
    )
    for profile, host in wsl.windows_profiles():  # Kilo on Windows: %USERPROFILE%\.local\share
        data.extend(_existing("kilo_db", [profile / ".local" / "share" / "kilo"], host))
    return pinned_db("kilo_db", "KILO_DB", data, ("kilo.db", "kilo-*.db"), warn)
