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


def test_case_pieces_cut_where_ignoring_case_lower_cases_elsewhere() -> None:
    """Every character Python's ``re`` matches to an ASCII letter when ignoring case,
    lower-cased, is that letter again except for ``i`` (``ı``, ``İ``) and ``s`` (``ſ``):
    the plan's pieces are cut at those two only (``k`` matches the Kelvin sign, which
    lower-cases to ``k``)."""
    import string
    import sys

    from agentdex.search.plan import _case_pieces

    letter = re.compile("[a-z]", re.IGNORECASE)
    elsewhere: set[str] = set()
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if 0xD800 <= code < 0xE000 or not letter.fullmatch(char):
            continue
        for ascii_letter in string.ascii_lowercase:
            if re.fullmatch(ascii_letter, char, re.IGNORECASE) and char.lower() != ascii_letter:
                elsewhere.add(ascii_letter)
    assert elsewhere == {"i", "s"}
    assert _case_pieces("Kelvin Task", ignore_case=True) == ["kelv", "n ta", "k"]
    assert _case_pieces("Kelvin Task", ignore_case=False) == ["kelvin task"]
