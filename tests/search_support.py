"""Comparing search answers taken at different moments.

A result's score carries a recency factor computed from the wall clock, so two
searches a second apart can differ in the sixth decimal of a score (and the
rounding can then show it). Everything else in a result must be identical.
"""

from __future__ import annotations

from typing import Any

import pytest


def assert_same_results(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> None:
    """The same records in the same order with the same fields; scores equal to 1e-5."""
    assert [{k: v for k, v in r.items() if k != "score"} for r in first] == [
        {k: v for k, v in r.items() if k != "score"} for r in second
    ]
    assert [r["score"] for r in first] == pytest.approx([r["score"] for r in second], rel=1e-5)
