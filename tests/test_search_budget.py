"""No query holds a surface hostage: the time budget, in the library, the CLI, HTTP and MCP.

The runaway case is a real one: ``(a+)+$`` against ``"a" * 40 + "!"`` in a
Claude Code transcript backtracks for hours in Python's ``re``.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from agentdex.api import search as api
from agentdex.api.search_worker import search_in_worker
from agentdex.search.budget import Budget, BudgetInterrupt, enforced
from hardening_support import RUNAWAY_REGEX, RUNAWAY_TEXT, burning_descendants, runaway_home
from mcp_support import json_of, stdio_session
from search_support import assert_same_results


def test_budget_expiry_is_sticky_and_says_why() -> None:
    cancel = threading.Event()
    budget = Budget(60, cancel)
    assert not budget.expired() and budget.reason is None
    cancel.set()
    assert budget.expired() and budget.reason == "cancelled"
    cancel.clear()
    assert budget.expired()  # sticky
    late = Budget(0.01)
    time.sleep(0.02)
    assert late.expired() and late.reason == "time-budget"
    assert not Budget(None).expired() and Budget(None).remaining() is None


def test_alarm_interrupts_a_runaway_regex_only_inside_a_region() -> None:
    budget = Budget(0.3)
    started = time.monotonic()
    with enforced(budget), pytest.raises(BudgetInterrupt), budget.interruptible():
        re.search(RUNAWAY_REGEX, RUNAWAY_TEXT)
    assert time.monotonic() - started < 3
    assert budget.reason == "time-budget"
    quiet = Budget(0.05)
    with enforced(quiet):
        time.sleep(0.2)  # outside a region the alarm only marks the budget
    assert quiet.expired()


def test_enforced_puts_back_the_alarm_it_found() -> None:
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, _frame: fired.append(signum))
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        with enforced(Budget(0.05)):
            time.sleep(0.1)
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 25 < remaining <= 30
        assert signal.getsignal(signal.SIGALRM) is not previous  # ours is back, not the budget's
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        time.sleep(0.1)
        assert fired == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _matches(text: str, pattern: str) -> bool:
    return re.search(pattern, text) is not None


def test_library_search_stops_with_real_matches_only(home: Path) -> None:
    runaway_home(home)
    api.refresh(home=str(home))
    started = time.monotonic()
    result = api.search(f"{RUNAWAY_REGEX}|hello", regex=True, home=str(home), budget=Budget(0.5))
    assert time.monotonic() - started < 5
    assert result.status == "partial"
    assert result.stats["stopped"] == "time-budget" and result.stats["time_budget"] == 0.5
    assert all(r["text"].startswith("hello") for r in result.results)  # found, never invented
    negated = api.search(f"hello -{RUNAWAY_REGEX}", regex=True, home=str(home), budget=Budget(0.5))
    assert negated.status == "partial"
    texts = {r["text"] for r in negated.results}
    # the record whose check was cut short is undecided: never returned, even under NOT
    assert "hello " + RUNAWAY_TEXT not in texts
    assert texts <= {"hello retry", "hello again"}
    whole = api.search("hello", home=str(home), budget=Budget(30))
    assert whole.status == "ok" and whole.stats["stopped"] is None and whole.stats["total"] == 3


def test_cli_prints_what_it_has_and_exits_7(home: Path, run_cli: Any) -> None:
    runaway_home(home)
    started = time.monotonic()
    done = run_cli("search", "-E", RUNAWAY_REGEX, "--time-budget", "1", "--json", timeout=60)
    assert time.monotonic() - started < 30
    assert done.returncode == 7, done.stderr
    data = json.loads(done.stdout)
    assert data["status"] == "partial" and data["stats"]["stopped"] == "time-budget"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "time budget of 1 s" in lines[0], done.stderr
    human = run_cli("search", "-E", RUNAWAY_REGEX, "--time-budget", "0.5", timeout=60)
    assert human.returncode == 7 and "Traceback" not in human.stderr
    assert run_cli("search", "hello", "--time-budget", "10").returncode == 0
    bad = run_cli("search", "hello", "--time-budget", "0")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_config_sets_the_default_budget(home: Path, run_cli: Any, tmp_path: Path) -> None:
    runaway_home(home)
    config = tmp_path / "config.toml"
    config.write_text("[search]\ntime_budget = 0.5\n")
    done = run_cli("search", "-E", RUNAWAY_REGEX, "--json", env={"AGENTDEX_CONFIG": str(config)})
    assert done.returncode == 7 and json.loads(done.stdout)["stats"]["time_budget"] == 0.5


def test_worker_search_is_stopped_by_budget_and_by_cancel(home: Path) -> None:
    runaway_home(home)
    started = time.monotonic()
    stopped = search_in_worker(RUNAWAY_REGEX, regex=True, home=str(home), time_budget=0.5)
    assert stopped.status == "partial" and stopped.stats["stopped"] == "time-budget"
    assert time.monotonic() - started < 10
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    started = time.monotonic()
    cancelled = search_in_worker(
        RUNAWAY_REGEX, regex=True, home=str(home), time_budget=60, cancel=cancel
    )
    assert cancelled.status == "partial" and cancelled.stats["stopped"] == "cancelled"
    assert time.monotonic() - started < 5
    same = search_in_worker("hello", home=str(home), refresh_first=False)
    assert_same_results(
        same.to_json()["results"], api.search("hello", home=str(home)).to_json()["results"]
    )


@pytest.mark.serial
def test_http_answers_others_while_a_runaway_search_runs(home: Path) -> None:
    from hardening_support import served

    runaway_home(home)
    with served() as info:
        headers = {"Authorization": f"Bearer {info['token']}"}
        slow: dict[str, Any] = {}

        def runaway() -> None:
            with httpx.Client(base_url=info["url"], timeout=60) as client:
                params = {"q": RUNAWAY_REGEX, "regex": "true", "time_budget": "4"}
                started = time.monotonic()
                slow["response"] = client.get("/api/v0/search", params=params, headers=headers)
                slow["seconds"] = time.monotonic() - started

        with httpx.Client(base_url=info["url"], timeout=30) as client:
            client.get("/api/v0/search", params={"q": "warm"}, headers=headers)  # index once
            thread = threading.Thread(target=runaway)
            thread.start()
            time.sleep(1.0)  # the runaway search is now burning its worker
            for path, params in (("/openapi.json", {}), ("/api/v0/search", {"q": "hello"})):
                started = time.monotonic()
                answer = client.get(path, params=params, headers=headers)
                assert answer.status_code == 200
                assert time.monotonic() - started < 2.5, path  # answered meanwhile
                assert thread.is_alive()  # ...while the runaway one still runs
            assert (
                client.get("/api/v0/search", params={"q": "hello"}, headers=headers).json()[
                    "stats"
                ]["total"]
                == 3
            )
            thread.join(30)
        data = slow["response"].json()
        assert data["status"] == "partial" and data["stats"]["stopped"] == "time-budget"
        assert slow["seconds"] < 15
        bad = httpx.get(
            f"{info['url']}/api/v0/search",
            params={"q": "x", "time_budget": "0"},
            headers=headers,
        )
        assert bad.status_code == 400  # outside the schema's range: 400 with the error body


@pytest.mark.serial
def test_mcp_answers_ping_and_honours_cancel(home: Path) -> None:
    runaway_home(home)

    async def scenario() -> None:
        async with stdio_session(cwd=home) as session:
            json_of(await session.call_tool("search", {"query": "hello"}))  # index once
            server_pid = _server_pid(home)
            with anyio.CancelScope() as scope:

                async def cancel_soon() -> None:
                    await anyio.sleep(1.5)
                    started = time.monotonic()
                    await session.send_ping()  # answered while the search runs
                    assert time.monotonic() - started < 2
                    assert burning_descendants(server_pid, 0.5), "the search is not running"
                    scope.cancel()  # the SDK sends notifications/cancelled

                async with anyio.create_task_group() as group:
                    group.start_soon(cancel_soon)
                    await session.call_tool(
                        "search", {"query": RUNAWAY_REGEX, "regex": True, "time_budget": 120}
                    )
                    raise AssertionError("the runaway search returned before its budget")
            await anyio.sleep(1.0)
            assert not burning_descendants(server_pid, 1.0), "cancel did not stop the search"
            quick = json_of(
                await session.call_tool(
                    "search", {"query": RUNAWAY_REGEX, "regex": True, "time_budget": 0.5}
                )
            )
            assert quick["status"] == "partial" and quick["run"]["status"] == "partial"
            assert "time budget" in quick["run"]["why"]

    asyncio.run(scenario())


def _server_pid(home: Path) -> int:
    """The pid of the ``agentdex mcp`` process this test started (by its command line)."""
    import os

    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        ours = b"agentdex" in cmdline and b"mcp" in cmdline and str(home).encode() in environ
        if ours and int(entry.name) != os.getpid():
            return int(entry.name)
    raise AssertionError("agentdex mcp process not found")
