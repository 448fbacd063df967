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
from agentdex.discovery import roots as _roots
from agentdex.discovery.globwalk import glob
from agentdex.discovery.roots import Root
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
            resolver = _roots.RESOLVERS.get(row.root)
            found = resolver(result.home, _warn) if resolver else []
            for extra in (extra_roots or {}).get(row.root, []):
                if extra.is_dir():
                    found.append(Root(row.root, extra.absolute()))
            result.roots[row.root] = found
        for root in result.roots[row.root]:
            seen: set[str] = set()
            for pattern in row.patterns:
                for path in glob(str(root.path), pattern, exclude=row.exclude):
                    if path in seen:
                        continue
                    seen.add(path)
                    try:
                        stat = os.stat(path)
                    except OSError:
                        continue
                    result.sources.append(
                        Source(row, Path(path), root, stat.st_size, stat.st_mtime)
                    )
    return result


__all__ = ["Discovery", "Root", "Source", "discover"]
