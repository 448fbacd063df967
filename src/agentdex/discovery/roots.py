"""Named discovery roots: where each agent's folder is on this machine.

Each function takes the home directory and returns candidate roots
(existing directories only). Env overrides that name a missing directory
fall back to the default with a warning. Catalogue rows refer to these
roots by name; this module is the only place that knows env variables and
OS layouts.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from agentdex.discovery import observe, wsl

VSCODE_EDITIONS = ("Code", "Code - Insiders", "VSCodium", "Code - OSS")


@dataclass(frozen=True, slots=True)
class Root:
    """A directory a store's globs are applied to; ``host`` is set across the WSL bridge."""

    name: str
    path: Path
    host: str | None = None
    #: When set, this root yields only this one file, whatever the row's globs say
    #: (an env var naming one file, e.g. ``$OPENCODE_DB``).
    only: str | None = None


Warn = Callable[[str], None]


#: While :func:`recording_lookups` is active: every directory a resolver asked about.
_lookups: ContextVar[list[tuple[Path, bool]] | None] = ContextVar("lookups", default=None)


@contextmanager
def recording_lookups() -> Iterator[list[tuple[Path, bool]]]:
    """Record ``(path, is a directory)`` for every place a resolver looks (``doctor``)."""
    log: list[tuple[Path, bool]] = []
    token = _lookups.set(log)
    try:
        yield log
    finally:
        _lookups.reset(token)


def _is_dir(path: Path) -> bool:
    observe.note(path)
    try:
        found = path.is_dir()
    except OSError:
        found = False
    log = _lookups.get()
    if log is not None:
        log.append((path, found))
    return found


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
            if _is_dir(base / "User"):
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


def _override_file(var: str, warn: Warn) -> Path | None:
    """A file named by env ``var``; None (with a warning) when it does not exist."""
    value = os.environ.get(var)
    if not value:
        return None
    path = Path(value).expanduser()
    observe.note(path)
    try:
        if path.is_file():
            return path.absolute()
    except OSError:
        pass
    warn(f"{var}={value} is not a file; using the default location")
    return None


def cursor_user(home: Path, warn: Warn) -> list[Root]:
    """Cursor IDE ``User`` dirs: this OS's app dir, the remote server, and the WSL bridge."""
    paths = [base / "Cursor" / "User" for base in _platform_app_dirs(home)]
    paths.append(home / ".cursor-server" / "data" / "User")
    roots = _existing("cursor_user", paths)
    for user_dir, host in wsl.windows_app_dirs((), app="Cursor"):
        roots.extend(_existing("cursor_user", [user_dir], host))
    return roots


def cursor_home(home: Path, warn: Warn) -> list[Root]:
    """``~/.cursor``: Cursor CLI (cursor-agent) transcripts."""
    return _existing("cursor_home", [home / ".cursor"])


def cursor_config(home: Path, warn: Warn) -> list[Root]:
    """``${XDG_CONFIG_HOME:-~/.config}/cursor`` (lowercase): the CLI's prompt history."""
    return _existing(
        "cursor_config",
        [_xdg("XDG_CONFIG_HOME", home, ".config") / "cursor", home / ".config" / "cursor"],
    )


def opencode_data(home: Path, warn: Warn) -> list[Root]:
    """OpenCode's data dir (``${XDG_DATA_HOME:-~/.local/share}/opencode``)."""
    return _existing(
        "opencode_data",
        [
            _xdg("XDG_DATA_HOME", home, ".local/share") / "opencode",
            home / ".local" / "share" / "opencode",
        ],
    )


def opencode_db(home: Path, warn: Warn) -> list[Root]:
    """The data dir, plus the one file ``$OPENCODE_DB`` names (whatever its name)."""
    data = opencode_data(home, warn)
    return pinned_db("opencode_db", "OPENCODE_DB", data, ("opencode.db", "opencode-*.db"), warn)


def pinned_db(
    name: str, var: str, data: list[Root], patterns: tuple[str, ...], warn: Warn
) -> list[Root]:
    """``data`` as roots ``name``, plus the one database file env ``var`` names.

    The file becomes a root of its own (``only``) unless it is one the data
    dirs' ``patterns`` already find.
    """
    pinned = _override_file(var, warn)
    roots = [Root(name, root.path, root.host) for root in data]
    default_name = pinned is not None and any(
        fnmatch.fnmatchcase(pinned.name, pattern) for pattern in patterns
    )
    if pinned is not None and not (default_name and any(pinned.parent == r.path for r in roots)):
        roots.insert(0, Root(name, pinned.parent, None, pinned.name))
    return roots


CLINE_EXTENSIONS = ("saoudrizwan.claude-dev",)


def cline_tasks(home: Path, warn: Warn) -> list[Root]:
    """Cline: the extension's global storage per VS Code edition (and WSL), ``~/.cline/data``."""
    return extension_storage(
        "cline_tasks", CLINE_EXTENSIONS, home, warn, [home / ".cline" / "data"]
    )


def extension_storage(
    name: str, extensions: tuple[str, ...], home: Path, warn: Warn, extra: list[Path] | None = None
) -> list[Root]:
    """A VS Code extension's global storage (``<User>/globalStorage/<extension id>``) in every
    edition and Cursor on this machine, then ``extra``, then every edition through WSL."""
    paths = [
        user.path / "globalStorage" / ext
        for user in vscode_user(home, warn) + cursor_user(home, warn)
        if user.host is None
        for ext in extensions
    ]
    roots = _existing(name, [*paths, *(extra or [])])
    for user_dir, host in wsl.windows_app_dirs(VSCODE_EDITIONS):
        for ext in extensions:
            roots.extend(_existing(name, [user_dir / "globalStorage" / ext], host))
    return roots


