"""The shape of one catalogue row: a store, described as data.

A row names *where* a store lives (a named discovery root plus globs), *what*
it holds, its format, the parser that reads it, and its coverage. Discovery
computes the roots; rows never contain code paths.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Coverage(StrEnum):
    """How far agentdex goes with a store."""

    DEFAULT = "default"  #: discovered, parsed and searched by default
    OPT_IN = "opt-in"  #: discovered and listed; parsed only when enabled in config
    LISTED = "listed"  #: listed by ``sources`` when present; never parsed (e.g. encrypted)
    PRIVATE = "private"  #: documented only: never listed, never opened (secrets)


@dataclass(frozen=True, slots=True)
class StoreRow:
    """One store of one agent.

    ``root`` names a discovery root (``claude``, ``codex``, ``vscode_user``...)
    that :mod:`agentdex.discovery.roots` computes from the home directory,
    the XDG variables and the agent's env overrides. ``patterns`` are globs
    relative to that root (``*`` within a segment, ``**`` across segments).
    """

    agent: str
    store: str
    holds: str
    format: str
    root: str
    patterns: tuple[str, ...]
    parser: str | None
    coverage: Coverage = Coverage.DEFAULT
    env: tuple[str, ...] = ()
    locations: dict[str, str] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    description: str = ""
    upstream: str = ""
    #: where record times come from: ``recorded`` (the store's own), ``file-mtime`` (the
    #: store keeps none: every record gets the file's modification time) or ``partly
    #: file-mtime`` (records without a time get it). Listings say so instead of
    #: silently sorting by mtime.
    times: str = "recorded"
