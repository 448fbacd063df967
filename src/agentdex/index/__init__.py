"""The search index engine: SQLite metadata plus append-only text blocks with trigram signatures.

Layering: imports records/catalogue/discovery/parsers/readers, never a surface.
See ``docs/architecture-search.md`` for the design and its measurements.
"""
