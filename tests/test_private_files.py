"""Everything agentdex writes is its user's alone: files 0600 in folders 0700, whatever the
umask (issue 22). CLI runs under ``umask 022`` index (with the archive), list, export a
conversation and export the archive; every file and folder under the data dir, and the
exported files, are then private. A data dir an older agentdex left 0755 is tightened."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from conftest import SRC_DIR
from test_cli_conventions import claude_session

SESSION = "aaaa1111-0000-4000-8000-00000000f11e"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(SRC_DIR))
    return subprocess.run(
        [sys.executable, "-m", "agentdex", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.umask(0o022),
    )


def _loose(root: Path) -> list[str]:
    found = []
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if not path.is_symlink() and mode & 0o077:
            found.append(f"{path.relative_to(root)} {mode:o}")
    return found


def test_files_are_private_under_umask_022(home: Path, tmp_path: Path) -> None:
    token = "ghp_" + "R8mQ2vX7kL4pN9sT1wY6zB3cF5hJ0dG2aE8u"  # for `secrets` to list
    claude_session(home, SESSION, "/work/shop", ["hello there", "hi", f"use {token}", "ok"])
    data = Path(os.environ["AGENTDEX_DATA_DIR"])
    data.mkdir(mode=0o755)
    data.chmod(0o755)  # as an older agentdex left it
    for args in (
        ("index",),
        ("index", "--semantic"),  # the vector store (the model is a dependency)
        ("conversations", "--json"),
        ("secrets", "--json"),
        ("usage", "--json"),
        ("search", "hello", "--json"),
        ("context", "--json"),
        ("export", SESSION, "-o", str(tmp_path / "chat.md")),
        ("archive", "export", "-o", str(tmp_path / "archive.jsonl")),
    ):
        result = _run(*args)
        assert result.returncode == 0, (args, result.stderr)
    written = sorted(p.name for p in data.rglob("*") if p.is_file())
    assert "index.db" in written and "archive.db" in written and "projects.json" in written
    assert any(name.endswith(".blobs") for name in written)  # the archive's chunks
    assert "vectors.db" in written  # the semantic store
    assert _loose(data) == []
    for name in ("chat.md", "archive.jsonl"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name


def test_the_vector_store_is_private_when_a_library_caller_keeps_umask_022(
    tmp_path: Path,
) -> None:
    """``semantic.store.connect`` (a fill called from a program that is not the CLI) makes
    its database, WAL and shared-memory file 0600 under the caller's umask 022, and gives
    the caller's umask back."""
    from agentdex.semantic import store

    previous = os.umask(0o022)
    try:
        db = store.connect(tmp_path / "semantic", create=True)
        assert db is not None
        db.execute("INSERT INTO meta (key, value) VALUES ('probe', '1')")
        assert os.umask(0o022) == 0o022  # given back
        assert (tmp_path / "semantic" / "vectors.db-wal").exists()
        assert _loose(tmp_path / "semantic") == []
        db.close()
    finally:
        os.umask(previous)
