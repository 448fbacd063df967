"""A query read without searching: fail fast on a malformed one, or say how it reads.

``validate_query`` (the MCP tool of that name, facets, the search worker)
and ``check_query`` (run by a search, local or team, before any refresh);
``validate_query``, ``QueryCheck`` and ``query_fields`` are published through
:mod:`agentdex.api.search` as before.
"""

from __future__ import annotations

from typing import Any

from agentdex.errors import UsageError
from agentdex.records import iso_utc


def check_query(query: str, *, regex: bool, word: bool, now: float | None) -> None:
    """Fail fast (UsageError) on a malformed query or regex, before any refresh."""
    from agentdex.search.matchers import TermMatcher
    from agentdex.search.query import parse_query, terms

    node = parse_query(query, now=now, regex=regex)
    if regex:
        for term in terms(node):
            TermMatcher(term.text, case_sensitive=False, word=word, regex=True)


def query_fields() -> dict[str, str]:
    """Every field a query can filter on, with how its value matches."""
    from agentdex.search.query import FIELDS

    return dict(FIELDS)


class QueryCheck:
    """How a query reads (``valid``), or exactly what is wrong with it.

    A plain class, not a dataclass: a search imports this module, and creating a
    dataclass costs every fresh process ~0.5 ms."""

    __slots__ = ("error", "explanation", "fields", "query", "terms", "valid")

    def __init__(
        self,
        query: str,
        valid: bool,
        error: str | None = None,
        explanation: str | None = None,
        terms: list[dict[str, Any]] | None = None,
        fields: list[dict[str, Any]] | None = None,
    ) -> None:
        self.query = query
        self.valid = valid
        self.error = error
        self.explanation = explanation
        self.terms: list[dict[str, Any]] = [] if terms is None else terms
        self.fields: list[dict[str, Any]] = [] if fields is None else fields

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "valid": self.valid,
            "error": self.error,
            "explanation": self.explanation,
            "terms": self.terms,
            "fields": self.fields,
            "valid_fields": list(query_fields()),
        }


def validate_query(query: str, *, regex: bool = False, word: bool = False) -> QueryCheck:
    """Parse ``query`` without searching: its reading, or the usage error it would raise."""
    from agentdex.search.query import And, Field, Not, Or, Term, parse_query, terms

    try:
        check_query(query, regex=regex, word=word, now=None)
        node = parse_query(query, regex=regex)
    except UsageError as exc:
        return QueryCheck(query=query, valid=False, error=exc.message)
    if node is None:
        return QueryCheck(query=query, valid=False, error="empty query")

    def explain(n: Any) -> str:
        if isinstance(n, Term):
            return f'"{n.text}"' if n.phrase or " " in n.text else n.text
        if isinstance(n, Field):
            return f"{n.name}:{n.value}"
        if isinstance(n, Not):
            return f"NOT {explain(n.child)}"
        joiner = " AND " if isinstance(n, And) else " OR "
        assert isinstance(n, And | Or)
        return "(" + joiner.join(explain(c) for c in n.children) + ")"

    found_fields: list[dict[str, Any]] = []

    def collect(n: Any) -> None:
        if isinstance(n, Field):
            item: dict[str, Any] = {"field": n.name, "value": n.value}
            if n.time is not None:
                item["time"] = iso_utc(n.time)
            found_fields.append(item)
        elif isinstance(n, Not):
            collect(n.child)
        elif isinstance(n, And | Or):
            for child in n.children:
                collect(child)

    collect(node)
    return QueryCheck(
        query=query,
        valid=True,
        explanation=explain(node),
        terms=[{"text": t.text, "phrase": t.phrase, "regex": regex} for t in terms(node)],
        fields=found_fields,
    )
