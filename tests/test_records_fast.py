"""The parse path's shortcuts in ``records`` give what the general code gives."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentdex.records import parse_timestamp


def _general(value: object) -> float | None:
    """``parse_timestamp``'s general path for a string (what it was before its shortcut)."""
    assert isinstance(value, str)
    text = value.strip()
    if not text:
        return None
    if text.replace(".", "", 1).isdigit():
        return parse_timestamp(float(text))
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


TIMES = [
    "2026-01-02T03:04:05Z",
    "2026-01-02T03:04:05.678Z",
    "2026-10-30T13:55:36.441Z",
    "2026-01-02T03:04:05.123456Z",
    "2026-01-02T03:04Z",
    "2026-01-02 03:04:05Z",
    "20260102T030405Z",
    " 2026-01-02T03:04:05Z",
    "\t2026-01-02T03:04:05.5Z",
    "2026-01-02Z03:04:05Z",
    "2026-01-02T03Z:04:05Z",
    "2026-01-02TZ",
    "Z",
    "ZZ",
    "12Z",
    "1767323045Z",
    "2026-13-02T03:04:05Z",
    "2026-01-02T03:04:05+00:00Z",
    "2026-01-02T03:04:05.678+02:00",
    "2026-01-02T03:04:05",
    "1767323045",
    "1767323045000",
    "garbage",
    "",
]


@pytest.mark.parametrize("value", TIMES)
def test_a_string_time_reads_as_the_general_path_reads_it(value: str) -> None:
    assert parse_timestamp(value) == _general(value)


def test_the_shortcut_gives_utc_seconds() -> None:
    assert parse_timestamp("2026-01-02T03:04:05Z") == 1767323045.0
    assert parse_timestamp("2026-01-02T03:04:05.250Z") == 1767323045.25
    assert parse_timestamp("2026-01-02Z03:04:05Z") is None


def test_record_fields_keep_the_order_the_parsers_build_them_in() -> None:
    """The Claude Code and Codex parsers build a ``Record`` positionally (a keyword call
    costs ~2.5x as much, once a record of every build): its field order is fixed."""
    from dataclasses import fields

    from agentdex.records import Record

    assert [f.name for f in fields(Record)] == [
        "agent", "store", "source_path", "locator", "session_id", "role", "kind", "text",
        "timestamp", "model", "cwd", "project", "branch", "worktree", "host", "offset", "extra",
    ]  # fmt: skip


def test_usage_fields_keep_the_order_the_claude_code_parser_builds_them_in() -> None:
    from dataclasses import fields

    from agentdex.records import Usage

    assert [f.name for f in fields(Usage)] == [
        "agent", "store", "source_path", "locator", "session_id", "call_id", "input_tokens",
        "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens",
        "cache_write_1h_tokens", "timestamp", "model", "cwd", "project", "branch", "worktree",
        "host", "offset",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "counts",
    [
        (1, 2, 3, 4, 0, 0),
        (0, 0, 0, 0, 0, 0),
        (10_000_000, 0, 0, 10_000_000, 0, 0),
        (10_000_001, 0, 0, 1, 0, 0),
        (1, -1, 0, 1, 0, 0),
        (1, 2.0, 0, 1, 0, 0),
        (1, 2.5, 0, 1, 0, 0),
        (True, 0, 0, 1, 0, 0),
        (1, 0, 0, "3", 0, 0),
        (1, 0, 0, float("nan"), 0, 0),
        (1, 0, 0, 1, 2, 0),
        (1, 0, 2, 5, 0, 3),
    ],
)
def test_a_usage_problem_is_what_each_count_problem_says(counts: tuple[object, ...]) -> None:
    from agentdex.records import USAGE_COUNTS, Usage, count_problem

    usage = Usage("a", "s", "p", "line:1", "x", "c", *counts)  # type: ignore[arg-type]
    expected = None
    for name, value in zip(USAGE_COUNTS, counts, strict=True):
        why = count_problem(value)
        if why is not None:
            expected = f"{name} {why}"
            break
    else:
        if usage.reasoning_tokens > usage.output_tokens:
            expected = "reasoning_tokens exceed output_tokens"
        elif usage.cache_write_1h_tokens > usage.cache_write_tokens:
            expected = "cache_write_1h_tokens exceed cache_write_tokens"
    assert usage.problem() == expected


@pytest.mark.parametrize(
    ("value", "limit", "expected"),
    [
        (0, 10, None),
        (10, 10, None),
        (11, 10, "is absurd (11 > 10)"),
        (11, None, None),
        (-1, 10, "is negative (-1)"),
        (-1, None, "is negative (-1)"),
        (True, 10, "is not a number (True)"),
        (False, None, "is not a number (False)"),
        (3.0, 10, None),
        (30.0, 10, "is absurd (30.0 > 10)"),
    ],
)
def test_count_problem_of_ints_and_the_rest(
    value: object, limit: int | None, expected: str
) -> None:
    from agentdex.records import count_problem

    assert count_problem(value, limit) == expected
