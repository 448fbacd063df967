"""MCP resources: what a model reads to learn agentdex without guessing.

``agentdex://query-language`` is ``docs/query-language.md`` when this is a
source checkout, else a page generated from the search API's own field list.
``agentdex://catalogue`` is every catalogue row as JSON; private rows
(credentials) are there as documentation of what agentdex refuses to open,
never with anything read from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agentdex.catalogue import CATALOGUE, Coverage, StoreRow
from agentdex.mcp.tools import Unavailable, api_function

#: The docs folder of a source checkout (absent in an installed wheel).
DOCS_DIR = Path(__file__).resolve().parents[3] / "docs"


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    uri: str
    name: str
    title: str
    description: str
    mime_type: str


QUERY_LANGUAGE = ResourceSpec(
    uri="agentdex://query-language",
    name="query-language",
    title="agentdex query language",
    description="The syntax the search and validate_query tools accept: terms, phrases, "
    "field filters, operators, sorting. Read this before writing a query.",
    mime_type="text/markdown",
)
CATALOGUE_RESOURCE = ResourceSpec(
    uri="agentdex://catalogue",
    name="catalogue",
    title="agentdex store catalogue",
    description="Every agent store agentdex knows: agent id, store id, what it holds, format, "
    "location patterns, coverage. Agent and store ids here are the values tools accept.",
    mime_type="application/json",
)
RESOURCES: tuple[ResourceSpec, ...] = (QUERY_LANGUAGE, CATALOGUE_RESOURCE)


def catalogue_rows() -> list[dict[str, Any]]:
    """The catalogue as JSON rows (documentation only: no store is opened here)."""
    return [_row_json(row) for row in CATALOGUE]


def _row_json(row: StoreRow) -> dict[str, Any]:
    data: dict[str, Any] = {
        "agent": row.agent,
        "store": row.store,
        "holds": row.holds,
        "format": row.format,
        "root": row.root,
        "patterns": list(row.patterns),
        "parser": row.parser,
        "coverage": row.coverage.value,
        "env": list(row.env),
        "locations": dict(row.locations),
        "description": row.description,
    }
    if row.coverage is Coverage.PRIVATE:
        data["note"] = "documented only: agentdex never lists, opens or returns this store"
    return data


def catalogue_text() -> str:
    body = {"coverage_levels": [c.value for c in Coverage], "stores": catalogue_rows()}
    return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode("utf-8")


def query_language_text() -> str:
    """The query-language doc, or a page generated from the search API when the doc is absent."""
    doc = DOCS_DIR / "query-language.md"
    try:
        return doc.read_text(encoding="utf-8")
    except OSError:
        pass
    try:
        describe = api_function("search", "query_fields")
    except Unavailable:
        return (
            "# agentdex query language\n\nSearch is not available in this build, so there is "
            "no query language to describe.\n"
        )
    return _generated_query_page(describe())


def _generated_query_page(fields: Any) -> str:
    lines = ["# agentdex query language", "", "Fields a query can filter on:", ""]
    if isinstance(fields, dict):
        for name, meaning in fields.items():
            lines.append(f"- `{name}:` {meaning}")
    else:
        for name in fields:
            lines.append(f"- `{name}:`")
    lines += ["", "Use the validate_query tool to check a query before searching."]
    return "\n".join(lines) + "\n"


def read(uri: str) -> tuple[ResourceSpec, str] | None:
    """The resource at ``uri`` and its text, or None when there is no such resource."""
    if uri == QUERY_LANGUAGE.uri:
        return QUERY_LANGUAGE, query_language_text()
    if uri == CATALOGUE_RESOURCE.uri:
        return CATALOGUE_RESOURCE, catalogue_text()
    return None
