"""A bounded server (issue 22): runaway searches cannot take every core or hold the
server, and a client cannot ask for an hour-long search.

A real ``agentdex serve`` on 127.0.0.1 with two search slots and a half-second
queue is sent five runaway regex searches at once: two run (and stop at their
budget), the other three get 429 with ``Retry-After``; meanwhile
``/openapi.json`` is answered at once and at most two processes burn CPU. A
``time_budget`` above the server's cap is cut to it. The load stops by itself
(bounded threads, bounded budgets).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from hardening_support import RUNAWAY_REGEX, burning_descendants, runaway_home, served

pytestmark = pytest.mark.serial


def test_search_slots_queue_then_refuse_with_retry_after(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTDEX_MAX_SEARCHES", "2")
    monkeypatch.setenv("AGENTDEX_SEARCH_QUEUE_SECONDS", "0.5")
    runaway_home(home)
    with served() as info:
        assert info["url"].startswith("http://127.0.0.1:")
        headers = {"Authorization": f"Bearer {info['token']}"}
        answers: list[httpx.Response] = []
        lock = threading.Lock()

        def runaway() -> None:
            params = {"q": RUNAWAY_REGEX, "regex": "true", "time_budget": "4", "refresh": "false"}
            with httpx.Client(base_url=info["url"], timeout=60) as client:
                answer = client.get("/api/v0/search", params=params, headers=headers)
            with lock:
                answers.append(answer)

        with httpx.Client(base_url=info["url"], timeout=30) as client:
            warm = client.get("/api/v0/search", params={"q": "hello"}, headers=headers)
            assert warm.status_code == 200  # indexed once
            threads = [threading.Thread(target=runaway) for _ in range(5)]
            for thread in threads:
                thread.start()
            time.sleep(1.5)
            burning = burning_descendants(info["proc"].pid)
            assert len(burning) <= 2, burning  # never more than the slots
            started = time.monotonic()
            assert client.get("/openapi.json").status_code == 200
            assert time.monotonic() - started < 5  # answered meanwhile (a loaded machine)
            for thread in threads:
                thread.join(60)
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses == [200, 200, 429, 429, 429], statuses
        for answer in answers:
            if answer.status_code == 429:
                assert int(answer.headers["Retry-After"]) >= 1
                assert answer.json()["error"] == "BUSY"
            else:
                assert answer.json()["stats"]["stopped"] == "time-budget"
        capped = httpx.get(
            f"{info['url']}/api/v0/search",
            params={"q": "hello", "time_budget": "3600", "refresh": "false"},
            headers=headers,
        ).json()
        assert capped["stats"]["time_budget"] == 60
        after: dict[str, Any] = httpx.get(
            f"{info['url']}/api/v0/search", params={"q": "hello"}, headers=headers
        ).json()
        assert after["stats"]["total"] == 3  # the slots were all given back


def _inotify(pid: int) -> int:
    """inotify instances the process holds (each watched workspace has one)."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += "inotify" in os.readlink(fd)
        except OSError:
            continue
    return count


def test_event_streams_follow_a_bounded_number_of_workspaces_and_release_them(
    home: Path, tmp_path: Path
) -> None:
    from agentdex.http.context_api import MAX_STREAMED_WORKSPACES

    folders = []
    for n in range(MAX_STREAMED_WORKSPACES + 1):
        folder = tmp_path / f"ws{n}"
        folder.mkdir()
        (folder / "AGENTS.md").write_text(f"# workspace {n}\n")
        folders.append(folder)
    with served("--workspace", str(tmp_path)) as info:
        headers = {"Authorization": f"Bearer {info['token']}"}
        pid = info["proc"].pid
        with httpx.Client(base_url=info["url"], timeout=30, headers=headers) as client:
            assert client.get("/api/v0/context/snapshot").status_code == 200
            baseline = _inotify(pid)
            streams = []
            readers = []
            try:
                for folder in folders[:-1]:
                    stream = client.stream(
                        "GET", "/api/v0/context/events", params={"dir": str(folder)}
                    )
                    response = stream.__enter__()
                    streams.append(stream)
                    assert response.status_code == 200
                    lines = response.iter_lines()  # kept: dropping it closes the stream
                    assert next(lines).startswith("id: ")  # the first event: it is watched
                    readers.append(lines)
                assert _inotify(pid) >= MAX_STREAMED_WORKSPACES  # one instance each
                refused = client.get("/api/v0/context/events", params={"dir": str(folders[-1])})
                assert refused.status_code == 429, refused.text
                assert int(refused.headers["Retry-After"]) >= 1
                assert refused.json()["error"] == "BUSY"
            finally:
                for stream in streams:
                    stream.__exit__(None, None, None)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and _inotify(pid) > baseline:
                time.sleep(0.5)
            assert _inotify(pid) <= baseline  # every stream's watcher released
            again = client.get("/api/v0/context/snapshot", params={"dir": str(folders[-1])})
            assert again.status_code == 200
