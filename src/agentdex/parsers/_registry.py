"""Parser registry: versioned parser ids to the module that implements them.

Each agent (built-in or plug-in, :class:`agentdex.catalogue.Agent`) names the
module of each of its parser ids. Modules are imported on first use, so
start-up pays only for the parsers a command touches. Each module exposes
``PARSERS: tuple[ParserSpec, ...]``; duplicate ids are rejected when a module
is loaded.
"""

from __future__ import annotations

import importlib

from agentdex.parsers.base import ParserSpec


def __getattr__(name: str) -> dict[str, str]:
    """``PARSER_MODULES``: parser id -> module, from every agent's ``parsers``.

    Looked up on use, not at import: a plug-in module imports the parser base
    classes while the catalogue it belongs to is still loading.
    """
    if name == "PARSER_MODULES":
        from agentdex.catalogue import PARSER_MODULES

        return PARSER_MODULES
    raise AttributeError(name)


_LOADED: dict[str, ParserSpec] = {}


def get_parser(parser_id: str) -> ParserSpec:
    """The spec for ``parser_id`` (KeyError when no module provides it)."""
    spec = _LOADED.get(parser_id)
    if spec is not None:
        return spec
    from agentdex.catalogue import PARSER_MODULES

    module_name = PARSER_MODULES[parser_id]
    try:
        candidates = tuple(importlib.import_module(module_name).PARSERS)
    except ImportError:
        raise
    except Exception as exc:  # a plug-in's module that fails must not take the run down
        raise ImportError(f"{module_name} failed to load: {exc!r}") from exc
    for candidate in candidates:
        existing = _LOADED.get(candidate.id)
        if existing is not None and existing is not candidate:
            raise ValueError(f"parser id {candidate.id} registered twice")
        _LOADED[candidate.id] = candidate
    if parser_id not in _LOADED:
        raise KeyError(f"{module_name} does not define parser {parser_id}")
    return _LOADED[parser_id]
