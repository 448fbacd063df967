"""`usage` views of many rows: `-n` (the largest rows, the latest days, totals of all rows),
the session table's default of 50, the refresh check a fresh process runs beside its answer
(it still sees a grown transcript), and the prices' fast path."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentdex.api.usage import usage
from agentdex.api.usage_prices import RATE_NAMES, load_prices
from agentdex.cli.usage import SESSION_ROWS
from agentdex.errors import EXIT_USAGE
from conftest import SRC_DIR
from corpus_support import on_terminal
from test_usage_index import _claude, _transcript

#: small refreshes keep their records out of tantivy (the default): usage needs no postings
pytestmark = pytest.mark.deferred_postings


def _sessions(home: Path, count: int) -> None:
    """``count`` conversations over ``count`` days, conversation i with (i + 1) * 100 output
    tokens on day i (so the largest are the latest)."""
    for i in range(count):
        day = f"2026-01-{1 + i % 28:02d}" if i < 28 else f"2026-02-{1 + (i - 28):02d}"
        _transcript(home, f"s{i:03d}", [
            _claude(f"s{i:03d}", f"m{i}", f"{day}T10:00:00Z", (10, 0, 0, (i + 1) * 100)),
        ], slug=f"-w-p{i % 3}")  # fmt: skip


def test_a_limit_keeps_the_largest_rows_and_the_totals_of_every_row(home: Path) -> None:
    _sessions(home, 12)
    whole = usage("session", home=str(home))
    assert whole["stats"]["returned"] == whole["stats"]["total"] == 12
    top = usage("session", home=str(home), refresh_first=False, limit=5)
    assert top["stats"] == {"returned": 5, "total": 12}
    assert top["totals"] == whole["totals"]
    assert [r["session_id"] for r in top["rows"]] == [f"s{i:03d}" for i in (11, 10, 9, 8, 7)]
    assert top["rows"] == whole["rows"][:5]  # the same rows, titles and projects included
    assert all(r["project"] and r["project"].startswith("/w/app") for r in top["rows"])
    # a time view keeps the latest days
    days = usage("day", home=str(home), refresh_first=False, limit=3)
    assert [r["day"] for r in days["rows"]] == ["2026-01-10", "2026-01-11", "2026-01-12"]
    assert days["totals"] == whole["totals"]
    projects = usage("project", home=str(home), refresh_first=False, limit=1)
    assert projects["stats"] == {"returned": 1, "total": 1}  # every call ran in /w/app


def test_a_limit_below_one_is_a_usage_error(home: Path) -> None:
    from agentdex.errors import UsageError

    with pytest.raises(UsageError, match="limit"):
        usage("session", home=str(home), limit=0)


def test_the_session_table_shows_the_largest_and_says_how_many_it_left_out(
    home: Path, run_cli: Any
) -> None:
    count = SESSION_ROWS + 3
    _sessions(home, count)
    done = run_cli("usage", "--by", "session")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == SESSION_ROWS + 1  # the rows, then the totals row
    assert lines[0].split("\t")[0].startswith(f"claude-code s{count - 1:03d}")
    assert lines[-1].startswith("total")
    assert f"({SESSION_ROWS} of {count} conversations; -n for more" in done.stderr
    whole = json.loads(run_cli("usage", "--by", "session", "--json", "--no-refresh").stdout)
    assert len(whole["rows"]) == count and whole["stats"]["returned"] == count
    assert lines[-1].split("\t")[6] == str(whole["totals"]["total_tokens"])
    few = json.loads(run_cli("usage", "--by", "session", "-n", "2", "--json").stdout)
    assert [r["session_id"] for r in few["rows"]] == [f"s{count - 1:03d}", f"s{count - 2:03d}"]
    assert few["stats"]["returned"] == 2 and few["stats"]["total"] == count
    assert few["totals"] == whole["totals"]
    every = run_cli("usage", "--by", "session", "-n", str(count), "--no-refresh")
    assert len(every.stdout.splitlines()) == count + 1 and "-n for more" not in every.stderr
    bad = run_cli("usage", "-n", "0")
    assert bad.returncode == EXIT_USAGE and "0" in bad.stderr


def test_the_terminal_table_has_the_largest_rows_the_totals_and_the_footer(
    home: Path, run_cli: Any
) -> None:
    _sessions(home, 12)
    assert run_cli("index").returncode == 0
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(SRC_DIR)
    code, screen = on_terminal(env, "usage", "--by", "session", "-n", "2", "--no-refresh",
                               columns=120)  # fmt: skip
    assert code == 0, screen
    lines = [line for line in screen.splitlines() if line.strip()]
    assert lines[0].split()[:3] == ["session", "calls", "input"]
    assert lines[1].startswith("claude-code s011") and lines[2].startswith("claude-code s010")
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[1] == "12"  # every call, not only the two rows shown
    assert any("(2 of 12 conversations; -n for more" in line for line in lines)


def test_a_fresh_usage_sees_a_grown_transcript(home: Path, run_cli: Any) -> None:
    """The no-change check runs in a forked child while the parent reads the index: when a
    transcript grew, the answer is read again after the refresh, never the stale one."""
    path = _transcript(home, "s1", [
        _claude("s1", "m1", "2026-03-01T10:00:00Z", (10, 0, 0, 5)),
    ])  # fmt: skip
    first = json.loads(run_cli("usage", "--json").stdout)
    assert first["totals"]["calls"] == 1
    unchanged = json.loads(run_cli("usage", "--json").stdout)
    assert unchanged["stats"]["refresh"]["files_parsed"] == 0
    assert unchanged["totals"] == first["totals"]
    with path.open("a", encoding="utf-8") as out:  # an append: the folder's time stays
        out.write(json.dumps(_claude("s1", "m2", "2026-03-01T11:00:00Z", (7, 0, 0, 3))) + "\n")
    grown = json.loads(run_cli("usage", "--json").stdout)
    assert grown["stats"]["refresh"]["files_parsed"] == 1
    assert grown["totals"]["calls"] == 2
    assert grown["totals"]["total_tokens"] == first["totals"]["total_tokens"] + 10


_TABLE = load_prices()
_MODELS = sorted(_TABLE.models)


@given(
    model=st.sampled_from(_MODELS),
    size=st.integers(0, 3),
    counts=st.tuples(*(st.integers(0, 10**9) for _ in range(5))),
)
def test_cost_of_is_the_documented_sum_of_each_kind_at_its_rate(
    model: str, size: int, counts: tuple[int, ...]
) -> None:
    inp, read, write_5m, write_1h, out = counts
    rates = _TABLE.rates(model, size)
    assert rates is not None
    tokens = {"input": inp, "output": out, "cache_read": read,
              "cache_write": write_5m, "cache_write_1h": write_1h}  # fmt: skip
    if any(n and name not in rates for name, n in tokens.items()):
        want = None  # tokens of a kind the model has no rate for: unpriced, never guessed
    else:
        want = sum(n * rates[name] for name, n in tokens.items() if n) / 1_000_000
    got = _TABLE.cost_of(model, size, inp, read, write_5m + write_1h, write_1h, out)
    assert got == (None if want is None else pytest.approx(want, rel=1e-12))
    assert _TABLE.cost(model, size, {"input": inp, "cache_read": read,
                                     "cache_write": write_5m + write_1h,
                                     "cache_write_1h": write_1h, "output": out}) == got  # fmt: skip


def test_the_shipped_table_has_models_with_and_without_every_rate() -> None:
    """Both paths of cost_of are taken by real entries (the test above samples them all)."""
    every = [m for m in _MODELS if all(n in (_TABLE.rates(m) or {}) for n in RATE_NAMES)]
    assert every and len(every) < len(_MODELS)


def test_the_mcp_tool_returns_the_largest_conversations_and_every_rows_totals(
    home: Path,
) -> None:
    from agentdex.mcp.server import AgentdexMCP
    from agentdex.mcp.tools.usage import SESSION_ROWS as MCP_SESSION_ROWS

    count = MCP_SESSION_ROWS + 2
    _sessions(home, count)
    whole = usage("session", home=str(home))
    server = AgentdexMCP(home=str(home), max_bytes=10**7)
    data = server.call("usage", {"by": "session"}).structured_content
    assert data["stats"]["returned"] == MCP_SESSION_ROWS and data["stats"]["total"] == count
    assert data["rows"] == whole["rows"][:MCP_SESSION_ROWS]
    assert data["totals"] == whole["totals"]
    two = server.call("usage", {"by": "day", "limit": 2}).structured_content
    assert [r["day"] for r in two["rows"]] == ["2026-02-23", "2026-02-24"]
    assert two["totals"] == whole["totals"]
