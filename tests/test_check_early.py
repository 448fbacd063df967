"""The refresh check forked at a search process's start (agentdex.api.check_early).

The CLI guesses from its arguments that it runs a local search that checks for
changes (``cli._argv.checked_search``) and forks the check before importing
click; the search takes that child only when it checks the same home's
index. Real transcripts, a real index, real forked children.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentdex.api import check_ahead, check_early
from agentdex.api import search as api
from agentdex.cli._argv import checked_search
from test_index_manifest import claude_line, write_transcript

SRC = Path(__file__).resolve().parent.parent / "src"


@pytest.fixture
def transcript(home: Path) -> Path:
    path = write_transcript(home)
    api.refresh(home=str(home))
    return path


@pytest.fixture(autouse=True)
def _no_early_left() -> object:
    yield
    check_early.discard()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["search", "quokka"], (True, None)),
        (["--home", "/h", "search", "--json", "-n", "5", "quokka"], (True, "/h")),
        (["search", "quokka", "--home=/h2"], (True, "/h2")),  # global options anywhere
        (["--json", "--color", "never", "search", "-E", "a|b"], (True, None)),
        (["search", "--no-refresh", "quokka"], (False, None)),
        (["search", "--team", "quokka"], (False, None)),
        (["search", "--url=postgresql://x", "quokka"], (False, None)),
        (["search", "-h"], (False, None)),
        (["search", "--", "--no-refresh"], (True, None)),  # a query word, not an option
        (["usage", "--json"], (False, None)),
        (["--home", "search", "conversations"], (False, None)),  # "search" is --home's value
        ([], (False, None)),
    ],
)
def test_the_command_line_says_when_to_check_early(
    argv: list[str], expected: tuple[bool, str | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTDEX_HOME", raising=False)
    assert checked_search(argv) == expected


def test_agentdex_home_is_read_as_click_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTDEX_HOME", "/from/env")
    assert checked_search(["search", "x"]) == (True, "/from/env")
    assert checked_search(["--home", "/given", "search", "x"]) == (True, "/given")
    monkeypatch.setenv("AGENTDEX_HOME", "")  # empty: click treats it as unset
    assert checked_search(["search", "x"]) == (True, None)


def _reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_check_nobody_takes_is_killed_and_reaped(home: Path, transcript: Path) -> None:
    check_early.start(str(home))
    early = check_early._early
    assert early is not None
    assert signal.getsignal(check_early.CHANGED_SIGNAL) == early.noted
    assert check_early.take(None, "/another/home") is None  # not this search's check
    assert _reaped(early.pid) and check_early._early is None
    assert signal.getsignal(check_early.CHANGED_SIGNAL) is signal.SIG_DFL  # put back
    check_early.start(str(home))
    second = check_early._early
    assert second is not None and second.pid != early.pid
    check_early.discard()
    assert _reaped(second.pid)


def test_the_search_takes_the_early_check_of_its_home(home: Path, transcript: Path) -> None:
    check_early.start(str(home))
    early = check_early._early
    assert early is not None
    found = api.search("quokka", home=str(home))
    assert found.stats["total"] == 1 and found.stats["refresh"]["files_parsed"] == 0
    assert check_early._early is None and _reaped(early.pid)  # taken, answered, reaped


def test_a_change_seen_before_the_search_skips_its_answer(home: Path, transcript: Path) -> None:
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "and the wombat one too", 2))
    check_early.start(str(home))
    early = check_early._early
    assert early is not None
    deadline = time.monotonic() + 30
    while not early.changed and time.monotonic() < deadline:
        time.sleep(0.01)  # the child signals the change before it writes its line
    assert early.changed
    answered: list[object] = []
    ahead = check_ahead.answered_ahead(None, str(home), 5.0, answered.append)
    assert answered == []  # no answer computed for an index about to change
    assert ahead is not None and ahead.answer is None
    assert ahead.changes is not None and list(ahead.changes.sources) == [str(transcript)]
    assert signal.getsignal(check_early.CHANGED_SIGNAL) is signal.SIG_DFL
    found = api.search("wombat", home=str(home))
    assert found.stats["total"] == 1


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.run(
        [sys.executable, "-m", "agentdex", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_a_fresh_search_process_sees_an_append(home: Path, transcript: Path) -> None:
    done = _cli(home, "search", "--json", "quokka")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stats"]["refresh"]["files_parsed"] == 0
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "and the numbat one too", 2))
    done = _cli(home, "search", "--json", "numbat")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["stats"]["total"] == 1 and data["stats"]["refresh"]["files_parsed"] == 1
    assert [r["text"] for r in data["results"]] == ["and the numbat one too"]


def test_a_search_that_fails_early_still_exits_as_before(home: Path, transcript: Path) -> None:
    """A usage error after the early fork: the same status and message, no refresh."""
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "and the wombat one too", 2))
    done = _cli(home, "search", "--json", "-E", "wombat (")
    assert done.returncode == 2 and json.loads(done.stdout)["error"]["code"] == "USAGE"
    done = _cli(home, "search", "--json", "--no-refresh", "wombat")
    assert done.returncode == 1  # the failed search indexed nothing
    done = _cli(home, "search", "--json", "wombat")
    assert done.returncode == 0 and json.loads(done.stdout)["stats"]["total"] == 1
