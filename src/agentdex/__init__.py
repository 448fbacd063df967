"""agentdex: one local index of every AI coding agent's history, context and worktrees.

Layers import one way (see ``docs/architecture.md``)::

    records, errors, paths, catalogue          (bottom: plain data, no I/O policy)
    readers, uris, gitinfo, discovery, parsers  (find and read stores, read-only)
    index, search, context, sessions           (the engines)
    api                                         (the one library API)
    cli, http, mcp                              (thin surfaces over ``api``)

This module stays import-light so ``agentdex --help`` starts fast.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