def pi_agent(home: Path, warn: Warn) -> list[Root]:
    """Pi's agent dir (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``), and omp's ``~/.omp/agent``."""
    pinned = _override("PI_CODING_AGENT_DIR", warn)
    return _existing("pi_agent", pinned or [home / ".pi" / "agent", home / ".omp" / "agent"])


def grok(home: Path, warn: Warn) -> list[Root]:
    return _existing("grok", _override("GROK_HOME", warn) or [home / ".grok"])


def antigravity_cli(home: Path, warn: Warn) -> list[Root]:
    return _existing("antigravity_cli", [home / ".gemini" / "antigravity-cli"])


def copilot_cli(home: Path, warn: Warn) -> list[Root]:
    """``$COPILOT_HOME``, ``$XDG_CONFIG_HOME/.copilot`` when set, else ``~/.copilot``."""
    pinned = _override("COPILOT_HOME", warn)
    if pinned:
        return _existing("copilot_cli", pinned)
    paths = [home / ".copilot"]
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg and os.path.isabs(xdg):
        paths.insert(0, Path(xdg) / ".copilot")
    return _existing("copilot_cli", paths)


def windsurf(home: Path, warn: Warn) -> list[Root]:
    return _existing("windsurf", [home / ".codeium" / "windsurf"])


def project_roots(home: Path, warn: Warn) -> list[Root]:
    """Project folders Aider may have written into (see :func:`expand_project_roots`).

    From ``$AGENTDEX_PROJECT_ROOTS`` (``os.pathsep``-separated, expanded one
    level) and the project dirs the index saw in other agents' records
    (``<data dir>/homes/<home key>/projects.json``, taken as they are). The
    config file's ``[projects] roots`` arrive through ``discover(extra_roots=...)``.
    """
    configured: list[Path] = []
    for part in (os.environ.get("AGENTDEX_PROJECT_ROOTS") or "").split(os.pathsep):
        part = part.strip()
        if not part:
            continue
        path = Path(part).expanduser()
        if _is_dir(path):
            configured.append(path)
        else:
            warn(f"AGENTDEX_PROJECT_ROOTS entry {part} is not a directory; skipped")
    seen = expand_project_roots(configured, children=True)
    seen += expand_project_roots(_indexed_projects(home), children=False)
    return _existing("projects", seen)


#: Most project dirs read from projects.json (a runaway file cannot stall discovery).
MAX_INDEXED_PROJECTS = 5000


def _indexed_projects(home: Path) -> list[Path]:
    """Absolute project dirs from this home's ``projects.json``; [] when absent or corrupt."""
    import orjson

    from agentdex.paths import home_data_dir

    path = home_data_dir(home) / "projects.json"
    observe.note(path)
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []
    if not isinstance(data, list):
        return []
    return [
        Path(item)
        for item in data[:MAX_INDEXED_PROJECTS]
        if isinstance(item, str) and os.path.isabs(item)
    ]


def _git_toplevel(path: Path) -> Path | None:
    """The nearest ancestor (or ``path``) holding a ``.git`` entry; no walking down."""
    for candidate in (path, *path.parents):
        observe.note(candidate / ".git")
        try:
            if (candidate / ".git").exists():
                return candidate
        except OSError:
            return None
    return None


def expand_project_roots(paths: list[Path], *, children: bool) -> list[Path]:
    """Each dir, its git top-level, and (``children``) its direct subdirs when it is no repo.

    This is the whole search: a configured ``~/src`` yields ``~/src`` and
    ``~/src/*``; nothing deeper is walked, so the disk is never crawled.
    """
    found: list[Path] = []
    for path in paths:
        if not _is_dir(path):
            continue
        found.append(path)
        top = _git_toplevel(path)
        if top is not None and top != path:
            found.append(top)
        if children and top is None:
            observe.note(path)
            try:
                with os.scandir(path) as entries:
                    subdirs = sorted(
                        Path(e.path)
                        for e in entries
                        if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
                    )
            except OSError:
                subdirs = []
            found.extend(subdirs)
    return found


RESOLVERS: dict[str, Callable[[Path, Warn], list[Root]]] = {
    "claude": claude,
    "codex": codex,
    "gemini": gemini,
    "vscode_user": vscode_user,
    "cursor_user": cursor_user,
    "cursor_home": cursor_home,
    "cursor_config": cursor_config,
    "opencode_data": opencode_data,
    "opencode_db": opencode_db,
    "cline_tasks": cline_tasks,
    "pi_agent": pi_agent,
    "grok": grok,
    "antigravity_cli": antigravity_cli,
    "copilot_cli": copilot_cli,
    "windsurf": windsurf,
    "projects": project_roots,
}


def resolver_for(name: str) -> Callable[[Path, Warn], list[Root]] | None:
    """The resolver of root ``name``: one of :data:`RESOLVERS`, or an agent's declared
    :class:`~agentdex.catalogue.RootSpec` (:mod:`agentdex.discovery.specroots`)."""
    resolver = RESOLVERS.get(name)
    if resolver is not None:
        return resolver
    from agentdex.catalogue import ROOT_SPECS

    spec = ROOT_SPECS.get(name)
    if spec is None:
        return None
    from agentdex.discovery.specroots import resolve

    return functools.partial(resolve, name, spec)


def register(name: str, resolver: Callable[[Path, Warn], list[Root]]) -> None:
    """Add a named root (used by agent modules that bring new locations)."""
    if name in RESOLVERS and RESOLVERS[name] is not resolver:
        raise ValueError(f"discovery root {name!r} registered twice")
    RESOLVERS[name] = resolver
