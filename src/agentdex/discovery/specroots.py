"""Discovery roots declared as data (:class:`agentdex.catalogue.RootSpec`).

An agent (built-in or plug-in) that lives in ordinary folders says so with
templates (``~/.qwen``, ``{xdg_data}/goose``, ``{appdata}/Block/goose/data``)
and the env variables that move them; this module turns that into roots the
same way :mod:`agentdex.discovery.roots` does by hand: env override first
(falling back with a warning), then every template that means something on
this OS, then, inside WSL, the same templates under each Windows profile.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

from agentdex.catalogue.schema import RootSpec
from agentdex.discovery import wsl
from agentdex.discovery.roots import Root, _existing, _override

Warn = Callable[[str], None]

_XDG = {
    "{xdg_config}": ("XDG_CONFIG_HOME", ".config"),
    "{xdg_data}": ("XDG_DATA_HOME", ".local/share"),
    "{xdg_state}": ("XDG_STATE_HOME", ".local/state"),
    "{xdg_cache}": ("XDG_CACHE_HOME", ".cache"),
}
_WINDOWS = {
    "{appdata}": ("APPDATA", "AppData/Roaming"),
    "{localappdata}": ("LOCALAPPDATA", "AppData/Local"),
}
_MACOS = {"{app_support}": "Library/Application Support"}


def platform_name() -> str:
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith("win"):
        return "windows"
    return "linux"


def expand(template: str, home: Path, system: str, *, use_env: bool = True) -> Path | None:
    """``template`` as a path for ``system`` (``linux``/``macos``/``windows``); None when it
    names a folder that OS does not have (``{appdata}`` on Linux...)."""
    text = template
    if text == "~" or text.startswith("~/"):
        text = str(home) + text[1:]
    for key, (var, default) in _XDG.items():
        if key in text:
            value = os.environ.get(var) if use_env else None
            base = value if value and os.path.isabs(value) else str(home / default)
            text = text.replace(key, base)
    for key, (var, default) in _WINDOWS.items():
        if key in text:
            if system != "windows":
                return None
            value = os.environ.get(var) if use_env else None
            text = text.replace(key, value or str(home / default))
    for key, default in _MACOS.items():
        if key in text:
            if system != "macos":
                return None
            text = text.replace(key, str(home / default))
    if "{" in text:
        return None
    return Path(text).expanduser()


def resolve(name: str, spec: RootSpec, home: Path, warn: Warn) -> list[Root]:
    """The roots ``spec`` names on this machine (and through WSL)."""
    if spec.resolver:
        module_name, _, attr = spec.resolver.partition(":")
        func = getattr(importlib.import_module(module_name), attr)
        return list(func(home, warn))
    for entry in spec.env:
        var, _, sub = entry.partition("/")
        pinned = _override(var, warn)
        if pinned:
            return _existing(name, [p / sub if sub else p for p in pinned])
    system = platform_name()
    paths = [p for t in spec.paths if (p := expand(t, home, system)) is not None]
    roots = _existing(name, paths)
    if spec.wsl:
        for profile, host in wsl.windows_profiles():
            found = [
                p
                for t in spec.paths
                if (p := expand(t, profile, "windows", use_env=False)) is not None
            ]
            roots.extend(_existing(name, found, host))
    return roots
