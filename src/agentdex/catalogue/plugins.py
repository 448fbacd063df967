"""The door every agent comes through: built-ins and ``agentdex.agents`` entry points.

An agent is one :class:`~agentdex.catalogue.schema.Agent` object. The built-in
ones are ``agentdex.catalogue.<id with _ for ->:AGENT`` for each id in
:data:`agentdex.records.AGENTS`; third-party ones are the entry points of the
``agentdex.agents`` group, whose name is the agent id::

    [project.entry-points."agentdex.agents"]
    my-agent = "agentdex_my_agent:AGENT"

Both kinds are loaded by :func:`load` and checked by :func:`check` the same
way. A third-party plug-in that fails to import, is not an ``Agent``, or
clashes with an agent, store, parser or root already loaded is left out and
reported (``sources``, ``doctor``), and the others load; a built-in that fails
is a bug and raises. ``AGENTDEX_PLUGINS=0`` turns third-party plug-ins off.

Plug-ins are loaded when the catalogue is first imported (not by ``agentdex
--help``), at the cost of one scan of the installed packages' entry points.
A plug-in module is imported while :mod:`agentdex.catalogue` is still being
set up: it may import ``agentdex.plugin`` (or the modules that re-exports),
not the discovery or engine layers.
"""

from __future__ import annotations

import importlib
import keyword
import os
import re
from dataclasses import dataclass
from typing import Any

from agentdex.catalogue.resume import PLACEHOLDERS, ResumeRow
from agentdex.catalogue.schema import Agent

#: The entry-point group third-party agents register under.
GROUP = "agentdex.agents"
#: ``0`` leaves third-party plug-ins out (the built-ins always load).
ENV_SWITCH = "AGENTDEX_PLUGINS"

_ID = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*\Z")


@dataclass(frozen=True, slots=True)
class Plugin:
    """Where one agent came from, and why it was refused when it was."""

    agent: str
    #: ``name = module:attr`` as registered (built-ins: their module reference)
    entry_point: str
    #: the distribution that registered it, ``name version`` ("" for built-ins)
    distribution: str = ""
    builtin: bool = False
    #: why it was left out; None when it loaded
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "entry_point": self.entry_point,
            "distribution": self.distribution,
            "builtin": self.builtin,
            "status": "loaded" if self.error is None else "refused",
            "error": self.error,
        }


@dataclass(slots=True)
class _Taken:
    agents: set[str]
    stores: set[str]
    parsers: set[str]
    roots: set[str]


def module_name(agent: str) -> str:
    """The catalogue module of built-in ``agent``: ``-`` becomes ``_``, and a name that is a
    Python keyword gets a trailing ``_`` (``continue`` -> ``continue_``)."""
    name = agent.replace("-", "_")
    return f"{name}_" if keyword.iskeyword(name) else name


