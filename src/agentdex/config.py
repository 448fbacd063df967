"""The optional TOML config file (``$AGENTDEX_CONFIG`` or the platform config dir).

Example (every key optional)::

    archive = false                      # keep no copy of conversations (default true;
                                         # also accepted as [index] archive = false)

    [index]
    path = "~/big-disk/agentdex"        # where the search index (and its archive) lives

    [projects]
    roots = ["~/src", "~/work"]          # extra project roots (Aider files, context)

    [agents]
    disabled = ["cursor"]                # agent ids never discovered

    [stores]
    disabled = ["codex.history"]         # store ids never discovered
    enabled = ["claude-code.something"]  # opt-in stores to include

    [stores.paths]                        # extra roots for non-default installs
    claude = ["/opt/claude-home"]        # keyed by discovery root name

    [worktrees]
    max = 8                              # most linked worktrees per repository

    [context]
    roots = ["~/team-prompts"]           # extra allowed roots for `context add`
    history = false                      # stop recording context history (default true)

    [search]
    time_budget = 5                      # seconds a search may run (then it is partial)

    [team]                               # team history on PostgreSQL (docs/team.md)
    url = "postgresql://me@db.example/agentdex?sslmode=require"
    machine = "laptop"                   # this machine's name there (default: host name)
    exclude = ["~/src/secret-project"]   # projects that never leave this machine
    [privacy]
    redact = false                       # keep secrets in the index and archive (default
                                         # true: masked as [REDACTED:<kind>]; see
                                         # docs/security.md for the risk)

An invalid file is a :class:`~agentdex.errors.ConfigError` naming the
file, the line and the key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentdex.errors import ConfigError
from agentdex.nesting import MAX_NESTING, value_depth
from agentdex.paths import config_path

DEFAULT_MAX_WORKTREES = 8
#: Seconds a search may run before it stops with the results so far (``[search] time_budget``).
DEFAULT_TIME_BUDGET = 5.0
MAX_TIME_BUDGET = 3600.0


class Config:
    """The settings of ``config.toml`` (the defaults for what it does not set): a frozen
    value, equal when every setting is.

    Written out, not a frozen dataclass: creating that costs every fresh process (each
    search loads the config) ~1-2 ms, to compile its methods."""

    __slots__ = (  # noqa: RUF023 - the settings in their order (repr)
        "path",
        "index_path",
        "project_roots",
        "disabled_agents",
        "disabled_stores",
        "enabled_stores",
        "store_paths",
        "max_worktrees",
        "context_roots",
        "time_budget",
        "context_history",
        "archive",
        "team_url",
        "team_machine",
        "team_exclude",
        "redact",
    )

    path: Path | None
    index_path: Path | None
    project_roots: tuple[Path, ...]
    disabled_agents: frozenset[str]
    disabled_stores: frozenset[str]
    enabled_stores: frozenset[str]
    store_paths: dict[str, tuple[Path, ...]]
    max_worktrees: int
    context_roots: tuple[Path, ...]
    time_budget: float
    context_history: bool
    #: keep agentdex's own copy of every conversation indexed (docs/archive.md)
    archive: bool
    #: ``[team]``: the team database's URL, this machine's name there, projects never pushed
    team_url: str | None
    team_machine: str | None
    team_exclude: tuple[Path, ...]
    #: mask secrets in every record before the index and the archive store it
    #: (``[privacy] redact``; docs/security.md)
    redact: bool

    def __init__(
        self,
        path: Path | None = None,
        index_path: Path | None = None,
        project_roots: tuple[Path, ...] = (),
        disabled_agents: frozenset[str] = frozenset(),
        disabled_stores: frozenset[str] = frozenset(),
        enabled_stores: frozenset[str] = frozenset(),
        store_paths: dict[str, tuple[Path, ...]] | None = None,
        max_worktrees: int = DEFAULT_MAX_WORKTREES,
        context_roots: tuple[Path, ...] = (),
        time_budget: float = DEFAULT_TIME_BUDGET,
        context_history: bool = True,
        archive: bool = True,
        team_url: str | None = None,
        team_machine: str | None = None,
        team_exclude: tuple[Path, ...] = (),
        redact: bool = True,
    ) -> None:
        given = locals()
        for name in self.__slots__:
            object.__setattr__(self, name, given[name])
        if store_paths is None:
            object.__setattr__(self, "store_paths", {})

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Config)
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # as a frozen dataclass holding a dict

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Config({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return Config, self._values()  # copy and pickle through __init__


def _line_of(text: str, dotted: str) -> int:
    """Line of ``dotted``'s last key, searched after its table header when there is one."""
    table, _, key = dotted.rpartition(".")
    start = 0
    if table:
        header = re.search(rf"^[ \t]*\[{re.escape(table)}\]", text, re.MULTILINE)
        start = header.end() if header else 0
    pattern = re.compile(rf"^[ \t]*\"?{re.escape(key)}\"?[ \t]*=", re.MULTILINE)
    match = pattern.search(text, start) or pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 0


