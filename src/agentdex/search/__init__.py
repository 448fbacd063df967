"""Search: the query language, the engine over the index, ranking and snippets.

Query-time modules import no numpy and no rich, to keep a fresh
``agentdex search`` process fast.
"""
