"""Hermetic test harness.

An autouse fixture points HOME, the XDG dirs, agentdex's data/config dirs
and every agent's env override at temporary paths, and keeps the WSL
bridge off the real ``/mnt/c``: no test can read the developer's real
history. Tests build real files, SQLite databases and git repos in tmp.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Third-party agent plug-ins installed on the developer's machine stay out of the
# tests (tests/test_plugins.py turns them back on for its own temporary site dir).
os.environ["AGENTDEX_PLUGINS"] = "0"

import agentdex
from agentdex.catalogue import CATALOGUE

SRC_DIR = Path(agentdex.__file__).resolve().parent.parent
REPO_DIR = SRC_DIR.parent
#: ``shared/corpus`` beside the clone, or beside the folder of worktrees holding it.
CORPUS_DIR = next(
    (
        base / "shared" / "corpus"
        for base in (REPO_DIR.parent, REPO_DIR.parent.parent)
        if (base / "shared" / "corpus").is_dir()
    ),
    REPO_DIR.parent / "shared" / "corpus",
)
EXAMPLES_HOME = REPO_DIR / "examples" / "home"

#: Env overrides of every catalogued store, plus ones agentdex itself reads.
AGENT_ENV_VARS = sorted(
    {var for row in CATALOGUE for var in row.env}
    | {
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "VSCODE_APPDATA",
        "OPENCODE_DB",
        "PI_CODING_AGENT_DIR",
        "GROK_HOME",
        "APPDATA",
        "AGENTDEX_HOME",
        "AGENTDEX_WSL",
        "AGENTDEX_PROJECT_ROOTS",
        "AGENTDEX_SESSION",
    }
)


@pytest.fixture(autouse=True)
def postings_for_small_refreshes(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process refreshes index postings even when small, so tests exercise the planner.

    agentdex leaves a small refresh's records out of the postings (the tail that
    readers verify, src/agentdex/ingest/refresh.py DEFER_BYTES); test corpora are
    all small, so without this the postings would stay empty. Tests of the tail
    itself are marked ``deferred_postings``; CLI subprocesses keep the default.
    """
    if request.node.get_closest_marker("deferred_postings") is None:
        monkeypatch.setattr("agentdex.ingest.parallel.DEFER_BYTES", 0)


@pytest.fixture(autouse=True)
def hermetic_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every location agentdex could read or write at a fresh temporary tree."""
    base = tmp_path_factory.mktemp("env")
    home = base / "home"
    home.mkdir()
    for var in AGENT_ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("AGENTDEX_DATA_DIR", str(base / "agentdex-data"))
    # An empty config file: AGENTDEX_CONFIG naming a missing file is warned about.
    (base / "agentdex-config.toml").write_text("")
    monkeypatch.setenv("AGENTDEX_CONFIG", str(base / "agentdex-config.toml"))
    # The one discovery input a temporary HOME does not neutralize (ADR 0009).
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(base / "no-windows-mount"))
    monkeypatch.setenv("AGENTDEX_WSL", "0")
    # servers fill embeddings in the background; tests that want it turn it on
    monkeypatch.setenv("AGENTDEX_BACKGROUND_EMBED", "0")
    # the CLI's resident embedder outlives a command: tests that want it turn it on
    monkeypatch.setenv("AGENTDEX_RESIDENT_EMBEDDER", "0")
    # likewise the resident team searcher (`search --team`)
    monkeypatch.setenv("AGENTDEX_RESIDENT_TEAM", "0")
    # and the resident searcher (a whole local search)
    monkeypatch.setenv("AGENTDEX_RESIDENT_SEARCH", "0")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(base / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    (base / "gitconfig").write_text(
        "[user]\n\tname = agentdex tests\n\temail = tests@agentdex.invalid\n"
        "[init]\n\tdefaultBranch = main\n"
    )
    # Commands that default to the current directory (worktree add, context,
    # the HTTP API's default repo) must never act on the developer's checkout.
    workdir = base / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    from agentdex.gitinfo import git_info

    git_info.cache_clear()
    return home


@pytest.fixture
def home(hermetic_env: Path) -> Path:
    """The temporary HOME of this test."""
    return hermetic_env


@pytest.fixture
def corpus() -> Path:
    """``../shared/corpus`` beside the clone; tests using it skip when it is absent."""
    if not CORPUS_DIR.is_dir():
        pytest.skip("shared corpus not present beside this clone")
    return CORPUS_DIR


CliResult = subprocess.CompletedProcess[str]


@pytest.fixture
def run_cli() -> Callable[..., CliResult]:
    """Run ``python -m agentdex`` as a real subprocess with the hermetic env."""

    def _run(
        *args: str,
        input: str | None = None,
        cwd: Path | None = None,
        timeout: float = 60,
        env: dict[str, str] | None = None,
    ) -> CliResult:
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = str(SRC_DIR) + os.pathsep + full_env.get("PYTHONPATH", "")
        full_env.pop("COLUMNS", None)
        if env:
            full_env.update(env)
        return subprocess.run(
            [sys.executable, "-m", "agentdex", *args],
            capture_output=True,
            text=True,
            input=input,
            cwd=cwd,
            timeout=timeout,
            env=full_env,
            check=False,
        )

    return _run


def git(cwd: Path, *args: str) -> str:
    """Run real git in ``cwd`` and return stdout (raises on failure)."""
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout


@pytest.fixture
def git_repo(tmp_path: Path) -> Iterator[Path]:
    """A real git repository with one commit on ``main``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("hello\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "init")
    yield repo


@pytest.fixture
def rendered_sample(home: Path) -> Path:
    """The README's sample home rendered into this test's HOME (``examples/sample_home.py``):
    every agent's stores, and real git repositories with a linked worktree."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "sample_home", REPO_DIR / "examples/sample_home.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.render(home)
    return home


# -- a real PostgreSQL for the team tests (tests/pg_server.py) ----------------------------------


@pytest.fixture(scope="session")
def pg_server() -> Iterator[object]:
    """One PostgreSQL server per test process (each xdist worker has its own); skips if none."""
    from pg_server import Unavailable, start_server

    try:
        server = start_server()
    except Unavailable as exc:
        pytest.skip(f"no PostgreSQL server: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def team_db(pg_server: object) -> Iterator[str]:
    """A fresh database on the test server; yields its name (the superuser's URL: pg_server.url)."""
    from pg_server import create_database, drop_database

    name = create_database(pg_server)  # type: ignore[arg-type]
    try:
        yield name
    finally:
        drop_database(pg_server, name)  # type: ignore[arg-type]
