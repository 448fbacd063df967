"""The catalogue: every store agentdex knows, as data.

Agent lists, CLI choices, MCP enums and the docs table are derived from
``CATALOGUE``; adding a store is adding a row (plus a parser when the format
is new). Every agent is one :class:`Agent` (its rows, parsers, declared
discovery roots and resume command): the built-ins are one module per agent
(``AGENT`` in ``catalogue/<agent>.py``), third-party ones come through the
``agentdex.agents`` entry-point group, both loaded by
:mod:`agentdex.catalogue.plugins`. ``RESUME`` holds each agent's resume
command (:mod:`agentdex.catalogue.resume` for the built-ins).
"""

from __future__ import annotations

from typing import Any

from agentdex.catalogue import plugins
from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, Coverage, RootSpec, StoreRow
from agentdex.records import AGENTS

# These are computed on first use (module ``__getattr__``), not at import: a
# plug-in is imported while they are computed, and may import this package's
# plain types (and ``agentdex.plugin``) meanwhile.
#: Every agent, built-ins first, then the ``agentdex.agents`` plug-ins that loaded.
AGENT_SPECS: tuple[Agent, ...]
#: Where each agent came from, plus the plug-ins that were refused (and why).
PLUGINS: tuple[plugins.Plugin, ...]
#: Every store of every agent.
CATALOGUE: tuple[StoreRow, ...]
#: One resume row per agent.
RESUME: tuple[ResumeRow, ...]
#: Discovery roots the agents declare as data (the rest are :mod:`agentdex.discovery.roots`'s).
ROOT_SPECS: dict[str, RootSpec]
#: parser id -> the module defining it
PARSER_MODULES: dict[str, str]

_LAZY = frozenset({"AGENT_SPECS", "PLUGINS", "CATALOGUE", "RESUME", "ROOT_SPECS", "PARSER_MODULES"})
_loading = False


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _load()
    return globals()[name]


def _load() -> None:
    """Load every agent once and bind the lazy names."""
    global _loading
    if "CATALOGUE" in globals():
        return
    if _loading:
        raise ImportError(
            "agentdex.catalogue is loading its agents: a plug-in module may import "
            "agentdex.plugin, not the catalogue's agents, discovery or the layers above"
        )
    _loading = True
    try:
        loaded, origins = plugins.load(AGENTS)
    finally:
        _loading = False
    specs = tuple(loaded)
    rows = tuple(row for agent in specs for row in agent.rows)
    resume = tuple(
        agent.resume if agent.resume is not None else plugins.no_resume(agent) for agent in specs
    )
    _check(rows)
    _check_resume(resume, rows)
    globals().update(
        AGENT_SPECS=specs,
        PLUGINS=tuple(origins),
        RESUME=resume,
        ROOT_SPECS={name: spec for agent in specs for name, spec in agent.roots.items()},
        PARSER_MODULES={pid: module for agent in specs for pid, module in agent.parsers.items()},
        CATALOGUE=rows,  # last: its presence says the load is complete
    )


def _catalogue() -> tuple[StoreRow, ...]:
    rows: tuple[StoreRow, ...] = __getattr__("CATALOGUE")
    return rows


def _check(rows: tuple[StoreRow, ...]) -> None:
    seen: set[str] = set()
    for row in rows:
        if row.store in seen:
            raise ValueError(f"duplicate store id in catalogue: {row.store}")
        if not row.store.startswith(row.agent + "."):
            raise ValueError(f"store id {row.store} must start with its agent id")
        seen.add(row.store)


def _check_resume(rows: tuple[ResumeRow, ...], catalogue: tuple[StoreRow, ...]) -> None:
    """One resume row per agent; its stores are that agent's; templates use known placeholders."""
    if sorted(row.agent for row in rows) != sorted(dict.fromkeys(r.agent for r in catalogue)):
        raise ValueError("catalogue.resume needs exactly one row per agent id")
    for row in rows:
        plugins.check_resume(row.agent, row, {r.store for r in catalogue if r.agent == row.agent})


def agents() -> tuple[str, ...]:
    """Agent ids that have at least one catalogue row, in catalogue order."""
    return tuple(dict.fromkeys(row.agent for row in _catalogue()))


def store(store_id: str) -> StoreRow:
    """The row for ``store_id`` (KeyError when unknown)."""
    for row in _catalogue():
        if row.store == store_id:
            return row
    raise KeyError(store_id)


def plugin_report() -> tuple[list[dict[str, object]], list[str]]:
    """The third-party plug-ins (loaded or refused) as JSON rows, and one warning per refusal."""
    origins: tuple[plugins.Plugin, ...] = __getattr__("PLUGINS")
    rows = [plugin.to_json() for plugin in origins if not plugin.builtin]
    refused = [
        f"agent plug-in {p.entry_point}"
        + (f" ({p.distribution})" if p.distribution else "")
        + f" left out: {p.error}"
        for p in origins
        if p.error is not None
    ]
    return rows, refused


def resume_row(agent: str) -> ResumeRow:
    """The resume row of ``agent``, built-in or plug-in (KeyError when unknown)."""
    rows: tuple[ResumeRow, ...] = __getattr__("RESUME")
    for row in rows:
        if row.agent == agent:
            return row
    raise KeyError(agent)


def agent_spec(agent_id: str) -> Agent:
    """The loaded agent ``agent_id`` (KeyError when unknown)."""
    specs: tuple[Agent, ...] = __getattr__("AGENT_SPECS")
    for agent in specs:
        if agent.id == agent_id:
            return agent
    raise KeyError(agent_id)


__all__ = [
    "AGENT_SPECS",
    "CATALOGUE",
    "PARSER_MODULES",
    "PLUGINS",
    "RESUME",
    "ROOT_SPECS",
    "Agent",
    "Coverage",
    "ResumeRow",
    "RootSpec",
    "StoreRow",
    "agent_spec",
    "agents",
    "plugin_report",
    "resume_row",
    "store",
]
