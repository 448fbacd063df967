"""The refresh check in a forked child while the parent searches (agentdex.api.check_ahead).

Real Claude Code transcripts under a temporary home and a real index: the
parent's answer is kept only when the child found nothing changed; otherwise
the search refreshes and answers again, so an append is always seen.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from agentdex.api import check_ahead
from agentdex.api import search as api
from agentdex.api import search as search_api
from agentdex.paths import changed_signatures, stat_signature
from agentdex.search.budget import Budget
from test_index_manifest import claude_line, write_transcript


@pytest.fixture
def transcript(home: Path) -> Path:
    """An indexed home with one transcript (its path returned, for appends)."""
    path = write_transcript(home)
    api.refresh(home=str(home))
    return path


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[check_ahead.PendingCheck | None]:
    """Every check the searches forked (None: the fork failed)."""
    started: list[check_ahead.PendingCheck | None] = []
    real = check_ahead._start_check

    def recording(root: object, home: str | None) -> check_ahead.PendingCheck | None:
        pending = real(root, home)  # type: ignore[arg-type]
        started.append(pending)
        return pending

    monkeypatch.setattr(check_ahead, "_start_check", recording)
    return started


def _until_stopped(budget: Budget) -> tuple[str | None, float]:
    """An answer that works until its budget stops it: (why, seconds)."""
    started = time.monotonic()
    while not budget.expired() and time.monotonic() - started < 10:
        time.sleep(0.005)
    return budget.reason, time.monotonic() - started


def test_an_unchanged_home_keeps_the_answer_found_meanwhile(
    home: Path, transcript: Path, forks: list[check_ahead.PendingCheck | None]
) -> None:
    found = api.search("quokka", home=str(home))
    assert len(forks) == 1 and forks[0] is not None
    assert [r["text"] for r in found.results] == ["why is the quokka test flaky"]
    assert found.stats["refresh"]["files_parsed"] == 0
    assert next(iter(found.stats)) == "refresh"  # the same shape as a sequential search
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0].pid, os.WNOHANG)  # the child was reaped
    kept = check_ahead.answered_ahead(None, str(home), 0.3, _until_stopped)
    assert kept is not None and kept.answer is not None and kept.answer[0] == "time-budget"
    assert kept.changes is None and kept.refresh["files_parsed"] == 0


def test_a_change_cancels_the_answer_and_names_the_changed_file(
    home: Path, transcript: Path
) -> None:
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "and the wombat one too", 2))
    spent: list[tuple[str | None, float]] = []
    ahead = check_ahead.answered_ahead(
        None, str(home), 30.0, lambda budget: spent.append(_until_stopped(budget))
    )
    assert spent[0][0] == "cancelled" and spent[0][1] < 5  # stopped by the child's signal
    assert ahead is not None and ahead.answer is None
    assert ahead.changes is not None and list(ahead.changes.sources) == [str(transcript)]
    assert signal.getsignal(check_ahead.CHANGED_SIGNAL) is signal.SIG_DFL  # put back


def test_an_append_is_searched_after_refreshing_just_that_file(
    home: Path,
    transcript: Path,
    forks: list[check_ahead.PendingCheck | None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentdex.api import index as index_api

    cancelled: list[str | None] = []
    real_search = search_api._search_index

    def recording(result: api.SearchResult, budget: Budget, **options: object) -> api.SearchResult:
        answer = real_search(result, budget, **options)  # type: ignore[arg-type]
        cancelled.append(budget.reason)
        return answer

    def no_second_check(*args: object) -> None:
        raise AssertionError("the parent checked again")

    monkeypatch.setattr(search_api, "_search_index", recording)
    monkeypatch.setattr(index_api, "_check", no_second_check)
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "and the wombat one too", 2))
    found = api.search("wombat", home=str(home))
    assert forks[0] is not None
    assert [r["text"] for r in found.results] == ["and the wombat one too"]
    assert found.stats["refresh"]["files_parsed"] == 1
    assert len(cancelled) == 2 and cancelled[1] is None  # the second answer is the one kept


def test_a_child_that_answers_nothing_means_a_full_refresh(
    home: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.ingest import manifest

    def dies(root: Path, home: str | None) -> None:
        raise RuntimeError("the child fails before it answers")

    monkeypatch.setattr(manifest, "check", dies)  # seen by the forked child only
    ahead = check_ahead.answered_ahead(None, str(home), 5.0, lambda budget: "answer")
    assert ahead is not None and ahead.answer is None and ahead.changes is None
    monkeypatch.undo()
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "the numbat too", 3))
    assert api.search("numbat", home=str(home)).stats["total"] == 1


def test_no_fork_with_other_threads_or_without_a_refresh(
    home: Path, transcript: Path, forks: list[check_ahead.PendingCheck | None]
) -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert api.search("quokka", home=str(home)).stats["total"] == 1
    finally:
        release.set()
        other.join()
    assert forks == []
    api.search("quokka", home=str(home), refresh_first=False)
    assert forks == []  # no refresh, no check


def test_the_signature_loop_agrees_with_stat_signature(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    file = folder / "f.jsonl"
    file.write_text("x\n")
    paths = [str(folder), str(file), str(tmp_path / "gone")]
    noted = {p: stat_signature(p) for p in paths}
    assert noted[paths[2]] == "missing" and noted[paths[0]].startswith("d:")
    assert list(changed_signatures(noted)) == []
    file.write_text("xy\n")
    assert list(changed_signatures(noted)) == [(str(file), stat_signature(str(file)))]
    assert dict(changed_signatures({p: "" for p in paths})) == {p: stat_signature(p) for p in paths}


def test_a_malformed_query_fails_without_refreshing_a_changed_home(
    home: Path, transcript: Path, forks: list[check_ahead.PendingCheck | None]
) -> None:
    """The query is checked beside the forked check now: still a usage error, still no
    refresh (the append is not indexed by the failed search), the child reaped."""
    from agentdex.errors import UsageError

    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "and the wombat one too", 2))
    with pytest.raises(UsageError):
        api.search("wombat (", home=str(home), regex=True)
    assert len(forks) == 1 and forks[0] is not None
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0].pid, os.WNOHANG)
    assert api.search("wombat", home=str(home), refresh_first=False).stats["total"] == 0
    with pytest.raises(UsageError):
        api.search("quokka", home=str(home), mode="sideways")
    assert api.search("wombat", home=str(home)).stats["total"] == 1  # the next search sees it


def test_the_child_checks_at_a_lower_priority(
    home: Path, transcript: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.ingest import manifest

    seen = tmp_path / "niceness"
    real = manifest.check

    def noting(root: Path, home: str | None) -> object:
        seen.write_text(str(os.nice(0)))  # the forked child's niceness
        return real(root, home)

    monkeypatch.setattr(manifest, "check", noting)  # seen by the forked child only
    found = api.search("quokka", home=str(home))
    assert found.stats["refresh"]["files_parsed"] == 0 and found.stats["total"] == 1
    assert int(seen.read_text()) == min(19, os.nice(0) + check_ahead.CHILD_NICE)
