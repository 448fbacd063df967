"""The MCP surface: agentdex's search, sessions and workspace context for agents.

A thin shell over :mod:`agentdex.api` (``docs/mcp.md``). ``server`` builds the
tools and resources, ``budget`` keeps every response within a size budget,
``resources`` serves the query language and the catalogue.
"""
