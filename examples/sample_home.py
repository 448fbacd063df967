#!/usr/bin/env python3
"""Render the sample home and (with --tour) run the README tour on it.

The template under ``examples/home-template`` holds realistic stores of
every supported agent as text; ``__HOME__`` in any file becomes the
rendered home's absolute path (transcripts record absolute cwds).
SQLite stores are built from ``examples/home-template-sql/<db path>.sql``.
Git repositories, including a linked worktree, are created with real git
(git cannot commit a ``.git`` folder inside this repository).

    python examples/sample_home.py /tmp/agentdex-sample           # render
    python examples/sample_home.py --tour /tmp/agentdex-sample    # render + tour
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "home-template"
TEMPLATE_SQL = HERE / "home-template-sql"
PLACEHOLDER = "__HOME__"


def render(dest: Path) -> None:
    """Write the template into ``dest`` (which must not exist or be empty)."""
    if dest.exists() and any(dest.iterdir()):
        raise SystemExit(f"sample_home: {dest} exists and is not empty; choose a new folder")
    dest.mkdir(parents=True, exist_ok=True)
    home = str(dest.resolve())
    for src in sorted(TEMPLATE.rglob("*")):
        rel = src.relative_to(TEMPLATE)
        target = dest / str(rel).replace(PLACEHOLDER, home.strip("/").replace("/", "-"))
        if src.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            target.write_bytes(data)
        else:
            target.write_text(text.replace(PLACEHOLDER, home), encoding="utf-8")
        shutil.copymode(src, target)
    for seed in sorted(TEMPLATE_SQL.rglob("*.sql")):
        db = dest / seed.relative_to(TEMPLATE_SQL).with_suffix("")
        db.parent.mkdir(parents=True, exist_ok=True)
        sql = seed.read_text(encoding="utf-8").replace(PLACEHOLDER, home)
        with sqlite3.connect(db) as conn:
            conn.executescript(sql)
        conn.close()
    make_repos(dest)


def _git(cwd: Path, *args: str) -> None:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="Sample",
        GIT_AUTHOR_EMAIL="sample@example.invalid",
        GIT_COMMITTER_NAME="Sample",
        GIT_COMMITTER_EMAIL="sample@example.invalid",
    )
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def make_repos(dest: Path) -> None:
    """src/shop (with a linked worktree on feat/auth) and src/notes-api as real repos."""
    if shutil.which("git") is None:
        print("sample_home: git not found; projects are plain folders", file=sys.stderr)
        return
    for name in ("shop", "notes-api"):
        repo = dest / "src" / name
        repo.mkdir(parents=True, exist_ok=True)
        if not (repo / "README.md").exists():
            (repo / "README.md").write_text(f"# {name}\n", encoding="utf-8")
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "Initial commit")
    shop = dest / "src" / "shop"
    _git(shop, "worktree", "add", "-q", "-b", "feat/auth", str(dest / "src" / "shop-wt-feat-auth"))


def tour_env(dest: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        AGENTDEX_WSL="1",
        AGENTDEX_WSL_USERS_ROOT=str(dest / "mnt" / "c" / "Users"),
        AGENTDEX_DATA_DIR=str(dest / ".agentdex-data"),
        AGENTDEX_CONFIG=str(dest / ".config" / "agentdex" / "config.toml"),
    )
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "VSCODE_APPDATA"):
        env.pop(var, None)
    return env


TOUR: tuple[tuple[str, ...], ...] = (
    ("sources",),
    ("search", "retry backoff"),
    ("search", "agent:claude-code", "oauth", "--limit", "3"),
    ("sessions",),
    ("context", "{home}/src/shop"),
    ("worktree", "list", "--repo", "{home}/src/shop"),
)


def tour(dest: Path) -> int:
    """Run the README tour against the rendered home; returns the worst exit status."""
    env = tour_env(dest)
    worst = 0
    for step in TOUR:
        args = [a.replace("{home}", str(dest)) for a in step]
        print(f"\n$ agentdex --home {dest} {' '.join(args)}", flush=True)
        done = subprocess.run(
            [sys.executable, "-m", "agentdex", "--home", str(dest), *args], env=env, check=False
        )
        worst = max(worst, done.returncode)
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("dest", type=Path, help="folder to render the sample home into")
    parser.add_argument("--tour", action="store_true", help="run the README tour afterwards")
    args = parser.parse_args()
    render(args.dest)
    print(f"sample home rendered in {args.dest}")
    return tour(args.dest.resolve()) if args.tour else 0


if __name__ == "__main__":
    sys.exit(main())
