"""What every tool is made of: its spec, the settings it runs with, schema helpers."""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentdex.catalogue import CATALOGUE, Coverage, agents
from agentdex.mcp.budget import Paging


class Unavailable(Exception):
    """The library API a tool needs is not part of this build."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What every handler may use: the home to discover stores in and the default directory.

    ``cancel`` is set for one call when the client cancels it (``notifications/cancelled``).
    """

    home: str | None = None
    cwd: str = field(default_factory=os.getcwd)
    cancel: threading.Event | None = None

    def directory(self, value: str | None) -> str:
        """A directory argument: absolute as given, relative to the server's cwd otherwise."""
        if not value:
            return self.cwd
        expanded = os.path.expanduser(value)
        return os.path.normpath(os.path.join(self.cwd, expanded))


Handler = Callable[[dict[str, Any], Settings], dict[str, Any]]
#: (arguments, response) -> how the response pages
PagingRule = Callable[[dict[str, Any], dict[str, Any]], Paging | None]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    properties: dict[str, Any]
    handler: Handler
    required: tuple[str, ...] = ()
    paging: PagingRule | None = None
    #: JSON schema of the result object (MCP ``outputSchema``; see ``tools/outputs.py``)
    output: dict[str, Any] | None = None

    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": self.properties,
            "additionalProperties": False,
        }
        if self.required:
            schema["required"] = list(self.required)
        return schema


def api_function(module: str, attr: str) -> Callable[..., Any]:
    """``agentdex.api.<module>.<attr>``, or :class:`Unavailable` when this build lacks it."""
    name = f"agentdex.api.{module}"
    try:
        loaded = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise Unavailable(f"it needs {name}.{attr}, which this build lacks") from None
    function = getattr(loaded, attr, None)
    if function is None:
        raise Unavailable(f"it needs {name}.{attr}, which this build lacks")
    result: Callable[..., Any] = function
    return result


# -- shared argument schemas ------------------------------------------------------------


def agent_property(purpose: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(agents()), "description": purpose}


def listed_stores() -> list[str]:
    """Store ids a listing can contain (private stores are never listed)."""
    return [row.store for row in CATALOGUE if row.coverage is not Coverage.PRIVATE]


def integer(description: str, default: int, minimum: int, maximum: int) -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": minimum,
        "maximum": maximum,
        "default": default,
        "description": description,
    }


OFFSET = integer(
    "Skip this many items (for paging; 'next' in a cut response says where).", 0, 0, 10**9
)


def offset_paging(tool: str, key: str) -> PagingRule:
    """Paging that continues at the response's ``offset`` + items kept, same arguments."""

    def rule(arguments: dict[str, Any], response: dict[str, Any]) -> Paging:
        start = int(response.get("offset") or 0)

        def next_arguments(kept: int) -> dict[str, Any]:
            return {**arguments, "offset": start + kept}

        return Paging(tool, key, next_arguments)

    return rule


def window(items: list[Any], offset: int, limit: int) -> list[Any]:
    return items[offset : offset + limit]


def list_paging(tool: str, key: str) -> PagingRule:
    """A list the budget may shorten but the tool cannot page (ask for less instead)."""

    def rule(_arguments: dict[str, Any], _response: dict[str, Any]) -> Paging:
        return Paging(tool, key, lambda _kept: None)

    return rule
