"""MCP resources: what a model reads to learn agentdex without guessing.

``agentdex://query-language`` is ``docs/query-language.md`` when this is a
source checkout, else a page generated from the search API's own field list.
``agentdex://catalogue`` is every catalogue row as JSON; private rows
(credentials) are there as documentation of what agentdex refuses to open,
never with anything read from them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdex.catalogue import CATALOGUE, Coverage, StoreRow, agents
from agentdex.mcp import budget
from agentdex.mcp.budget import Paging

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
#: One agent's catalogue rows; ``{agent}`` is a catalogue agent id.
CATALOGUE_TEMPLATE = ResourceSpec(
    uri="agentdex://catalogue/{agent}",
    name="catalogue-agent",
    title="One agent's stores",
    description="The catalogue rows of one agent (agent ids: see agentdex://catalogue).",
    mime_type="application/json",
)


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


#: ``agentdex://catalogue/{agent}``: one agent's rows (a budget-sized slice of the catalogue).
CATALOGUE_PREFIX = CATALOGUE_RESOURCE.uri + "/"


def catalogue_text(max_bytes: int, agent: str | None = None) -> str:
    """Compact JSON of the rows (one agent's, if given), cut to the budget with a marker."""
    rows = [row for row in catalogue_rows() if agent in (None, row["agent"])]
    body = {"coverage_levels": [c.value for c in Coverage], "stores": rows}
    paging = Paging(
        "read_resource",
        "stores",
        lambda _kept: {"uris": [CATALOGUE_PREFIX + a for a in agents()]},
    )
    return budget.fit(body, max_bytes, paging)


def query_language_text() -> str:
    """The query-language doc, else a page built from what the search API publishes."""
    doc = DOCS_DIR / "query-language.md"
    try:
        return doc.read_text(encoding="utf-8")
    except OSError:
        pass
    try:
        search_api = importlib.import_module("agentdex.api.search")
    except ModuleNotFoundError as exc:
        if exc.name != "agentdex.api.search":
            raise
        return (
            "# agentdex query language\n\nSearch is not available in this build, so there is "
            "no query language to describe.\n"
        )
    return _generated_query_page(search_api)


def _generated_query_page(search_api: Any) -> str:
    """Only facts the API and the catalogue publish; nothing retyped here."""
    lines = [
        "# agentdex query language",
        "",
        "The full reference (docs/query-language.md) is not part of this build; this page",
        "lists what the search API itself publishes. Use the validate_query tool to check",
        "a query before searching.",
        "",
    ]
    fields = getattr(search_api, "query_fields", None)
    if callable(fields):
        fields = fields()
    if isinstance(fields, dict) and fields:
        lines += ["## Fields (`field:value`)", ""]
        lines += [f"- `{name}:` {meaning}" for name, meaning in fields.items()]
        lines.append("")
    lines += ["## Agent ids (`agent:ID`)", "", *[f"- `{a}`" for a in agents()], ""]
    for title, attr in (("Sort orders (`sort`)", "SORTS"), ("Case modes (`case`)", "CASES")):
        values = getattr(search_api, attr, None)
        if values:
            lines += [f"## {title}", "", *[f"- `{v}`" for v in values], ""]
    return "\n".join(lines)


def read(uri: str, max_bytes: int) -> tuple[str, str] | None:
    """(mime type, text within the budget) of the resource at ``uri``; None when there is none."""
    if uri == QUERY_LANGUAGE.uri:
        text = budget.fit_text(query_language_text(), max_bytes, _DOC_REST)
        return QUERY_LANGUAGE.mime_type, text
    if uri == CATALOGUE_RESOURCE.uri:
        return CATALOGUE_RESOURCE.mime_type, catalogue_text(max_bytes)
    agent = uri.removeprefix(CATALOGUE_PREFIX)
    if uri.startswith(CATALOGUE_PREFIX) and agent in agents():
        return CATALOGUE_RESOURCE.mime_type, catalogue_text(max_bytes, agent)
    return None


_DOC_REST = "the rest is in docs/query-language.md of the agentdex source"
