"""The refresh check in a forked child while the parent searches (agentdex.api.check_ahead).

Real Claude Code transcripts under a temporary home and a real index: the
parent's answer is kept only when the child found nothing changed; otherwise
the search refreshes and answers again, so an append is always seen.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agentdex.api import check_ahead
from agentdex.api import search as api
from agentdex.paths import changed_signatures, stat_signature
from test_index_manifest import claude_line, write_transcript


@pytest.fixture
def transcript(home: Path) -> Path:
    """An indexed home with one transcript (its path returned, for appends)."""
    path = write_transcript(home)
    api.refresh(home=str(home))
    return path


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[check_ahead.PendingCheck | None]:
    """Every check the searches started (None: not forked)."""
    started: list[check_ahead.PendingCheck | None] = []
    real = check_ahead.start_check

    def recording(root: object, home: str | None) -> check_ahead.PendingCheck | None:
        pending = real(root, home)  # type: ignore[arg-type]
        started.append(pending)
        return pending

    monkeypatch.setattr(check_ahead, "start_check", recording)
    return started


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


def test_an_append_is_searched_after_the_refresh_it_calls_for(
    home: Path, transcript: Path, forks: list[check_ahead.PendingCheck | None]
) -> None:
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "and the wombat one too", 2))
    found = api.search("wombat", home=str(home))
    assert forks[0] is not None
    assert [r["text"] for r in found.results] == ["and the wombat one too"]
    assert found.stats["refresh"]["files_parsed"] == 1


def test_a_child_that_answers_nothing_means_a_refresh(
    home: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.index import manifest

    def dies(root: Path, home: str | None) -> None:
        raise RuntimeError("the child fails before it answers")

    monkeypatch.setattr(manifest, "check", dies)  # seen by the forked child only
    pending = check_ahead.start_check(None, str(home))
    assert pending is not None and pending.result() is None
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
    assert forks == [None]
    api.search("quokka", home=str(home), refresh_first=False)
    assert forks == [None]  # no refresh, no check


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


def test_the_conversation_list_answers_the_same_way(
    home: Path, transcript: Path, forks: list[check_ahead.PendingCheck | None]
) -> None:
    from agentdex.api.conversations import conversations

    listed = conversations(home=str(home))
    assert forks[0] is not None and listed.stats["refresh"]["files_parsed"] == 0
    assert [c["session_id"] for c in listed.conversations] == ["c1"]
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "and the wombat one too", 2))
    again = conversations("wombat", home=str(home))
    assert forks[1] is not None and again.stats["refresh"]["files_parsed"] == 1
    assert [c["session_id"] for c in again.conversations] == ["c1"]
