"""What a fresh ``agentdex`` process imports, and when: every search pays for it.

Real processes (``python -m agentdex``) on a real index. A ``sitecustomize``
on the child's path notes which watched modules are loaded at start (a site
``.pth`` may load some: not agentdex's doing), when the search forks its
refresh check (:mod:`agentdex.api.check_ahead`), and at exit.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentdex import paths
from agentdex.api import search as api
from agentdex.config import Config, load_config
from test_index_manifest import claude_line, write_transcript

SRC = Path(__file__).resolve().parent.parent / "src"

#: loaded by the search itself, not before its refresh check is forked (the check starts
#: first, so it overlaps them: the CLI forks it before it imports anything else)
AFTER_THE_FORK = (
    "agentdex.api.search",
    "agentdex.search.matchers",
    "agentdex.search.run",
    "agentdex.search.engine",
    "tantivy",
)
#: never loaded by a local search: OpenSSL (hashes come from CPython's own modules),
#: tomllib for an empty config file, click (a search's command line is read without it:
#: cli/_fast.py), its "did you mean" list, shutil's archivers
NEVER = ("_hashlib", "tomllib", "click", "difflib", "shutil", "bz2", "lzma")
if not any(importlib.util.find_spec(m) for m in ("_sha2", "_sha256")) or not (
    importlib.util.find_spec("_blake2")
):  # an interpreter built without CPython's own hashes: hashlib's (OpenSSL's) serve
    NEVER = NEVER[1:]

#: not loaded by ``--help`` either: the library API (a search's early check imports it)
NOT_FOR_HELP = ("agentdex.api", "agentdex.api.check_early")

PROBE = """\
import atexit, json, os, sys

WATCHED = {watched!r}
_seen = {{"start": sorted(m for m in WATCHED if m in sys.modules)}}
_fork = os.fork

def _noted_fork():
    _seen.setdefault("at_fork", sorted(m for m in WATCHED if m in sys.modules))
    return _fork()

os.fork = _noted_fork

@atexit.register
def _report():
    _seen["end"] = sorted(m for m in WATCHED if m in sys.modules)
    sys.stderr.write("PROBE " + json.dumps(_seen) + "\\n")
"""


@pytest.fixture
def indexed_home(home: Path) -> Path:
    path = write_transcript(home)
    with open(path, "ab") as handle:
        for n in range(2, 12):
            handle.write(claude_line("c1", f"quokka note number {n}", n))
    api.refresh(home=str(home))
    return home


def _run(args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Any]:
    site = tmp_path / "probe"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        PROBE.format(watched=(*AFTER_THE_FORK, *NEVER, *NOT_FOR_HELP))
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), str(site)]))
    done = subprocess.run(
        [sys.executable, "-m", "agentdex", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    lines = [x for x in done.stderr.splitlines() if x.startswith("PROBE ")]
    assert lines, done.stderr
    return done, json.loads(lines[-1][len("PROBE ") :])


def test_a_search_forks_its_check_before_it_imports_the_search(
    indexed_home: Path, tmp_path: Path
) -> None:
    done, seen = _run(["--home", str(indexed_home), "search", "--json", "quokka"], tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["stats"]["returned"] == 11
    # the forked check answered "nothing changed" (no refresh in this process)
    assert data["stats"]["refresh"]["files_parsed"] == 0
    assert "at_fork" in seen, "the search did not fork its refresh check"
    early = set(seen["at_fork"]) - set(seen["start"])
    assert not early & set(AFTER_THE_FORK), early
    assert set(AFTER_THE_FORK) - {"tantivy"} <= set(seen["end"])  # the search did need them
    assert not (set(seen["end"]) - set(seen["start"])) & set(NEVER)


def test_a_regex_search_with_short_options_stays_light(indexed_home: Path, tmp_path: Path) -> None:
    args = ["--home", str(indexed_home), "search", "--json", "-E", "-n3", "-iw", "quokka|zzq"]
    done, seen = _run(args, tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["stats"]["returned"] == 3  # -n3 read as --limit=3
    assert not (set(seen["end"]) - set(seen["start"])) & set(NEVER)


def test_short_options_read_as_their_long_names(indexed_home: Path, tmp_path: Path) -> None:
    """``-n 2`` / ``-n2`` / ``--limit=2``, ``-iw`` / ``-i -w``: one reading each."""
    base = ["--home", str(indexed_home), "search", "--json", "--no-refresh"]
    answers = []
    for extra in (["-n", "2", "-iw"], ["-n2", "-i", "-w"], ["--limit=2", "-wi"]):
        done, _ = _run([*base, *extra, "QUOKKA"], tmp_path)
        assert done.returncode == 0, done.stderr
        answers.append([r["id"] for r in json.loads(done.stdout)["results"]])
    assert answers[0] == answers[1] == answers[2] and len(answers[0]) == 2
    done, _ = _run([*base, "-s", "QUOKKA"], tmp_path)  # case-sensitive: no match
    assert done.returncode == 1, done.stderr
    done, _ = _run([*base, "-n"], tmp_path)  # a short option missing its value
    assert done.returncode == 2 and "requires an argument" in done.stderr


def test_help_imports_no_search_modules(tmp_path: Path) -> None:
    done, seen = _run(["--help"], tmp_path)
    assert done.returncode == 0 and "search" in done.stdout
    loaded = set(seen["end"]) - set(seen["start"])
    assert loaded <= {"click"}, loaded  # --help is click's


@pytest.mark.parametrize("data", [b"", b"/home/someone", "d\u00e9j\u00e0".encode(), b"x" * 10_000])
def test_hashes_without_openssl_are_hashlibs(data: bytes) -> None:
    assert paths.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert (
        paths.blake2b(data, digest_size=12).hexdigest()
        == hashlib.blake2b(data, digest_size=12).hexdigest()
    )


def test_an_empty_config_file_is_the_default_config(tmp_path: Path) -> None:
    for text in ("", "\n\n", "  \t\n", "# only a comment\n"):
        path = tmp_path / "config.toml"
        path.write_text(text)
        assert load_config(path) == Config(path=path)
