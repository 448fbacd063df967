"""Workspace context engine: what every agent is told in a workspace.

Layers, bottom up: :mod:`names` (which file names count, and as what),
:mod:`reading` (symlink-safe capped reads), :mod:`skills` and
:mod:`mcp_configs` (per-kind parsing), :mod:`caps` (limits),
:mod:`resolver` (scan roots -> resources), :mod:`model` (snapshot and its
hash), :mod:`sources` (user-added sources), :mod:`watcher` and
:mod:`manager` (live, versioned publishing). Surfaces never import this
package; they call :mod:`agentdex.api.context`.
"""
