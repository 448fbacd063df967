"""The resident searcher (api/search_resident.py): a fresh search answered by a process
that stays, or, whenever that could differ, by the search's own process as before.

Real processes: ``python -m agentdex`` as a user runs it, and a real resident
(``python -m agentdex.api.search_resident_server``) on a real index. Every command
line is run with the resident and without it (``AGENTDEX_RESIDENT_SEARCH=0``) and
must give the same output and exit status; the resident's request count says which
of them it answered.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search_resident
from agentdex.api.search_resident_server import SearchResident
from test_index_manifest import claude_line, write_transcript

OFF = {"AGENTDEX_RESIDENT_SEARCH": "0"}
_SECONDS = re.compile(r'"(seconds|query_seconds|total_seconds|embed_seconds)": [0-9.e-]+')


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recency ranking and relative times as of one moment: two runs can then agree to
    the last digit (the resident and its clients share this environment)."""
    monkeypatch.setenv("AGENTDEX_NOW", "2026-11-20T00:00:00Z")


@pytest.fixture
def indexed(home: Path, run_cli: Any) -> Path:
    """A home with one real transcript, indexed by ``agentdex index`` (a quokka and ten
    notes about it)."""
    path = write_transcript(home)
    with open(path, "ab") as handle:
        for n in range(2, 12):
            handle.write(claude_line("c1", f"quokka note number {n} about Retry", n))
        handle.write(claude_line("c1", "backoff with jitter, then retry", 12))
    assert run_cli("index", "--json", env=OFF).returncode == 0
    return path


