"""The search index: SQLite records and text blocks (the truth) plus tantivy postings.

Layering: imports records/catalogue/discovery/parsers/readers, never a surface.
See ``docs/architecture-search.md`` for the design and its measurements.
"""
