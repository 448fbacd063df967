"""The per-record columns a build computes once per (role, kind) or length: remembered
answers are the answers computed afresh."""

from __future__ import annotations

import math

from agentdex.index import rolekind, scores
from agentdex.index.postings import role_kind
from agentdex.records import KINDS, ROLES


def test_pack_gives_the_same_columns_every_time() -> None:
    pairs = [(r, k) for r in (*ROLES, "narrator") for k in (*KINDS, "aside")]
    first = [rolekind.pack(r, k) for r, k in pairs]
    again = [rolekind.pack(r, k) for r, k in pairs]
    assert first == again
    for (role, kind), (rk, role_x, kind_x) in zip(pairs, first, strict=True):
        assert rk == role_kind(role, kind)
        assert role_x == (None if role in ROLES else role)
        assert kind_x == (None if kind in KINDS else kind)


def test_pack_tells_apart_values_that_compare_equal_but_read_differently() -> None:
    # True == 1 as dict keys; their stored text is not the same
    assert rolekind.pack(True, "message")[1] == "True"
    assert rolekind.pack(1, "message")[1] == "1"
    assert rolekind.pack("1", "message")[1] == "1"


def _level(kind: str, role: str, tlen: int) -> int:
    score = scores.static_score(kind, role, tlen)
    if score <= 0.0:
        return scores.LEVELS - 1
    return min(scores.LEVELS - 1, max(0, int(-math.log(score) / math.log(scores.LEVEL_STEP))))


def test_level_of_remembers_nothing_wrong() -> None:
    lengths = [0, 1, 5, 399, 400, 401, 4_000, 40_000, 4_000_000]
    cases = [(k, r, n) for k in (*KINDS, "aside") for r in (*ROLES, "narrator") for n in lengths]
    for _ in range(2):  # the second pass reads what the first remembered
        assert [scores.level_of(*c) for c in cases] == [_level(*c) for c in cases]
    levels = {scores.level_of(*c) for c in cases}
    assert min(levels) == 0 and len(levels) > 20  # the cases span the levels


def test_level_of_keeps_a_bounded_memory() -> None:
    for n in range(scores._LEVELS_KEPT + 10):
        scores.level_of("message", "user", n)
    assert len(scores._LEVELS) <= scores._LEVELS_KEPT
    assert scores.level_of("message", "user", 123_456) == _level("message", "user", 123_456)