def _wait(condition: Any, seconds: float = 30.0) -> bool:
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def resident(indexed: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A resident searcher of this environment (the switch on), running."""
    monkeypatch.setenv("AGENTDEX_RESIDENT_SEARCH", "1")
    pid = search_resident.spawn(search_resident.run_dir(), search_resident.socket_name())
    assert pid is not None
    try:
        assert _wait(lambda: search_resident.status()["running"]), "no resident answered"
        yield pid
    finally:
        search_resident.stop()
        _reap(pid)


def _reap(pid: int) -> None:
    give_up = time.monotonic() + 10
    while time.monotonic() < give_up:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)


def _requests() -> int:
    return int(search_resident.status().get("requests", 0))


def _run(run_cli: Any, args: list[str], env: dict[str, str] | None = None) -> tuple[Any, ...]:
    done = run_cli(*args, env=env)
    return done.returncode, _SECONDS.sub("", done.stdout), done.stderr


#: command lines answered the same by the resident and by the search's own process
LINES = [
    ["search", "--json", "quokka"],
    ["search", "--ndjson", "quokka", "-n", "3"],
    ["search", "quokka", "-n", "2"],  # rows on a pipe, and the footer
    ["search", "quokka"],
    ["search", "--json", "zzqq"],  # nothing found: status 1
    ["search", "zzqq"],
    ["search", "--json", "colour:red"],  # a bad query: the same error and status
    ["search", "--json", "-E", "quo+kka", "--sort", "time"],
    ["search", "--json", "-w", "-i", "retry"],
    ["search", "--json", "-s", "Retry"],
    ["search", "--json", "--lexical", "jitter", "--exact-count"],
    ["search", "--json", "--semantic", "quokka"],  # no embeddings: an error
    ["search", "--json", "--no-dedup", "--time-budget", "2", "note", "-number"],
    ["search", "--json", "--no-refresh", "quokka", "-n", "1"],
    ["search", "--no-refresh", "backoff"],
    ["search", "--json", "--here", "quokka"],
    ["search", "--json", "--only-here", "quokka"],
    ["--color", "always", "search", "quokka", "-n", "3"],
]


def test_the_resident_answers_as_the_search_itself(resident: int, run_cli: Any) -> None:
    for args in LINES:
        before = _requests()
        served = _run(run_cli, args)
        assert _requests() == before + 1, f"the resident did not answer {args}"
        itself = _run(run_cli, args, OFF)
        assert served == itself, args
        assert served[0] in (0, 1, 2, 3, 4, 5)
    assert _run(run_cli, ["search", "--json", "quokka"])[0] == 0


@pytest.fixture
def unpinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real clock (no ``$AGENTDEX_NOW``), for the resident and its clients alike."""
    monkeypatch.delenv("AGENTDEX_NOW")


def test_a_served_search_imports_no_more_than_it_uses(
    unpinned: None, resident: int, run_cli: Any
) -> None:
    """A search the resident answers is the client's start, most of it imports: it
    imports no ``threading`` (it starts no thread), no ``datetime`` (no time to parse)
    and not the forked check's module (none was forked: the resident checks)."""

    def imported(stderr: str) -> set[str]:
        return {
            line.rsplit("|", 1)[1].strip()
            for line in stderr.splitlines()
            if line.startswith("import time:") and line.count("|") == 2
        }

    timed = {"PYTHONPROFILEIMPORTTIME": "1"}
    # what this interpreter imports before any program (its site may import a lot)
    bare = subprocess.run(
        [sys.executable, "-c", "pass"],
        capture_output=True,
        text=True,
        env={**os.environ, **timed},
        check=True,
    )
    before = _requests()
    done = run_cli("search", "--json", "quokka", env=timed)
    assert done.returncode == 0
    assert _requests() == before + 1, "the resident did not answer"
    added = imported(done.stderr) - imported(bare.stderr)
    assert "agentdex.api.search_resident" in added  # the list is there
    assert not added & {"threading", "datetime", "agentdex.api.check_early"}


def test_here_is_the_clients_folder(resident: int, run_cli: Any, tmp_path: Path) -> None:
    """``--here`` ranks by the folder the client runs in, not the resident's."""
    place = tmp_path / "work" / "app"
    place.mkdir(parents=True)
    args = ["search", "--json", "--only-here", "quokka"]
    served = run_cli(*args, cwd=place)
    itself = run_cli(*args, cwd=place, env=OFF)
    assert (served.returncode, _SECONDS.sub("", served.stdout)) == (
        itself.returncode,
        _SECONDS.sub("", itself.stdout),
    )


def test_a_change_is_searched_after_a_refresh_here(
    resident: int, indexed: Path, run_cli: Any
) -> None:
    """The check finds the new line: the search refreshes in its own process (the resident's
    answer is dropped); the next search, fresh, is the resident's and sees it too."""
    assert _run(run_cli, ["search", "--json", "wallaby"])[0] == 1
    with open(indexed, "ab") as handle:
        handle.write(claude_line("c1", "a wallaby appeared", 30))
    code, out, _ = _run(run_cli, ["search", "--json", "wallaby"])
    assert code == 0 and '"records_added": 1' in out
    before = _requests()
    code, out, _ = _run(run_cli, ["search", "--json", "wallaby"])
    assert code == 0 and "a wallaby appeared" in out and '"files_parsed": 0' in out
    assert _requests() == before + 1


def test_another_processs_refresh_and_rebuild_are_seen(
    resident: int, indexed: Path, run_cli: Any
) -> None:
    """After ``agentdex index`` (another process commits) and ``index --full`` (a new
    generation), the resident answers, and from the new state."""
    assert _run(run_cli, ["search", "--json", "numbat"])[0] == 1
    with open(indexed, "ab") as handle:
        handle.write(claude_line("c1", "a numbat in the garden", 31))
    assert run_cli("index", "--json").returncode == 0
    before = _requests()
    code, out, _ = _run(run_cli, ["search", "--json", "numbat"])
    assert code == 0 and "a numbat in the garden" in out
    assert _requests() == before + 1
    with open(indexed, "ab") as handle:
        handle.write(claude_line("c1", "a bilby under the numbat", 32))
    assert run_cli("index", "--full", "--json").returncode == 0
    before = _requests()
    served = _run(run_cli, ["search", "--json", "numbat"])
    assert served[0] == 0 and "a bilby under the numbat" in served[1]
    assert _requests() == before + 1
    assert served == _run(run_cli, ["search", "--json", "numbat"], OFF)


def test_no_resident_answers_here_then_starts_one(indexed: Path, run_cli: Any) -> None:
    env = {"AGENTDEX_RESIDENT_SEARCH": "1"}
    first = _run(run_cli, ["search", "--json", "quokka"], env)
    assert first == _run(run_cli, ["search", "--json", "quokka"], OFF)
    os.environ["AGENTDEX_RESIDENT_SEARCH"] = "1"  # the resident's environment: ask it
    try:
        assert _wait(lambda: search_resident.status()["running"]), "none was started"
        pid = search_resident.status()["pid"]
        assert _run(run_cli, ["search", "--json", "quokka"], env) == first
        assert _requests() == 1
        assert search_resident.stop()
        assert _wait(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid))
    finally:
        del os.environ["AGENTDEX_RESIDENT_SEARCH"]


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except OSError:
        return True