class _Reader:
    def __init__(self, path: Path, text: str, data: dict[str, Any]) -> None:
        self.path, self.text, self.data = path, text, data

    def error(self, dotted: str, problem: str) -> ConfigError:
        line = _line_of(self.text, dotted)
        where = f"{self.path}:{line}" if line else str(self.path)
        return ConfigError(f"{where}: key '{dotted}' {problem}")

    def table(self, name: str) -> dict[str, Any]:
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise self.error(name, "must be a table")
        return value

    def strings(self, table: dict[str, Any], dotted: str) -> tuple[str, ...]:
        value = table.get(dotted.rsplit(".", 1)[-1], [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(dotted, "must be a list of strings")
        return tuple(value)

    def paths(self, table: dict[str, Any], dotted: str) -> tuple[Path, ...]:
        return tuple(Path(v).expanduser() for v in self.strings(table, dotted))


def _archive_switch(reader: _Reader, data: dict[str, Any]) -> bool:
    """``archive = false`` at the top of the file, or under ``[index]`` (where a key
    written after the ``[index]`` header lands)."""
    index = data.get("index")
    dotted, value = "archive", data.get("archive")
    if value is None and isinstance(index, dict):
        dotted, value = "index.archive", index.get("archive")
    if value is None:
        return True
    if not isinstance(value, bool):
        raise reader.error(dotted, "must be true or false")
    return value


def missing_config_warning() -> str | None:
    """A warning when ``$AGENTDEX_CONFIG`` names a file that does not exist, else None.

    Not an error, as with ripgrep's ``RIPGREP_CONFIG_PATH``: the defaults are
    used, but a typo in the variable is said instead of silently ignored.
    """
    import os

    named = os.environ.get("AGENTDEX_CONFIG")
    if not named:
        return None
    path = config_path()
    if path.exists():
        return None
    return f"AGENTDEX_CONFIG={named}: no such file; using the default settings"


def load_config(path: Path | None = None) -> Config:
    """Read and validate the config; a missing file is the default config."""
    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from exc
    if not text.strip(" \t\n"):
        return Config(path=path)  # an empty TOML document: the defaults, without tomllib
    import tomllib  # here: most runs have no config file (a fresh search imports ~60 modules)

    too_deep = ConfigError(f"{path}: invalid TOML: nested more than {MAX_NESTING} levels deep")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except RecursionError:
        raise too_deep from None
    if value_depth(data, stop_above=MAX_NESTING) > MAX_NESTING:
        raise too_deep
    reader = _Reader(path, text, data)
    archive = _archive_switch(reader, data)
    data = {key: value for key, value in data.items() if key != "archive"}
    reader.data = data
    known = {
        "index",
        "projects",
        "agents",
        "stores",
        "worktrees",
        "context",
        "search",
        "team",
        "privacy",
    }
    for key in data:
        if key not in known:
            raise reader.error(key, f"is not a known section (known: {', '.join(sorted(known))})")

    index = reader.table("index")
    index_path = index.get("path")
    if index_path is not None and not isinstance(index_path, str):
        raise reader.error("index.path", "must be a string")

    stores = reader.table("stores")
    raw_paths = stores.get("paths", {})
    if not isinstance(raw_paths, dict):
        raise reader.error("stores.paths", "must be a table of lists")
    store_paths = {name: reader.paths(raw_paths, f"stores.paths.{name}") for name in raw_paths}

    worktrees = reader.table("worktrees")
    max_worktrees = worktrees.get("max", DEFAULT_MAX_WORKTREES)
    if not isinstance(max_worktrees, int) or isinstance(max_worktrees, bool) or max_worktrees < 1:
        raise reader.error("worktrees.max", "must be a positive integer")

    context = reader.table("context")
    context_history = context.get("history", True)
    if not isinstance(context_history, bool):
        raise reader.error("context.history", "must be true or false")
    time_budget = reader.table("search").get("time_budget", DEFAULT_TIME_BUDGET)
    if (
        not isinstance(time_budget, int | float)
        or isinstance(time_budget, bool)
        or not 0 < time_budget <= MAX_TIME_BUDGET
    ):
        raise reader.error(
            "search.time_budget",
            f"must be a number of seconds above 0, at most {MAX_TIME_BUDGET:g}",
        )

    team = reader.table("team")
    for key in ("url", "machine"):
        if team.get(key) is not None and (not isinstance(team[key], str) or not team[key]):
            raise reader.error(f"team.{key}", "must be a non-empty string")
    redact = reader.table("privacy").get("redact", True)
    if not isinstance(redact, bool):
        raise reader.error("privacy.redact", "must be true or false")

    return Config(
        path=path,
        index_path=Path(index_path).expanduser() if index_path else None,
        project_roots=reader.paths(reader.table("projects"), "projects.roots"),
        disabled_agents=frozenset(reader.strings(reader.table("agents"), "agents.disabled")),
        disabled_stores=frozenset(reader.strings(stores, "stores.disabled")),
        enabled_stores=frozenset(reader.strings(stores, "stores.enabled")),
        store_paths=store_paths,
        max_worktrees=max_worktrees,
        context_roots=reader.paths(context, "context.roots"),
        context_history=context_history,
        time_budget=float(time_budget),
        archive=archive,
        team_url=team.get("url"),
        team_machine=team.get("machine"),
        team_exclude=reader.paths(team, "team.exclude"),
        redact=redact,
    )
