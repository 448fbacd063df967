"""A first build on a big home shows its progress on a terminal, and only there (issue 26, item 9).

A generated home (``bench/generate_corpus.py``: Claude Code and Codex sessions, a few
seconds to index) and a fresh data dir per test, so each command below starts a first
build of the whole home:

* ``agentdex index``, ``agentdex conversations`` and a first ``agentdex search`` in a tmux
  pane (a real terminal, read as a person sees it): the bar is drawn while the build runs,
  its file count grows from frame to frame, then it is erased and the command ends with
  its usual output and exit status;
* the same commands with stdout a pipe (stderr still the terminal): no byte of the bar
  reaches stdout; with ``--json`` none is drawn at all.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO_DIR, SRC_DIR
from corpus_support import ANSI
from test_terminal_tmux import Pane, pane_env

pytestmark = [
    pytest.mark.serial,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

#: big enough that a first build takes seconds (3 MB/s here on an idle core, 1-2 when loaded)
SIZE_MB = 8
#: a frame of the bar: ``indexing ━━━╸     12/80 files 1.1/8.0 MB 1.8 MB/s 0:00:03``
BAR = re.compile(r"^indexing\b.*?(\d+)/(\d+) files")
#: echoed after the command with its exit status
DONE = "__PROGRESS_DONE__"
#: the newest generated session starts here (the generator's clock; ages are "Nmo ago")
NOW = "2026-05-01T00:00:00"


@pytest.fixture(scope="module")
def big_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The generated home and how many session files it holds (one conversation each)."""
    spec = importlib.util.spec_from_file_location(
        "generate_corpus", REPO_DIR / "bench" / "generate_corpus.py"
    )
    assert spec and spec.loader
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    home = tmp_path_factory.mktemp("big-home")
    counts = generator.generate(
        home, SIZE_MB, SIZE_MB * 10, 7, datetime.fromisoformat(NOW).timestamp()
    )
    files = sorted(home.rglob("*.jsonl"))
    assert len(files) == counts["files"] > 20
    return home, len(files)