def test_the_switch_off_asks_nothing(resident: int, run_cli: Any) -> None:
    _run(run_cli, ["search", "--json", "quokka"], OFF)
    _run(run_cli, ["search", "--json", "quokka"], {"AGENTDEX_RESIDENT_SEARCH": "false"})
    assert _requests() == 0


def test_doctor_says_whether_a_resident_searches(resident: int, run_cli: Any) -> None:
    """``doctor`` reports the resident searcher (never starting one): running with its
    pid, then not running once it left, then off with the switch."""
    import json

    def searcher(env: dict[str, str] | None = None) -> dict[str, Any]:
        done = run_cli("doctor", "--json", env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["searcher"]

    running = searcher()
    assert (running["enabled"], running["running"], running["pid"]) == (True, True, resident)
    assert running["socket"].endswith(search_resident.socket_name())
    assert f"pid {resident}" in run_cli("doctor").stdout
    assert search_resident.stop()
    assert _wait(lambda: not search_resident.status()["running"])
    assert (searcher()["enabled"], searcher()["running"]) == (True, False)
    assert "the next search starts it" in run_cli("doctor").stdout
    assert searcher(OFF)["enabled"] is False
    assert "AGENTDEX_RESIDENT_SEARCH=0" in run_cli("doctor", env=OFF).stdout
    assert search_resident.status()["running"] is False  # doctor started none


def test_another_environment_is_searched_here(resident: int, run_cli: Any) -> None:
    env = {"AGENTDEX_NOW": "2026-12-01T00:00:00Z"}  # not the resident's
    served = _run(run_cli, ["search", "--json", "quokka"], env)
    assert _requests() == 0
    assert served == _run(run_cli, ["search", "--json", "quokka"], {**env, **OFF})


def test_a_dead_resident_is_passed_by(indexed: Path, run_cli: Any) -> None:
    """A socket left by a resident that died refuses the connection: searched here."""
    folder, name = search_resident.run_dir(), search_resident.socket_name()
    folder.mkdir(parents=True, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(folder / name))
    stale.close()
    env = {"AGENTDEX_RESIDENT_SEARCH": "1"}
    started = time.monotonic()
    served = _run(run_cli, ["search", "--json", "quokka"], env)
    assert time.monotonic() - started < 20
    assert served == _run(run_cli, ["search", "--json", "quokka"], OFF)
    os.environ["AGENTDEX_RESIDENT_SEARCH"] = "1"
    try:  # and a new resident took the name
        assert _wait(lambda: search_resident.status()["running"])
        assert search_resident.stop()
    finally:
        del os.environ["AGENTDEX_RESIDENT_SEARCH"]


def test_a_stuck_resident_is_waited_for_a_bounded_time(indexed: Path, run_cli: Any) -> None:
    """A resident that accepts and never answers: the search waits its time budget plus
    ``ANSWER_MARGIN``, then searches here."""
    folder, name = search_resident.run_dir(), search_resident.socket_name()
    folder.mkdir(parents=True, exist_ok=True)
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.bind(str(folder / name))
    stuck.listen(4)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        stuck.settimeout(0.2)
        while not done.is_set():
            try:
                held.append(stuck.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        args = ["search", "--json", "--time-budget", "1", "quokka"]
        started = time.monotonic()
        served = _run(run_cli, args, {"AGENTDEX_RESIDENT_SEARCH": "1"})
        took = time.monotonic() - started
        assert held, "the search did not ask the stuck resident"
        assert took < 1 + search_resident.ANSWER_MARGIN + 10
        assert served == _run(run_cli, args, OFF)
    finally:
        done.set()
        thread.join()
        stuck.close()
        for conn in held:
            conn.close()


def test_the_resident_refuses_other_code_and_malformed_requests(resident: int) -> None:
    folder, name = search_resident.run_dir(), search_resident.socket_name()
    good = {
        "op": "search",
        "stamp": search_resident.code_stamp(),
        "env": search_resident.environment_digest(),
        "query": "quokka",
        "seconds": None,
        "options": {
            "mode": "lexical",
            "home": None,
            "regex": False,
            "word": False,
            "case": "smart",
            "limit": 5,
            "sort": "relevance",
            "here": None,
            "only_here": False,
            "dedup": True,
            "now": None,
            "exact_total": False,
        },
    }

    def ask(request: dict[str, Any]) -> dict[str, Any]:
        sock = search_resident.connect(folder, name, 5.0)
        assert sock is not None
        with sock:
            search_resident.send(sock, request)
            return search_resident.receive(sock)[0]

    assert ask(good)["ok"]
    for bad in (
        {"stamp": "another/agentdex\x000.0"},
        {"env": "00000000"},
        {"seconds": True},
        {"options": {**good["options"], "limit": True}},
        {"options": {**good["options"], "extra": 1}},
        {"options": {**good["options"], "here": "relative/place"}},
        {"options": {**good["options"], "home": "relative/home"}},
    ):
        answer = ask({**good, **bad})
        assert not answer["ok"] and "fallback" in answer and "error" not in answer, bad


def test_a_resident_whose_code_changed_leaves(tmp_path: Path) -> None:
    server = SearchResident(tmp_path, "x.sock", 60.0)
    assert not server._changed_code()
    server.born = 0  # every module file is newer than that
    assert server._changed_code()


def test_a_partial_index_is_answered_partial(
    home: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build still running: the same coverage and exit 7, by the resident (``--no-refresh``,
    or a check that finds nothing new) and by the search's own process."""
    from test_ingest_firstbuild import STOP_AT_ONCE

    _wombats(home)
    first = run_cli("search", "--json", "wombat", env=STOP_AT_ONCE)
    assert first.returncode == 7
    monkeypatch.setenv("AGENTDEX_RESIDENT_SEARCH", "1")
    for name, value in STOP_AT_ONCE.items():
        monkeypatch.setenv(name, value)
    pid = search_resident.spawn(search_resident.run_dir(), search_resident.socket_name())
    assert pid is not None
    try:
        assert _wait(lambda: search_resident.status()["running"])
        args = ["search", "--json", "--no-refresh", "wombat"]
        served = _run(run_cli, args)
        assert _requests() == 1
        assert served[0] == 7 and '"coverage"' in served[1] and '"partial"' in served[1]
        assert served == _run(run_cli, args, OFF)
        plain = ["search", "--no-refresh", "wombat"]
        assert _run(run_cli, plain) == _run(run_cli, plain, OFF)
        assert "still being built" in _run(run_cli, plain)[2]
    finally:
        search_resident.stop()
        _reap(pid)


def _wombats(home: Path) -> None:
    """test_ingest_firstbuild's six transcripts: file N is N hours old."""
    from test_ingest_firstbuild import FILES, _line

    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    now = time.time()
    for n in range(FILES):
        path = folder / f"c{n}.jsonl"
        path.write_bytes(_line(f"c{n}", f"why does wombat {n} burrow"))
        os.utime(path, (now - 3600 * n, now - 3600 * n))


def _on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    """``python -m agentdex ARGS`` with stdout and stderr a terminal 100 columns wide."""
    import fcntl
    import pty
    import struct
    import subprocess
    import sys
    import termios

    from conftest import SRC_DIR

    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    full = {**os.environ, **env, "TERM": "xterm-256color", "COLUMNS": "100"}
    full["PYTHONPATH"] = str(SRC_DIR) + os.pathsep + full.get("PYTHONPATH", "")
    child = subprocess.Popen(
        [sys.executable, "-m", "agentdex", *args],
        stdin=subprocess.DEVNULL,
        stdout=side,
        stderr=side,
        env=full,
    )
    os.close(side)
    out = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed: the child is gone
            break
        if not chunk:
            break
        out.append(chunk)
    os.close(main)
    return child.wait(timeout=60), b"".join(out)


#: what the search's own process draws on a terminal around its refresh even when there is
#: nothing to index (a transient progress bar: hide the cursor, clear the line a few
#: times, show it); the resident's client does not refresh, so it draws none
_BAR = re.compile(rb"\x1b\[\?25[lh]|\x1b\[2K|\r(?!\n)")


def test_a_terminal_gets_the_same_text(resident: int) -> None:
    """Rendered on the client's terminal (its width, colours, relative times) either way."""
    for args in (["search", "--no-pager", "quokka", "-n", "3"], ["search", "zzqq"]):
        before = _requests()
        served = _on_a_terminal(args, {})
        assert _requests() == before + 1
        itself = _on_a_terminal(args, OFF)
        assert b"\x1b[?25l" in itself[1] and b"\x1b[?25l" not in served[1]  # the answer used
        assert (served[0], _BAR.sub(b"", served[1])) == (itself[0], _BAR.sub(b"", itself[1]))
    assert b"quokka" in _on_a_terminal(["search", "--no-pager", "quokka"], {})[1]


def test_the_switch_leaves_the_refresh_check_alone(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search with ``AGENTDEX_RESIDENT_SEARCH=0`` beside one without must not make the
    other's check find "everything changed" (a full refresh, ~0.5 s at 1 GB)."""
    from agentdex.ingest.manifest import fingerprint

    before = fingerprint(str(home))
    monkeypatch.setenv("AGENTDEX_RESIDENT_SEARCH", "1")
    monkeypatch.setenv("AGENTDEX_SEARCH_IDLE_SECONDS", "30")
    assert fingerprint(str(home)) == before


#: ``python -m agentdex`` with every ``os.fork`` of the process noted in ``$FORKS`` first
_COUNTING_FORKS = """
import os, runpy, sys
_fork = os.fork
def _noted_fork():
    with open(os.environ["FORKS"], "a") as out:
        out.write("fork\\n")
    return _fork()
os.fork = _noted_fork
sys.argv[0] = "agentdex"
runpy.run_module("agentdex", run_name="__main__")
"""


def test_a_listening_resident_checks_instead_of_a_fork(
    resident: int, indexed: Path, tmp_path: Path
) -> None:
    """With a resident listening, the client forks no check: the resident checks (after
    the request came), and its answer equals the search's own. A change made since is
    found by that check and refreshed here. Without a resident, the check is forked."""
    import subprocess
    import sys

    from conftest import SRC_DIR

    forks = tmp_path / "forks"

    def search(*args: str, env: dict[str, str] | None = None) -> tuple[Any, ...]:
        forks.unlink(missing_ok=True)
        full = {**os.environ, "FORKS": str(forks), "PYTHONPATH": str(SRC_DIR), **(env or {})}
        done = subprocess.run(
            [sys.executable, "-c", _COUNTING_FORKS, *args],
            capture_output=True,
            text=True,
            env=full,
            timeout=60,
            check=False,
        )
        count = len(forks.read_text().splitlines()) if forks.exists() else 0
        return (done.returncode, _SECONDS.sub("", done.stdout), done.stderr), count

    assert search_resident.listening(None)
    before = _requests()
    served, forked = search("search", "--json", "quokka")
    assert forked == 0 and _requests() == before + 1
    assert '"files_parsed": 0' in served[1]
    itself, forked_itself = search("search", "--json", "quokka", env=OFF)
    assert forked_itself == 1 and served == itself
    with open(indexed, "ab") as handle:
        handle.write(claude_line("c1", "a potoroo by the quokka", 40))
    changed, forked = search("search", "--json", "potoroo")
    assert changed[0] == 0 and "a potoroo by the quokka" in changed[1]
    assert '"records_added": 1' in changed[1] and forked == 0  # the resident's check found it
    again, forked = search("search", "--json", "potoroo")
    assert forked == 0 and again[0] == 0 and '"files_parsed": 0' in again[1]
    assert again == search("search", "--json", "potoroo", env=OFF)[0]


def test_listening_needs_the_switch_a_servable_search_and_the_socket(
    resident: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert search_resident.listening(None)
    assert not search_resident.listening("relative/home")
    monkeypatch.setenv("AGENTDEX_RESIDENT_SEARCH", "0")
    assert not search_resident.listening(None)
    monkeypatch.setenv("AGENTDEX_RESIDENT_SEARCH", "1")
    search_resident.stop()
    assert _wait(lambda: not search_resident.listening(None), 15)