def builtin_refs(ids: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(agent id, "module:AGENT")`` of each built-in agent."""
    return [(agent, f"agentdex.catalogue.{module_name(agent)}:AGENT") for agent in ids]


def no_resume(agent: Agent) -> ResumeRow:
    """The resume row of an agent that gave none."""
    label = agent.name or agent.id
    return ResumeRow(agent=agent.id, note=f"no command line that reopens a {label} conversation")


def check(agent: object, taken: _Taken, builtin_roots: set[str]) -> Agent:
    """``agent`` when it is a consistent :class:`Agent` that clashes with nothing taken."""
    if not isinstance(agent, Agent):
        raise ValueError(f"not an agentdex Agent but {type(agent).__name__}")
    if not _ID.match(agent.id):
        raise ValueError(f"agent id {agent.id!r} is not lower-case words joined by '-'")
    if agent.id in taken.agents:
        raise ValueError(f"agent id {agent.id} is already taken")
    if not agent.rows:
        raise ValueError(f"agent {agent.id} has no catalogue rows")
    prefix = agent.id + "."
    for parser_id in agent.parsers:
        if not parser_id.startswith(prefix):
            raise ValueError(f"parser id {parser_id} must start with {prefix}")
        if parser_id in taken.parsers:
            raise ValueError(f"parser id {parser_id} is already taken")
    for name in agent.roots:
        if name in taken.roots or name in builtin_roots:
            raise ValueError(f"discovery root {name!r} is already taken")
    stores: set[str] = set()
    for row in agent.rows:
        if row.agent != agent.id:
            raise ValueError(f"store {row.store} names agent {row.agent}, not {agent.id}")
        if not row.store.startswith(prefix):
            raise ValueError(f"store id {row.store} must start with {prefix}")
        if row.store in taken.stores or row.store in stores:
            raise ValueError(f"store id {row.store} is already taken")
        if row.parser is not None and row.parser not in agent.parsers:
            raise ValueError(
                f"store {row.store}: parser {row.parser} is not in the agent's parsers"
            )
        if row.root not in agent.roots and row.root not in builtin_roots:
            raise ValueError(f"store {row.store}: discovery root {row.root!r} is not declared")
        stores.add(row.store)
    if agent.resume is not None:
        check_resume(agent.id, agent.resume, stores)
    return agent


def check_resume(agent: str, row: ResumeRow, stores: set[str]) -> None:
    """A resume row of ``agent``: its stores are ``agent``'s, its placeholders known."""
    if row.agent != agent:
        raise ValueError(f"resume row names agent {row.agent}, not {agent}")
    for store_id in (*row.stores, *row.store_notes):
        if store_id not in stores:
            raise ValueError(f"resume row {agent}: {store_id} is not one of its stores")
    for arg in row.argv:
        rest = arg
        for placeholder in PLACEHOLDERS:
            rest = rest.replace(placeholder, "")
        if "{" in rest or "}" in rest:
            raise ValueError(f"resume row {agent}: unknown placeholder in {arg!r}")
    if row.supported != bool(row.stores) or (not row.supported and not row.note):
        raise ValueError(f"resume row {agent}: a command needs stores; none needs a note")


def check_against_builtins(agent: object) -> Agent:
    """``agent`` when the door would take it next to the built-in agents (ValueError: why not)."""
    from agentdex.catalogue import AGENT_SPECS
    from agentdex.records import AGENTS

    builtins = [spec for spec in AGENT_SPECS if spec.id in AGENTS]
    taken = _Taken(
        {spec.id for spec in builtins},
        {row.store for spec in builtins for row in spec.rows},
        {parser for spec in builtins for parser in spec.parsers},
        {root for spec in builtins for root in spec.roots},
    )
    return check(agent, taken, {row.root for spec in builtins for row in spec.rows})


def _load_ref(ref: str) -> object:
    module_name, _, attr = ref.partition(":")
    obj: object = importlib.import_module(module_name)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return sorted(entry_points(group=GROUP), key=lambda ep: ep.name)


def load(builtin_ids: tuple[str, ...]) -> tuple[list[Agent], list[Plugin]]:
    """Every agent, built-ins first (in ``builtin_ids`` order), then plug-ins by name."""
    agents: list[Agent] = []
    plugins: list[Plugin] = []
    taken = _Taken(set(), set(), set(), set())

    def accept(agent: Agent) -> None:
        taken.agents.add(agent.id)
        taken.stores.update(row.store for row in agent.rows)
        taken.parsers.update(agent.parsers)
        taken.roots.update(agent.roots)
        agents.append(agent)

    builtin = [(agent_id, _load_ref(ref), ref) for agent_id, ref in builtin_refs(builtin_ids)]
    builtin_roots = {
        row.root for _, obj, _ in builtin if isinstance(obj, Agent) for row in obj.rows
    }
    for agent_id, obj, ref in builtin:
        agent = check(obj, taken, builtin_roots - _own_roots(obj))
        if agent.id != agent_id:
            raise ValueError(f"{ref} is agent {agent.id}, not {agent_id}")
        accept(agent)
        plugins.append(Plugin(agent.id, ref, builtin=True))
    if os.environ.get(ENV_SWITCH, "").strip() == "0":
        return agents, plugins
    try:
        found = _entry_points()
    except Exception as exc:  # a broken installed distribution's metadata
        plugins.append(Plugin("", GROUP, error=f"entry points unreadable: {exc!r}"))
        return agents, plugins
    for ep in found:
        dist = getattr(ep, "dist", None)
        where = f"{dist.name} {dist.version}" if dist is not None else ""
        label = f"{ep.name} = {ep.value}"
        try:
            obj = ep.load()
            agent = check(obj, taken, builtin_roots)
            if agent.id != ep.name:
                raise ValueError(f"entry point {ep.name!r} names agent {agent.id!r}")
        except (Exception, SystemExit) as exc:
            plugins.append(Plugin(ep.name, label, where, error=_reason(exc)))
            continue
        accept(agent)
        plugins.append(Plugin(agent.id, label, where))
    return agents, plugins


def _own_roots(obj: object) -> set[str]:
    return set(obj.roots) if isinstance(obj, Agent) else set()


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, ValueError):
        return text
    return f"{type(exc).__name__}: {text}"
