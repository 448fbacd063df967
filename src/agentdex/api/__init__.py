"""The one library API that every surface (CLI, HTTP, MCP) calls.

One module per capability: :mod:`agentdex.api.history` (sources, show,
audit), :mod:`agentdex.api.search` (search), :mod:`agentdex.api.index`
(refresh, status), :mod:`agentdex.api.conversations`, :mod:`agentdex.api.refs`,
:mod:`agentdex.api.transcript` (a conversation to read, live updates),
:mod:`agentdex.api.facets` (facet counts of a query),
:mod:`agentdex.api.resume` and :mod:`agentdex.api.export` (resume, export),
:mod:`agentdex.api.context` (workspace context),
:mod:`agentdex.api.context_history` (context at a past time, diffs),
:mod:`agentdex.api.worktrees` and :mod:`agentdex.api.sessions`. Surfaces
import these, never each other.
"""

# derived data that follows the records (forget, prune, rebuild): listeners registered once
from agentdex.api import semantic_events as _semantic_events  # noqa: F401
