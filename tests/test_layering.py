"""Layers import one way (docs/architecture.md): an import guard over the source tree.

The package is a stack of ordered bands; a module may import its own layer
and any band below its own, never one above. In a band marked *isolated*
the layers are peers that never import each other (the engines each own
their data and know nothing of the others). Surfaces (cli, http, mcp) are
thin: only the library API and the bottom band, never engines and never
each other. ``asgi`` is the one composition root: it joins the http and
mcp surfaces for ``agentdex serve``, and only the CLI imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import agentdex

PACKAGE = Path(agentdex.__file__).parent

#: (layers, isolated), lowest first
BANDS: list[tuple[set[str], bool]] = [
    (
        {"records", "errors", "paths", "catalogue", "config", "nesting", "secrets", "entropy"}
        | {"tuning"},
        False,
    ),
    ({"readers", "uris", "gitinfo", "discovery", "parsers", "plugin"}, False),
    ({"index"}, False),  # the search index: the lowest store
    ({"archive", "search", "context", "sessions", "worktrees", "semantic"}, True),
    ({"ingest", "team"}, False),  # the write path, driving the stores below it; the team push
    ({"api"}, False),
]
BOTTOM = BANDS[0][0]
API = {"api"}
SURFACES = {"cli", "http", "mcp"}

ALLOWED: dict[str, set[str]] = {}
_below: set[str] = set()
for _layers, _isolated in BANDS:
    for name in _layers:
        ALLOWED[name] = _below | ({name} if _isolated else _layers)
    _below = _below | _layers
for name in SURFACES:
    ALLOWED[name] = BOTTOM | API | {name}
ALLOWED["asgi"] = BOTTOM | API | {"http", "mcp", "asgi"}
ALLOWED["cli"] = ALLOWED["cli"] | {"asgi"}


def _layer(module_path: Path) -> str:
    rel = module_path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "agentdex" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_layers_import_one_way() -> None:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = _layer(path)
        if layer in {"__init__", "__main__"}:
            continue
        allowed = ALLOWED.get(layer)
        assert allowed is not None, f"{path} is in no known layer; add it to docs/architecture.md"
        for imported in _imports(path) - allowed - {"__init__"}:
            problems.append(f"{path.relative_to(PACKAGE)} imports agentdex.{imported}")
    assert problems == []


def test_package_init_imports_no_surface() -> None:
    assert _imports(PACKAGE / "__init__.py") == set()


def test_bands_are_ordered_as_documented() -> None:
    """The stores sit below the engines that read them, those below ingest, then the API."""
    rank = {name: i for i, (layers, _) in enumerate(BANDS) for name in layers}
    assert rank["index"] < rank["archive"] == rank["search"] < rank["ingest"] < rank["api"]
    assert "ingest" not in ALLOWED["index"] | ALLOWED["archive"] | ALLOWED["search"]
    assert "archive" not in ALLOWED["index"] and "search" not in ALLOWED["archive"]
