"""The shape of one catalogue row: a store, described as data.

A row names *where* a store lives (a named discovery root plus globs), *what*
it holds, its format, the parser that reads it, and its coverage. Discovery
computes the roots; rows never contain code paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from agentdex.catalogue.resume import ResumeRow


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
    #: What ``doctor`` says about the store beyond its status, in plain words (an encrypted
    #: store it can only list, history that now lives only in the agent's cloud...).
    note: str = ""


@dataclass(frozen=True, slots=True)
class RootSpec:
    """A discovery root said as data: candidate folders and the env vars that move them.

    ``paths`` are templates. ``~`` is the home; ``{xdg_config}``, ``{xdg_data}``,
    ``{xdg_state}`` and ``{xdg_cache}`` are the XDG base folders (their variable
    when set to an absolute path, else the usual ``~/.config``...); ``{appdata}``
    and ``{localappdata}`` are Windows' roaming and local application folders and
    ``{app_support}`` is macOS's ``~/Library/Application Support``. A template
    whose placeholder does not exist on the running OS is skipped, and folders
    that do not exist are never roots, so one list serves every OS.

    ``env`` names variables that replace the defaults when set (the first one set
    wins; ``VAR/sub/dir`` appends a path to the variable's value; a value naming
    no directory falls back to the defaults with a warning). ``wsl``: inside WSL,
    the templates are also tried against every Windows user profile (``~`` is
    the profile, ``{appdata}`` its ``AppData/Roaming``...), with the profile's
    user as the files' host.

    ``resolver`` (``"module:function"``) is for what a template cannot say (a
    list of project folders read from a file, say): the function takes
    ``(home: Path, warn: Callable[[str], None])`` and returns
    ``agentdex.discovery.roots.Root`` objects; ``paths`` and ``env`` are then
    only documentation.
    """

    paths: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    wsl: bool = True
    resolver: str = ""


@dataclass(frozen=True, slots=True)
class Agent:
    """One agent as agentdex knows it: what plugs in through the ``agentdex.agents`` door.

    Built-in agents and third-party plug-ins are both one ``Agent`` (see
    :mod:`agentdex.catalogue.plugins` and ``docs/adding-an-agent.md``).

    ``rows`` are its stores (every ``row.agent`` is ``id``; store ids start with
    ``id + "."``). ``parsers`` maps each parser id the rows name (also starting
    with ``id + "."``) to the module whose ``PARSERS`` tuple defines it; the
    module is imported only when a store of that kind is parsed. ``roots``
    declares the discovery roots the rows name that agentdex does not already
    have. ``resume`` is its resume command (None: "no command line known").
    """

    id: str
    rows: tuple[StoreRow, ...]
    parsers: Mapping[str, str] = field(default_factory=dict)
    roots: Mapping[str, RootSpec] = field(default_factory=dict)
    resume: ResumeRow | None = None
    #: How people call it ("Roo Code"); the id when empty.
    name: str = ""
