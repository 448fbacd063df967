"""Required literals of a regex: what a matching text must contain."""

from __future__ import annotations

import re

import pytest

from agentdex.search.regex_literals import Alternatives, required_literals


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("retry", "retry"),
        ("word1 (word2|zzq)", Alternatives(["word1 word2", "word1 zzq"])),
        (r"zq1234\d+", "zq1234"),
        ("^retry.*backoff$", ["retry", "backoff"]),
        ("colou?r", ["colo", "r"]),
        ("(ab)+c", ["ab", "c"]),
        ("x*", None),
        (".*", None),
        ("(retry|.*)", None),
        ("ba[ck]+off", ["ba", Alternatives(["c", "k"]), "off"]),
        ("[ab]c", Alternatives(["ac", "bc"])),
        (r"foo\bbar", "foobar"),
        (
            "(?:fix|repair) (it|this)",
            Alternatives(["fix it", "fix this", "repair it", "repair this"]),
        ),
    ],
)
def test_required_literals(pattern: str, expected: object) -> None:
    requirement, _ = required_literals(pattern, sensitive=True)
    assert requirement == expected


def test_case_flags_are_reported() -> None:
    assert required_literals("retry", sensitive=False)[1] is True
    assert required_literals("retry", sensitive=True)[1] is False
    assert required_literals("(?i)retry", sensitive=True)[1] is True
    assert required_literals("a(?i:b)c", sensitive=True)[1] is True


def test_a_bad_pattern_requires_nothing() -> None:
    assert required_literals("(unclosed", sensitive=True)[0] is None


@pytest.mark.parametrize(
    "pattern",
    ["word1 (word2|zzq)", "colou?r", "(ab)+c", "ba[ck]+off", "(?:fix|repair) (it|this)"],
)
def test_every_match_satisfies_the_requirement(pattern: str) -> None:
    texts = ["word1 zzq", "color", "colour", "ababc", "backoff", "bakkoff", "repair this"]

    def holds(item: object, text: str) -> bool:
        if isinstance(item, str):
            return item in text
        if isinstance(item, Alternatives):
            return any(holds(i, text) for i in item)
        assert isinstance(item, list)
        return all(holds(i, text) for i in item)

    requirement, _ = required_literals(pattern, sensitive=True)
    for text in texts:
        if re.search(pattern, text):
            assert holds(requirement, text), (pattern, text)
