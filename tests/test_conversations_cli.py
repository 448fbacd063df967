"""``agentdex conversations`` on a real-shaped home: the name, the table, the project.

Issue 26 items 2 and 10: ``sessions`` is the listing's old name (an alias
that says so), the table says what it left out and never cuts a number, and
a conversation's project is where it was launched in every command.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from corpus_support import cli, on_terminal, render_corpus_home

#: The real jcode session: its cwd changes mid-way (three values, MANIFEST.md).
JCODE = "120ec635-4140-4bf9-8fdc-24047e46c394"
LONG = "600c0de0-0000-4000-8000-000000000600"


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    home, env = render_corpus_home(tmp_path_factory.mktemp("real") / "home")
    assert cli(env, "index").returncode == 0
    yield home, env


def _listing(env: dict[str, str], *args: str, cwd: Path | None = None) -> dict[str, object]:
    out = cli(env, "conversations", "--json", "--no-refresh", *args, cwd=cwd)
    assert out.returncode == 0, out.stderr
    data: dict[str, object] = json.loads(out.stdout)
    return data


def test_sessions_is_an_alias_that_says_so(real: tuple[Path, dict[str, str]]) -> None:
    _, env = real
    new = _listing(env, "-n", "500")
    old = cli(env, "sessions", "--json", "--no-refresh", "-n", "500")
    assert old.returncode == 0
    old_data = json.loads(old.stdout)
    assert old_data["conversations"] == new["conversations"]
    assert new["warnings"] == []
    (warning,) = old_data["warnings"]
    assert "old name of 'agentdex conversations'" in warning
    assert "agentdex: note: 'agentdex sessions' is the old name" in old.stderr
    piped = cli(env, "sessions", "--no-refresh")
    assert piped.stdout == cli(env, "conversations", "--no-refresh").stdout
    assert "old name" in piped.stderr
    listed = cli(env, "--help").stdout
    assert "conversations" in listed and "Old name of `conversations`" in listed


def test_a_cut_listing_says_how_many_it_left_out(real: tuple[Path, dict[str, str]]) -> None:
    _, env = real
    total = _listing(env, "-n", "500")["stats"]["total"]  # type: ignore[index]
    assert total > 12
    out = cli(env, "conversations", "--no-refresh", "-n", "12")
    assert len(out.stdout.splitlines()) == 12
    assert out.stderr.strip() == f"(12 of {total} conversations; -n for more)"
    everything = cli(env, "conversations", "--no-refresh", "-n", str(total))
    assert "for more" not in everything.stderr


def test_the_project_is_where_the_conversation_was_launched(
    real: tuple[Path, dict[str, str]],
) -> None:
    _, env = real
    listed = {c["session_id"]: c for c in _listing(env, "-n", "500")["conversations"]}  # type: ignore[attr-defined]
    shown = json.loads(cli(env, "show", JCODE, "--json").stdout)
    cwds = [r["cwd"] for r in shown["records"] if r["cwd"]]
    assert len(set(cwds)) > 1  # the real session moves between folders
    assert listed[JCODE]["project"] == shown["project"] == cwds[0]  # where it started
    exported = json.loads(cli(env, "export", JCODE, "--format", "json").stdout)
    assert exported["project"] == shown["project"]


def test_here_and_only_here(real: tuple[Path, dict[str, str]]) -> None:
    home, env = real
    place = home / "src" / "afi-core"
    every = _listing(env, "-n", "500")["conversations"]
    only = _listing(env, "-n", "500", "--only-here", cwd=place)["conversations"]
    first = _listing(env, "-n", "500", "--here", cwd=place)["conversations"]
    assert only and all(c["project"] == str(place) for c in only)  # type: ignore[index]
    assert len(only) < len(every) == len(first)  # type: ignore[arg-type]
    assert first[: len(only)] == only  # type: ignore[index]


def test_the_table_fits_80_columns_and_never_cuts_a_number(
    real: tuple[Path, dict[str, str]],
) -> None:
    _, env = real
    code, screen = on_terminal(env, "conversations", "--no-refresh", "-n", "60", columns=80)
    assert code == 0
    rows = [row for row in screen.splitlines() if row.strip()]
    header = rows[0]
    # long ids (two agents share 33333333: `antigravity-cli:33333333`) leave no room for the
    # project; it gives way before a count or the title does
    assert header.split() == ["agent", "id", "last", "messages", "title"]
    listed = {c["session_id"]: c for c in _listing(env, "-n", "60")["conversations"]}  # type: ignore[attr-defined]
    counts = {str(c["message_count"]) for c in listed.values()}
    end = header.index("messages") + len("messages")
    for row in rows[1:]:
        if row.startswith("("):
            break
        assert len(row) <= 80
        assert row[:end].split()[-1] in counts  # the whole number, never cut
    assert rows[-1].startswith("(") or "of" not in rows[-1]
    code, few = on_terminal(env, "conversations", "--no-refresh", "-n", "3", columns=80)
    header = few.splitlines()[0]
    assert header.split() == ["agent", "id", "last", "messages", "project", "title"]
    assert all(len(row) <= 80 for row in few.splitlines())
    code, wide = on_terminal(env, "conversations", "--no-refresh", "-n", "5", columns=140)
    header = next(row for row in wide.splitlines() if row.startswith("agent"))
    assert header.split() == [
        "agent",
        "id",
        "last",
        "prompts",
        "replies",
        "tools",
        "tokens",
        "cost",
        "project",
        "title",
    ]
    long_row = next(row for row in wide.splitlines() if row.startswith("claude-code  600c0de"))
    assert long_row.split()[4:7] == ["300", "300", "60"]
    assert "~/src/longchat" in long_row  # paths under the home read ~/...


def test_show_wraps_to_the_terminal_like_search_and_never_in_a_pipe(
    real: tuple[Path, dict[str, str]],
) -> None:
    """Item 2: ``show`` of a real conversation fits an 80-column terminal (its first line,
    the id and the project, is kept whole on purpose), with the same text as the pipe."""
    _, env = real
    piped = cli(env, "show", JCODE)
    assert piped.returncode == 0
    assert max(len(row) for row in piped.stdout.splitlines()) > 200  # long lines, not wrapped
    code, screen = on_terminal(env, "show", JCODE, columns=80)
    assert code == 0
    head, body = screen.split("\n", 1)
    assert JCODE in head
    assert len(body.splitlines()) > len(piped.stdout.splitlines())
    assert all(len(row) <= 80 for row in body.splitlines())
    # wrapping only moved whitespace: every character of every record is still there
    assert "".join(body.split()) == "".join(piped.stdout.split("\n", 1)[1].split())
