"""The query language parser and time values."""

from __future__ import annotations

import pytest

from agentdex.errors import UsageError
from agentdex.search.query import FIELDS, And, Field, Not, Or, Term, parse_query
from agentdex.search.timeparse import parse_time

NOW = 1_767_323_045.0  # 2026-01-02T03:04:05Z


def test_precedence_not_and_or() -> None:
    assert parse_query("a b OR c -d") == Or(
        (And((Term("a"), Term("b"))), And((Term("c"), Not(Term("d")))))
    )
    assert parse_query("(a OR b) AND NOT c") == And((Or((Term("a"), Term("b"))), Not(Term("c"))))


def test_phrases_fields_and_text_with_colons() -> None:
    assert parse_query('"exact  phrase" say') == And(
        (Term("exact  phrase", phrase=True), Term("say"))
    )
    assert parse_query('"a \\" quote"') == Term('a " quote', phrase=True)
    assert parse_query('project:"/my app" agent:codex') == And(
        (Field("project", "/my app"), Field("agent", "codex"))
    )
    assert parse_query("http://example.com std::vector") == And(
        (Term("http://example.com"), Term("std::vector"))
    )
    assert parse_query("ROLE:user") == Field("role", "user")


def test_regex_mode_keeps_parentheses_in_terms() -> None:
    assert parse_query("foo(bar|baz) ( x OR y )", regex=True) == And(
        (Term("foo(bar|baz)"), Or((Term("x"), Term("y"))))
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ('"open', "unbalanced quote"),
        ("(a b", "never closed"),
        ("a b)", "without"),
        ("nope:x", "valid fields: agent:"),
        ("agent:claude", "valid agents"),
        ("role:robot", "valid roles"),
        ("kind:chat", "valid kinds"),
        ("since:last-tuesday", "invalid time"),
        ("a OR", "OR needs a term"),
        ("OR a", "OR needs a term"),
        ("()", "empty parentheses"),
        ("-", None),
        ('""', "empty phrase"),
        ("x " * 3000, "too long"),
        ("w " * 100, "too many terms"),
        ("agent:", "needs a value"),
    ],
)
def test_malformed_queries_are_usage_errors(query: str, message: str | None) -> None:
    if message is None:
        assert parse_query(query) == Term("-")
        return
    with pytest.raises(UsageError, match=message):
        parse_query(query)


def test_unknown_field_error_names_every_valid_field() -> None:
    with pytest.raises(UsageError) as info:
        parse_query("colour:red")
    for name in FIELDS:
        assert f"{name}:" in info.value.message
    assert info.value.exit_code == 2


def test_time_values() -> None:
    assert parse_time("2026-01-02", end=False, now=NOW) == 1_767_312_000.0
    assert parse_time("2026-01-02", end=True, now=NOW) == 1_767_312_000.0 + 86400
    assert parse_time("7d", end=False, now=NOW) == NOW - 7 * 86400
    assert parse_time("2w", end=False, now=NOW) == NOW - 14 * 86400
    assert parse_time("12h", end=False, now=NOW) == NOW - 12 * 3600
    assert parse_time("yesterday", end=False, now=NOW) == 1_767_312_000.0 - 86400
    assert parse_time("yesterday", end=True, now=NOW) == 1_767_312_000.0
    assert parse_time("today", end=False, now=NOW) == 1_767_312_000.0
    assert parse_time("2026-01-02T03:04:05Z", end=False) == NOW
    assert parse_time("2026-01-02T04:04:05+01:00", end=False) == NOW
    field = parse_query("since:1d", now=NOW)
    assert isinstance(field, Field) and field.time == NOW - 86400
    with pytest.raises(UsageError, match="invalid date"):
        parse_time("2026-13-45", end=False)


def test_validate_query_explains_or_reports() -> None:
    from agentdex.api.search import query_fields, validate_query

    ok = validate_query('retry -"old way" agent:codex since:2026-01-01').to_json()
    assert ok["valid"] and ok["error"] is None
    assert ok["explanation"] == '(retry AND NOT "old way" AND agent:codex AND since:2026-01-01)'
    assert ok["fields"][1] == {
        "field": "since",
        "value": "2026-01-01",
        "time": "2026-01-01T00:00:00.000Z",
    }
    bad = validate_query("colour:red").to_json()
    assert not bad["valid"] and "valid fields" in bad["error"]
    assert not validate_query("a[", regex=True).valid
    assert set(query_fields()) >= {"agent", "since", "path"}