def _env(tmp_path: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """A fresh data dir (so the command builds the index from nothing), no pager."""
    env = dict(base if base is not None else os.environ)
    for var in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR"):
        env.pop(var, None)
    env.update(
        PYTHONPATH=str(SRC_DIR),
        AGENTDEX_DATA_DIR=str(tmp_path / "data"),
        AGENTDEX_PAGER="cat",
        AGENTDEX_BACKGROUND_BUILD="0",
    )
    return env


@pytest.fixture
def pane(big_home: tuple[Path, int], tmp_path: Path) -> Iterator[Pane]:
    env = _env(tmp_path, pane_env(tmp_path))
    env["BIG_HOME"] = str(big_home[0])  # typed as "$BIG_HOME": no command line wraps
    found = Pane(f"agentdex-progress-{os.getpid()}-{tmp_path.name}", env, tmp_path)
    try:
        yield found
    finally:
        found.close()


def _frames(
    pane: Pane, command: str, timeout: float = 90
) -> tuple[list[tuple[int, int]], str, int]:
    """Type ``command`` and watch the pane until it ends: the bar's (done, total) file counts
    in the order they were seen, the final screen and the exit status."""
    pane.type("clear")
    pane.wait(lambda: len([row for row in pane.screen().splitlines() if row.strip()]) == 1)
    pane.type(f"{command}; echo {DONE[:8]}''{DONE[8:]}=$?")  # split: the typed line never matches
    seen: list[tuple[int, int]] = []
    status: list[int] = []

    def finished() -> bool:
        screen = pane.screen()
        for row in screen.splitlines():
            bar = BAR.match(row.strip())
            if bar and (not seen or seen[-1] != (int(bar[1]), int(bar[2]))):
                seen.append((int(bar[1]), int(bar[2])))
            if row.startswith(f"{DONE}="):
                status.append(int(row.split("=", 1)[1]))
        return bool(status)

    pane.wait(finished, timeout=timeout)
    return seen, pane.screen(), status[0]


def _assert_bar_moved(seen: list[tuple[int, int]], files: int) -> None:
    """The bar was drawn during the build and counted the home's files as it went."""
    assert seen, "no progress bar was drawn during the first build"
    assert {total for _, total in seen} == {files}
    done = [n for n, _ in seen]
    assert done == sorted(done), f"the count went backwards: {done}"
    assert len(set(done)) >= 3, f"the count hardly moved: {done}"
    assert any(0 < n < files for n in done), f"never seen mid-build: {done}"


def _build_on_screen(pane: Pane, files: int, args: str) -> list[str]:
    """Run ``agentdex --home BIG ARGS`` in the pane: it ends with status 0, the bar moved
    during the build and was erased; what the command then wrote (the screen's rows between
    the typed line, which may wrap, and the exit status; blank ones dropped)."""
    command = f'agentdex --home "$BIG_HOME" {args}'
    seen, screen, status = _frames(pane, command)
    assert status == 0
    _assert_bar_moved(seen, files)
    rows = screen.splitlines()
    assert command in "".join(rows)
    start = next(i for i, row in enumerate(rows) if row.endswith("=$?"))
    end = next(i for i, row in enumerate(rows) if row.startswith(f"{DONE}="))
    written = [row for row in rows[start + 1 : end] if row.strip()]
    assert not any(BAR.match(row) for row in written), "the bar was left on the screen"
    return written


def test_index_draws_a_moving_bar_then_its_summary(big_home: tuple[Path, int], pane: Pane) -> None:
    files = big_home[1]
    rows = _build_on_screen(pane, files, "index")
    assert rows[0].startswith(f"Indexed {files} changed file(s)"), rows
    assert any(row.startswith("Context history:") for row in rows)


def test_a_first_conversations_listing_draws_the_bar_then_an_intact_table(
    big_home: tuple[Path, int], pane: Pane
) -> None:
    files = big_home[1]
    rows = _build_on_screen(pane, files, "conversations -n 8")
    # the table starts where the bar was erased: its header first, then 8 whole rows
    assert rows[0].split() == ["agent", "id", "last", "messages", "project", "title"], rows
    table = rows[1:9]
    assert all(row.split()[0] in {"claude-code", "codex"} for row in table), rows
    assert all(" ago " in row for row in table)
    assert rows[9:] == [f"(8 of {files} conversations; -n for more)"]


def test_a_first_search_draws_the_bar_then_its_results(
    big_home: tuple[Path, int], pane: Pane
) -> None:
    rows = _build_on_screen(pane, big_home[1], "search --lexical retry -n 3")
    assert rows[0].split()[0] in {"claude-code", "codex"}, rows
    assert re.fullmatch(r"\(3 of [\d,]+ results; -n for more\)", rows[-1]), rows


# -- stdout a pipe, stderr the terminal ------------------------------------------------------


def _split(env: dict[str, str], *args: str, timeout: float = 90) -> tuple[int, bytes, bytes]:
    """``python -m agentdex ARGS`` with stdout a pipe and stdin/stderr a 100x40 pty:
    (status, stdout bytes, terminal bytes)."""
    main, replica = pty.openpty()
    fcntl.ioctl(replica, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentdex", *args],
        stdin=replica,
        stdout=subprocess.PIPE,
        stderr=replica,
        env={**env, "TERM": "xterm-256color"},
    )
    os.close(replica)
    assert proc.stdout is not None
    out = proc.stdout.fileno()
    chunks = {out: b"", main: b""}
    pending = {out, main}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        ready, _, _ = select.select(list(pending), [], [], 0.2)
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the pty once no process holds its other end
                chunk = b""
            if chunk:
                chunks[fd] += chunk
            else:
                pending.discard(fd)
    code = proc.wait(timeout=30)
    proc.stdout.close()
    os.close(main)
    return code, chunks[out], chunks[main]


def _bar_frames(terminal: bytes) -> list[tuple[int, int]]:
    text = terminal.decode("utf-8", "replace")
    frames = [ANSI.sub("", frame).strip() for frame in re.split(r"\r|\n", text)]
    return [(int(m[1]), int(m[2])) for m in map(BAR.match, frames) if m]


def _no_terminal_bytes(stdout: bytes) -> None:
    assert b"\x1b" not in stdout and b"\r" not in stdout
    assert b"indexing" not in stdout and "━".encode() not in stdout


def test_index_piped_keeps_the_bar_off_stdout(big_home: tuple[Path, int], tmp_path: Path) -> None:
    home, files = big_home
    code, stdout, terminal = _split(_env(tmp_path), "--home", str(home), "index")
    assert code == 0
    _no_terminal_bytes(stdout)
    assert stdout.decode().startswith(f"Indexed {files} changed file(s)")
    _assert_bar_moved(_bar_frames(terminal), files)  # drawn where a person sees it


def test_index_json_draws_no_bar(big_home: tuple[Path, int], tmp_path: Path) -> None:
    home, files = big_home
    code, stdout, terminal = _split(_env(tmp_path), "--home", str(home), "index", "--json")
    assert code == 0
    _no_terminal_bytes(stdout)
    assert json.loads(stdout)["refresh"]["files_parsed"] == files
    assert _bar_frames(terminal) == [] and b"indexing" not in terminal


def test_conversations_piped_keeps_the_bar_off_stdout(
    big_home: tuple[Path, int], tmp_path: Path
) -> None:
    home, files = big_home
    code, stdout, terminal = _split(_env(tmp_path), "--home", str(home), "conversations")
    assert code == 0
    _no_terminal_bytes(stdout)
    rows = stdout.decode().splitlines()
    assert len(rows) == min(50, files)
    assert all(row.split("\t")[0] in {"claude-code", "codex"} for row in rows)
    assert all(len(row.split("\t")) == 8 for row in rows)
    _assert_bar_moved(_bar_frames(terminal), files)


def test_conversations_json_draws_no_bar(big_home: tuple[Path, int], tmp_path: Path) -> None:
    home, files = big_home
    args = ("--home", str(home), "conversations", "--json", "-n", "5")
    code, stdout, terminal = _split(_env(tmp_path), *args)
    assert code == 0
    _no_terminal_bytes(stdout)
    data: dict[str, Any] = json.loads(stdout)
    assert data["stats"]["total"] == files and len(data["conversations"]) == 5
    assert data["stats"]["refresh"]["files_parsed"] == files  # it did build the index
    assert _bar_frames(terminal) == [] and b"indexing" not in terminal


def test_a_listing_cut_short_by_the_first_answer_deadline_says_so(
    big_home: tuple[Path, int], tmp_path: Path
) -> None:
    """A first build big enough to answer early (here: any size, a deadline of 0 s) stops
    after its first file: the listing holds only those conversations, and says so (exit 7,
    as ``search``); the next listing goes on building and is complete."""
    home, files = big_home
    env = _env(tmp_path)
    early = {**env, "AGENTDEX_FIRST_ANSWER_BYTES": "1", "AGENTDEX_FIRST_ANSWER_SECONDS": "0"}
    code, stdout, terminal = _split(early, "--home", str(home), "conversations")
    assert code == 7
    _no_terminal_bytes(stdout)
    listed = stdout.decode().splitlines()
    assert 0 < len(listed) < files
    frames = _bar_frames(terminal)
    assert frames and all(0 < n < files for n, _ in frames)  # the bar, drawn as it stopped
    note = ANSI.sub("", terminal.decode()).replace("\n", " ")
    assert re.search(
        r"the index is still being built: listed the conversations of the newest \d+% of the"
        r" history, back to [-\d: ]+; .*; run `agentdex conversations` again for all of them",
        note,
    ), note

    code, stdout, _ = _split(early, "--home", str(home), "conversations", "--json")
    assert code == 7
    data = json.loads(stdout)
    assert data["status"] == "partial"
    assert data["stats"]["total"] == data["coverage"]["files"] < files  # a file each
    assert 0 < data["coverage"]["fraction"] < 1

    code, stdout, _ = _split(env, "--home", str(home), "conversations", "--json")
    assert code == 0
    data = json.loads(stdout)
    assert data["status"] == "ok" and "coverage" not in data
    assert data["stats"]["total"] == files
