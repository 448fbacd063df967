"""Discovery: turn the catalogue's rows into the store files present on this machine.

Roots are computed (:mod:`agentdex.discovery.roots`), rows stay declarative.
Private rows are never enumerated; listed-only rows are found but not parsed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentdex.catalogue import CATALOGUE, Coverage, StoreRow
from agentdex.config import Config, load_config
from agentdex.discovery import observe
from agentdex.discovery import roots as _roots
from agentdex.discovery.globwalk import glob
from agentdex.discovery.roots import Root
from agentdex.errors import ConfigError
from agentdex.paths import home_dir


@dataclass(frozen=True, slots=True)
class Source:
    """One discovered store file."""

    row: StoreRow
    path: Path
    root: Root
    size: int
    mtime: float

    @property
    def agent(self) -> str:
        return self.row.agent

    @property
    def store(self) -> str:
        return self.row.store

    @property
    def host(self) -> str | None:
        return self.root.host


@dataclass(slots=True)
class Discovery:
    """What discovery found: sources plus warnings (e.g. an override naming a missing dir)."""

    home: Path
    sources: list[Source] = field(default_factory=list)
    roots: dict[str, list[Root]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def discover(
    home: str | os.PathLike[str] | None = None,
    *,
    rows: Iterable[StoreRow] | None = None,
    agents: Iterable[str] | None = None,
    include_opt_in: bool = False,
    extra_roots: dict[str, list[Path]] | None = None,
    warn: Callable[[str], None] | None = None,
) -> Discovery:
    """Find every store file for the catalogue rows (all by default)."""
    result = Discovery(home=home_dir(home))
    warnings = result.warnings

    def _warn(message: str) -> None:
        if message not in warnings:
            warnings.append(message)
        if warn is not None:
            warn(message)

    wanted_agents = set(agents) if agents is not None else None
    for row in rows if rows is not None else CATALOGUE:
        if row.coverage is Coverage.PRIVATE:
            continue
        if row.coverage is Coverage.OPT_IN and not include_opt_in:
            continue
        if wanted_agents is not None and row.agent not in wanted_agents:
            continue
        if row.root not in result.roots:
            found = _resolve(row, result.home, _warn)
            known = {os.path.normcase(str(root.path)) for root in found}
            for extra in (extra_roots or {}).get(row.root, []):
                extra = Path(extra).expanduser().absolute()
                observe.note(extra)
                if not extra.is_dir():
                    _warn(f"configured {row.root} root {extra} is not a directory; skipped")
                elif os.path.normcase(str(extra)) not in known:
                    known.add(os.path.normcase(str(extra)))
                    found.append(Root(row.root, extra))
            result.roots[row.root] = found
        for root in result.roots[row.root]:
            seen: set[str] = set()
            for pattern in (root.only,) if root.only else row.patterns:
                for path in glob(str(root.path), pattern, exclude=row.exclude):
                    if path in seen:
                        continue
                    seen.add(path)
                    try:
                        stat = os.stat(path)
                    except OSError:
                        continue
                    observe.note(path)
                    if "sqlite" in row.format or path.endswith((".db", ".vscdb")):
                        observe.note(f"{path}-wal")  # appends to a WAL leave the dir unchanged
                    result.sources.append(
                        Source(row, Path(path), root, stat.st_size, stat.st_mtime)
                    )
    return result


def _resolve(row: StoreRow, home: Path, warn: Callable[[str], None]) -> list[Root]:
    """The roots of ``row.root``; a declared root that fails (a plug-in's) is a warning."""
    resolver = _roots.resolver_for(row.root)
    if resolver is None:
        return []
    if row.root in _roots.RESOLVERS:
        return resolver(home, warn)
    try:
        return resolver(home, warn)
    except Exception as exc:  # a plug-in's resolver must not stop discovery
        warn(f"discovery root {row.root} of {row.agent} failed: {exc!r}; skipped")
        return []


def configured_rows(config: Config) -> list[StoreRow]:
    """The catalogue rows a config selects: disabled agents/stores out, enabled opt-ins in.

    Unknown agent or store ids are a :class:`~agentdex.errors.ConfigError`
    (a typo would otherwise silently disable nothing).
    """
    known_agents = {row.agent for row in CATALOGUE}
    known_stores = {row.store for row in CATALOGUE}
    where = str(config.path) if config.path else "config"
    for key, names, known in (
        ("agents.disabled", config.disabled_agents, known_agents),
        ("stores.disabled", config.disabled_stores, known_stores),
        ("stores.enabled", config.enabled_stores, known_stores),
    ):
        unknown = sorted(set(names) - known)
        if unknown:
            raise ConfigError(f"{where}: key '{key}' names unknown id(s): {', '.join(unknown)}")
    unknown_roots = sorted(set(config.store_paths) - {row.root for row in CATALOGUE})
    if unknown_roots:
        raise ConfigError(
            f"{where}: key 'stores.paths' names unknown discovery root(s): "
            f"{', '.join(unknown_roots)}"
        )
    return [
        row
        for row in CATALOGUE
        if row.agent not in config.disabled_agents
        and row.store not in config.disabled_stores
        and (row.coverage is not Coverage.OPT_IN or row.store in config.enabled_stores)
    ]


def configured_extra_roots(config: Config) -> dict[str, list[Path]]:
    """``[stores.paths]`` per root, plus ``[projects] roots`` (expanded) for the Aider root."""
    extra = {name: list(paths) for name, paths in config.store_paths.items()}
    if config.project_roots:
        expanded = _roots.expand_project_roots(list(config.project_roots), children=True)
        extra.setdefault("projects", []).extend(expanded)
    return extra


def discover_configured(
    home: str | os.PathLike[str] | None = None,
    *,
    config: Config | None = None,
    agents: Iterable[str] | None = None,
    warn: Callable[[str], None] | None = None,
) -> Discovery:
    """:func:`discover` as the user configured it (``load_config()`` unless given)."""
    config = config if config is not None else load_config()
    return discover(
        home,
        rows=configured_rows(config),
        agents=agents,
        include_opt_in=True,
        extra_roots=configured_extra_roots(config),
        warn=warn,
    )


__all__ = [
    "Discovery",
    "Root",
    "Source",
    "configured_extra_roots",
    "configured_rows",
    "discover",
    "discover_configured",
]
