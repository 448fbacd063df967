"""docs/stores.md is generated from the catalogue and must match it."""

from __future__ import annotations

import importlib.util

from agentdex.catalogue import CATALOGUE
from conftest import REPO_DIR


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "gen_stores_doc", REPO_DIR / "scripts" / "gen_stores_doc.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_doc_equals_generated() -> None:
    committed = (REPO_DIR / "docs" / "stores.md").read_text(encoding="utf-8")
    assert committed == _generator().render(), "run: python scripts/gen_stores_doc.py"


def test_every_row_is_in_the_doc() -> None:
    text = _generator().render()
    for row in CATALOGUE:
        assert f"`{row.store}`" in text
