"""Workspace context engine: what every agent is told in a workspace.

Layers, bottom up: :mod:`names` (which file names count, and as what),
:mod:`reading` (symlink-safe capped reads), :mod:`skills` and
:mod:`mcp_configs` (per-kind parsing), :mod:`caps` (limits),
:mod:`resolver` (scan roots -> resources), :mod:`model` (snapshot and its
hash), :mod:`sources` (user-added sources), :mod:`watcher` and
:mod:`manager` (live, versioned publishing). The context history sits
beside them: :mod:`history_objects` (what is stored, content-addressed),
:mod:`history` (the SQLite store), :mod:`fingerprint` (skip resolves that
cannot differ), :mod:`recording` (record a resolve, never failing it) and
:mod:`diff` (between two versions). Surfaces never import this package;
they call :mod:`agentdex.api.context` and :mod:`agentdex.api.context_history`.
"""
