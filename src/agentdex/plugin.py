"""What a third-party agent plug-in imports: one stable module (``docs/adding-an-agent.md``).

A plug-in is an :class:`Agent` (its stores as :class:`StoreRow` rows, its
parsers by id, the folders it lives in as :class:`RootSpec`, its
:class:`ResumeRow`) registered under the ``agentdex.agents`` entry-point
group. Its parsers are :class:`ParserSpec` objects in a module's ``PARSERS``
tuple; they read files only through the helpers here (:func:`read_json`,
:class:`JsonlReader`, :func:`connect_readonly`), which refuse secret files
and never write to a store.

This module is imported while the catalogue loads the plug-ins, so it (and a
plug-in) must not import agentdex's discovery, engine or API layers.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, Coverage, RootSpec, StoreRow
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef, add_role
from agentdex.readers import Diagnostics, JsonlReader, connect_readonly, read_json
from agentdex.records import Record, parse_timestamp


def check_agent(agent: Agent) -> Agent:
    """``agent`` when the ``agentdex.agents`` door would take it next to the built-in
    agents; a ``ValueError`` saying why not otherwise (for a plug-in's own tests)."""
    from agentdex.catalogue.plugins import check_against_builtins

    return check_against_builtins(agent)


def parse_file(
    agent: Agent, store: str, path: str | os.PathLike[str], *, host: str | None = None
) -> tuple[list[Record], Diagnostics, ParseCursor]:
    """Run ``agent``'s parser of ``store`` over one file, as agentdex would (for tests):
    the records, the diagnostics (with any format drift) and the cursor (``units``)."""
    row = next(row for row in agent.rows if row.store == store)
    if row.parser is None:
        raise ValueError(f"store {store} has no parser")
    module = importlib.import_module(agent.parsers[row.parser])
    spec = next(spec for spec in module.PARSERS if spec.id == row.parser)
    file = Path(path)
    ref = SourceRef(file, agent.id, store, host, os.stat(file).st_mtime, file.parent)
    diagnostics, cursor = Diagnostics(), ParseCursor()
    records = list(spec.parse(ref, cursor, diagnostics))
    return records, diagnostics, cursor


__all__ = [
    "Agent",
    "Coverage",
    "Diagnostics",
    "JsonlReader",
    "ParseCursor",
    "ParserSpec",
    "Record",
    "ResumeRow",
    "RoleCounts",
    "RootSpec",
    "SourceRef",
    "StoreRow",
    "add_role",
    "check_agent",
    "connect_readonly",
    "parse_file",
    "parse_timestamp",
    "read_json",
]
