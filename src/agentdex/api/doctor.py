"""``doctor``: when something looks missing, where agentdex looked and what it found.

For every catalogue store: the discovery root it lives under, every
directory looked at for that root (and whether it exists), the files found,
and why a store is skipped (private, opt-in not enabled, disabled in the
config, nothing there) or unreadable. Plus the settings that decide all of
that: the home, the data dir, the config file, this home's index, the WSL
bridge and every environment override in force. Reads only metadata
(``stat``, directory listings); opens no store.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentdex.catalogue import CATALOGUE, Coverage, StoreRow
from agentdex.discovery import Source
from agentdex.errors import ConfigError

#: Variables agentdex itself reads, with what each one does.
AGENTDEX_ENV = {
    "AGENTDEX_HOME": "home to discover stores in (like --home)",
    "AGENTDEX_DATA_DIR": "agentdex's own files: indexes, sessions, tokens",
    "AGENTDEX_CONFIG": "the config file",
    "AGENTDEX_WSL": "WSL bridge forced on (1) or off (0)",
    "AGENTDEX_WSL_USERS_ROOT": "where Windows user profiles are seen from WSL",
    "AGENTDEX_PROJECT_ROOTS": "extra project folders (Aider history)",
    "AGENTDEX_NOW": "the moment relative times and since: are computed from",
    "AGENTDEX_PAGER": "pager for long terminal output (before PAGER)",
    "AGENTDEX_MCP_MAX_BYTES": "size budget of one MCP response",
    "AGENTDEX_WORKTREE_CACHE_TTL": "seconds git worktree lists are cached",
    "AGENTDEX_PLUGINS": "0 leaves third-party agent plug-ins out",
    "AGENTDEX_INDEX_WORKERS": "parse worker processes of a big refresh (0: in process)",
    "AGENTDEX_INDEX_WORKER_NICE": "nice levels the parse workers run below the writer (5)",
    "AGENTDEX_INDEX_TAIL_CHILD_NICE": "nice levels a first build's tail children run below it (5)",
    "AGENTDEX_INDEXING_THREADS": "tantivy indexing threads of a refresh (default 1)",
    "AGENTDEX_FIRST_ANSWER_SECONDS": "how long a first search builds before it answers",
    "AGENTDEX_BACKGROUND_BUILD": "0 leaves a first search's build unfinished (no background)",
    "AGENTDEX_BACKGROUND_EMBED": "0 embeds nothing in the background after a refresh",
    "AGENTDEX_RESIDENT_SEARCH": "0 runs every search in its own process",
    "AGENTDEX_SEARCH_IDLE_SECONDS": "idle seconds before the resident searcher exits",
    "AGENTDEX_RESIDENT_EMBEDDER": "0 loads the model in every search by meaning",
    "AGENTDEX_EMBEDDER_IDLE_SECONDS": "idle seconds before the resident embedder exits",
    "AGENTDEX_EMBED_THREADS": "threads that embed (default: the cores, at most 4)",
    "AGENTDEX_MODEL_PATH": "another model file for search by meaning",
    "AGENTDEX_TEAM_URL": "the team database (like --url)",
    "AGENTDEX_RESIDENT_TEAM": "0 connects every search --team itself",
    "AGENTDEX_TEAM_IDLE_SECONDS": "idle seconds before the resident team searcher exits",
    "AGENTDEX_TEAM_BATCH_RECORDS": "records a team push sends per batch",
    "AGENTDEX_MACHINE": "this machine's name in the team database",
    "AGENTDEX_SESSION": "the agentdex session a command belongs to",
    "AGENTDEX_MAX_SEARCHES": "searches a server runs at once",
    "AGENTDEX_SEARCH_QUEUE_SECONDS": "how long a server's search waits for a turn",
    "AGENTDEX_MAX_EXPORTS": "exports a server streams at once",
    "AGENTDEX_EXPORT_QUEUE_SECONDS": "how long a server's export waits for a turn",
    "PAGER": "pager for long terminal output",
    "NO_COLOR": "no colour in auto mode",
    "FORCE_COLOR": "colour in auto mode even off a terminal",
    "XDG_CONFIG_HOME": "base of config folders (VS Code, Cursor, agentdex)",
    "XDG_DATA_HOME": "base of data folders (OpenCode, agentdex)",
}


def doctor(home: str | None = None) -> dict[str, Any]:
    """Everything discovery decided for ``home``, and why (JSON-ready)."""
    from agentdex.api.index import index_status
    from agentdex.config import Config, load_config, missing_config_warning
    from agentdex.discovery import configured_extra_roots, configured_rows, discover
    from agentdex.paths import config_path, data_dir, home_dir

    warnings: list[str] = []
    config_error = None
    try:
        config = load_config()
        enabled = {row.store for row in configured_rows(config)}
    except ConfigError as exc:
        config_error, config, enabled = exc.message, Config(), set()
        warnings.append(f"config ignored here: {exc.message}")
    from agentdex.catalogue import plugin_report

    plugins, refused = plugin_report()
    warnings.extend(refused)
    missing = missing_config_warning()
    if missing:
        warnings.append(missing)
    base = home_dir(home)
    lookups = _root_lookups(base, warnings)
    found = discover(
        home,
        rows=[row for row in CATALOGUE if row.coverage is not Coverage.PRIVATE],
        include_opt_in=True,
        extra_roots=configured_extra_roots(config),
    )
    for message in found.warnings:
        if message not in warnings:
            warnings.append(message)
    files: dict[str, list[Source]] = {}
    for source in found.sources:
        files.setdefault(source.store, []).append(source)
    from agentdex.catalogue import agents

    rank = {agent: i for i, agent in enumerate(agents())}
    stores = [
        _store_report(row, config, enabled, lookups, found.roots, files.get(row.store, []))
        for row in sorted(CATALOGUE, key=lambda r: rank.get(r.agent, len(rank)))
    ]
    cfg = config_path()
    return {
        "home": str(base),
        "home_from": "--home or AGENTDEX_HOME" if home is not None else "HOME",
        "data_dir": str(data_dir()),
        "config": {
            "path": str(cfg),
            "exists": cfg.is_file(),
            "from_env": bool(os.environ.get("AGENTDEX_CONFIG")),
            "error": config_error,
        },
        "index": index_status(home=home),
        "semantic": _semantic_report(home),
        "embedder": _embedder_report(),
        "searcher": _searcher_report(),
        "wsl": _wsl_report(),
        "environment": _environment(),
        "warnings": warnings,
        "plugins": plugins,
        "stores": stores,
        "totals": {
            status: sum(1 for s in stores if s["status"] == status)
            for status in ("found", "empty", "not-found", "skipped", "private")
        },
    }


def _semantic_report(home: str | None) -> dict[str, Any]:
    """Search by meaning: how much is embedded, and why it cannot run (``problem``)."""
    from agentdex.api.semantic import semantic_status
    from agentdex.errors import AgentdexError

    try:
        return semantic_status(home=home)
    except AgentdexError as exc:  # a corrupt index is reported under "index"
        return {"problem": exc.message}


def _embedder_report() -> dict[str, Any]:
    """The resident embedder (agentdex.semantic.resident): running or not; never started."""
    from agentdex.semantic.resident import status

    return status()


def _searcher_report() -> dict[str, Any]:
    """The resident searcher of this data dir and code (agentdex.api.search_resident):
    running or not; never started."""
    from agentdex.api.search_resident import status

    return status()


def _root_lookups(home: Path, warnings: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every directory each discovery root's resolver looked at, and whether it exists."""
    from agentdex.discovery import roots

    looked: dict[str, list[dict[str, Any]]] = {}
    for name in sorted({row.root for row in CATALOGUE}):
        resolver = roots.resolver_for(name)
        if resolver is None:
            looked[name] = []
            continue
        with roots.recording_lookups() as log:
            try:
                resolver(home, lambda message: None)
            except Exception as exc:  # a plug-in's resolver; discovery warns about it too
                warnings.append(f"discovery root {name} failed: {exc!r}")
        seen: dict[str, bool] = {}
        for path, exists in log:
            seen.setdefault(str(path), exists)
        looked[name] = [{"path": p, "exists": e} for p, e in seen.items()]
    return looked


