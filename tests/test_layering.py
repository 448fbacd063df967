"""Layers import one way (docs/architecture.md): an import guard over the source tree.

Surfaces (cli, http, mcp) may import only the library API and the bottom
layers, never engines directly and never each other; bottom layers never
import anything above them. ``asgi`` is the one composition root: it joins
the http and mcp surfaces for ``agentdex serve``, and only the CLI imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import agentdex

PACKAGE = Path(agentdex.__file__).parent

BOTTOM = {"records", "errors", "paths", "catalogue", "config", "nesting", "secrets"}
READ = {"readers", "uris", "gitinfo", "discovery", "parsers", "plugin"}
ENGINES = {"index", "search", "context", "sessions", "worktrees", "archive"}
API = {"api"}
SURFACES = {"cli", "http", "mcp"}

ALLOWED: dict[str, set[str]] = {}
for name in BOTTOM:
    ALLOWED[name] = BOTTOM
for name in READ:
    ALLOWED[name] = BOTTOM | READ
for name in ENGINES:
    ALLOWED[name] = BOTTOM | READ | ENGINES
ALLOWED["api"] = BOTTOM | READ | ENGINES | API
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
