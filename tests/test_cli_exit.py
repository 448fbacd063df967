"""A finished ``agentdex search`` leaves without the interpreter's teardown (agentdex.cli._exit).

Real processes (``python -m agentdex``) on a real index. A ``sitecustomize``
put on the child's path is the witness: its ``atexit`` callback must still
run (what a normal exit runs, and the output, are kept) while its object's
``__del__`` (the interpreter's teardown) does not, for a search; every other
command, and a program that runs agentdex inside itself, exits as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentdex.api import search as api
from agentdex.cli import _exit
from test_index_manifest import claude_line, write_transcript

SRC = Path(__file__).resolve().parent.parent / "src"

WITNESS = """\
import atexit, sys

class _Witness:
    def __del__(self):
        sys.stderr.write("WITNESS torn down\\n")

_witness = _Witness()
atexit.register(lambda: sys.stderr.write("WITNESS atexit\\n"))
"""


@pytest.fixture
def indexed_home(home: Path) -> Path:
    path = write_transcript(home)
    with open(path, "ab") as handle:  # a few more records, so the JSON has some length
        for n in range(2, 40):
            handle.write(claude_line("c1", f"quokka note number {n} " + "x" * 200, n))
    api.refresh(home=str(home))
    return home


def _run(
    args: list[str], tmp_path: Path, code: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m agentdex ARGS`` (or ``python -c CODE ARGS``) with the witness on its path."""
    site = tmp_path / "witness"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(WITNESS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), str(site)]))
    command = ["-c", code] if code is not None else ["-m", "agentdex"]
    return subprocess.run(
        [sys.executable, *command, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_a_search_keeps_its_output_and_atexit_but_skips_the_teardown(
    indexed_home: Path, tmp_path: Path
) -> None:
    done = _run(["--home", str(indexed_home), "search", "--json", "-n", "100", "quokka"], tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # the whole document arrived
    assert data["stats"]["returned"] == 39
    assert "WITNESS atexit" in done.stderr
    assert "WITNESS torn down" not in done.stderr


def test_a_search_keeps_its_exit_status(indexed_home: Path, tmp_path: Path) -> None:
    none = _run(["--home", str(indexed_home), "search", "--json", "zzqqxx"], tmp_path)
    assert none.returncode == 1 and json.loads(none.stdout)["results"] == []
    bad = _run(["--home", str(indexed_home), "search", "--json", "-E", "("], tmp_path)
    assert bad.returncode == 2 and "error" in json.loads(bad.stdout)
    for done in (none, bad):
        assert "WITNESS atexit" in done.stderr and "WITNESS torn down" not in done.stderr


def test_other_commands_exit_as_before(indexed_home: Path, tmp_path: Path) -> None:
    done = _run(["--home", str(indexed_home), "sources", "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "WITNESS atexit" in done.stderr and "WITNESS torn down" in done.stderr


def test_a_program_running_agentdex_inside_itself_goes_on(
    indexed_home: Path, tmp_path: Path
) -> None:
    host = (
        "import runpy, sys\n"
        "sys.argv = ['agentdex'] + sys.argv[1:]\n"
        "code = 0\n"
        "try:\n"
        "    runpy.run_module('agentdex', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "print('host goes on after', code, file=sys.stderr)\n"
    )
    for query, status in (("quokka", 0), ("zzqqxx", 1)):
        done = _run(["--home", str(indexed_home), "search", "--json", query], tmp_path, host)
        assert done.returncode == 0, done.stderr
        assert f"host goes on after {status}" in done.stderr
        assert "WITNESS torn down" in done.stderr


def test_leave_returns_when_it_must(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: pytest is not agentdex's own process, nor is a thread still working
    an allowed exit; each case returns (else this test's process would end here)."""
    assert _exit.runs_agentdex() is False
    monkeypatch.setattr(_exit, "_allowed", True)
    _exit.leave(0)
    monkeypatch.setattr(_exit, "runs_agentdex", lambda: True)
    _exit.leave("a message")  # not a plain status
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    try:
        _exit.leave(0)  # a non-daemon thread is still alive
    finally:
        release.set()
        worker.join()
    monkeypatch.setattr(_exit, "_allowed", False)
    _exit.leave(0)