def _store_report(
    row: StoreRow,
    config: Any,
    enabled: set[str],
    lookups: dict[str, list[dict[str, Any]]],
    roots: dict[str, list[Any]],
    sources: list[Source],
) -> dict[str, Any]:
    paths = [source.path for source in sources]
    found_roots = [
        {"path": str(root.path), "host": root.host, "readable": _readable_dir(root.path)}
        for root in roots.get(row.root, [])
    ]
    unreadable = [str(p) for p in paths if not os.access(p, os.R_OK)]
    unreadable += [r["path"] for r in found_roots if not r["readable"]]
    report: dict[str, Any] = {
        "agent": row.agent,
        "store": row.store,
        "coverage": row.coverage.value,
        "root": row.root,
        "patterns": list(row.patterns),
        "env": list(row.env),
        "looked_in": lookups.get(row.root, []),
        "roots_found": found_roots,
        "files": len(paths),
        "unreadable": unreadable,
    }
    status, reason = _status(row, config, enabled, found_roots, sources)
    report["status"], report["reason"] = status, reason
    report["note"] = row.note or None
    return report


def _status(
    row: StoreRow,
    config: Any,
    enabled: set[str],
    found_roots: list[dict[str, Any]],
    sources: list[Source],
) -> tuple[str, str]:
    """(found | empty | not-found | skipped | private, why)."""
    if row.coverage is Coverage.PRIVATE:
        return "private", "secrets: never listed or opened"
    if row.store not in enabled:
        if row.agent in config.disabled_agents:
            why = f"agent disabled in the config ([agents] disabled has {row.agent})"
        elif row.store in config.disabled_stores:
            why = f"disabled in the config ([stores] disabled has {row.store})"
        elif row.coverage is Coverage.OPT_IN:
            why = f"opt-in: add {row.store!r} to [stores] enabled in the config"
        else:
            why = "not selected by the config"
        if sources:
            why += f" ({len(sources)} file(s) there)"
        return "skipped", why
    if not found_roots:
        hint = f" (or set {', '.join(row.env)})" if row.env else ""
        return "not-found", f"no {row.root} folder exists{hint}"
    if not sources:
        where = ", ".join(r["path"] for r in found_roots)
        return "empty", f"no file matches {', '.join(row.patterns)} under {where}"
    hosts = sorted({s.host for s in sources if s.host})
    via = "".join(f", {sum(1 for s in sources if s.host == host)} via {host}" for host in hosts)
    note = " (listed only, never parsed)" if row.coverage is Coverage.LISTED else ""
    return "found", f"{len(sources)} file(s){via}{note}"


def _readable_dir(path: Path) -> bool:
    return os.access(path, os.R_OK | os.X_OK)


def _wsl_report() -> dict[str, Any]:
    from agentdex.discovery import wsl

    root = wsl.users_root()
    forced = os.environ.get("AGENTDEX_WSL")
    return {
        "enabled": wsl.is_wsl(),
        "forced": forced if forced in {"0", "1"} else None,
        "users_root": str(root),
        "users_root_exists": root.is_dir(),
    }


def _environment() -> list[dict[str, Any]]:
    """Every override in force: the agents' variables (from the catalogue) and agentdex's own."""
    purposes = dict(AGENTDEX_ENV)
    for row in CATALOGUE:
        for var in row.env:
            purposes.setdefault(var, f"{row.agent} location")
    found = []
    for name in sorted(purposes):
        value = os.environ.get(name)
        if value is None:
            continue
        found.append({"name": name, "value": value, "purpose": purposes[name]})
    return found
