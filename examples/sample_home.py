#!/usr/bin/env python3
"""Render the sample home and (with --tour) run the README tour on it.

The template under ``examples/home-template`` holds realistic stores of
every supported agent as text; ``__HOME__`` in any file becomes the
rendered home's absolute path (transcripts record absolute cwds), and a
file or folder named ``__MD5_HOME__src+shop`` the md5 of ``<home>/src/shop``
(Kimi CLI's folder names).
SQLite stores are built from ``examples/home-template-sql/<db path>.sql``.
Git repositories, including a linked worktree, are created with real git
(git cannot commit a ``.git`` folder inside this repository), with fixed
dates so their commit hashes are the README's.

Everything the tour needs is written beside the sample, in plain sight:
``<dest>/tour.env`` sets this shell's HOME to the sample home (and the few
variables listed in it); the README sources it. Every file's modification
time is set to the sample's "now" (``SAMPLE_NOW``), which ``tour.env`` pins
too, so relative times read as in the README on any day.

    python examples/sample_home.py /tmp/agentdex-tour           # render
    python examples/sample_home.py --tour "$(mktemp -d)/home"   # render + the README tour

A folder holding an earlier sample (it has ``.agentdex-sample``) is replaced;
any other non-empty folder is refused.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "home-template"
TEMPLATE_SQL = HERE / "home-template-sql"
PLACEHOLDER = "__HOME__"
#: A name ``__MD5_HOME__src+shop`` becomes md5("<home>/src/shop"): Kimi CLI names a work
#: dir's folders after the md5 of its path.
HASHED = re.compile(r"__MD5_HOME__([A-Za-z0-9_+-]*)")
MARKER = ".agentdex-sample"
#: The sample history's "today": file times are set to it and tour.env pins it.
SAMPLE_NOW = "2026-11-23T12:00:00Z"
#: Its commits (fixed, so the commit hashes in the README are the ones you get).
COMMIT_DATE = "2026-11-10T09:00:00Z"
#: Every variable that could point discovery somewhere else than the sample home.
UNSET = (
    "XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME XDG_CACHE_HOME",
    "AGENTDEX_HOME AGENTDEX_PROJECT_ROOTS APPDATA",
    "CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME VSCODE_APPDATA OPENCODE_DB",
    "PI_CODING_AGENT_DIR GROK_HOME COPILOT_HOME",
    "KILO_DB QWEN_RUNTIME_DIR GOOSE_PATH_ROOT",
    "KIMI_SHARE_DIR",
    "OPENHANDS_PERSISTENCE_DIR OPENHANDS_CONVERSATIONS_DIR",
    "FLATPAK_XDG_DATA_HOME AMP_DIR",
    "CRUSH_GLOBAL_DATA",
    "CONTINUE_GLOBAL_DIR",
    "CLINE_SESSION_DATA_DIR CLINE_DATA_DIR CLINE_DIR",
)


def tour_env_text(home: Path) -> str:
    """The env file the README sources: what makes a shell see the sample home as home."""
    unset = "\n".join(f"unset {names}" for names in UNSET)
    return f"""\
# agentdex tour: this shell sees the sample home as its home.
export HOME={home}
export AGENTDEX_DATA_DIR="$HOME/.local/share/agentdex"  # agentdex's files
export AGENTDEX_CONFIG="$HOME/.config/agentdex/config.toml"
export AGENTDEX_WSL=1                   # act as if on WSL, where a Windows
export AGENTDEX_WSL_USERS_ROOT="$HOME/mnt/c/Users"  # profile is in mnt/c
export AGENTDEX_NOW={SAMPLE_NOW}  # "now" for times like "2d ago"
export AGENTDEX_PAGER=cat  # a pasted tour never stops in a pager
{unset}
"""


def _epoch(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _prepare(dest: Path) -> None:
    """An empty (or new) folder, or one holding an earlier sample (replaced)."""
    if dest.exists() and any(dest.iterdir()):
        if not (dest / MARKER).is_file():
            raise SystemExit(
                f"sample_home: {dest} exists, is not empty and is not a sample home; "
                "choose a new folder"
            )
        shutil.rmtree(dest)
    dest.mkdir(parents=True, exist_ok=True)


def _hashed_names(rel: str, home: str) -> str:
    def md5_of(found: re.Match[str]) -> str:
        path = "/".join([home, *[p for p in found.group(1).split("+") if p]])
        return hashlib.md5(path.encode("utf-8"), usedforsecurity=False).hexdigest()

    return HASHED.sub(md5_of, rel)


def render(dest: Path) -> None:
    """Write the template into ``dest``, plus ``tour.env`` (see the module docstring)."""
    _prepare(dest)
    home = str(dest.resolve())
    for src in sorted(TEMPLATE.rglob("*")):
        rel = src.relative_to(TEMPLATE)
        target = dest / _hashed_names(str(rel), home).replace(
            PLACEHOLDER, home.strip("/").replace("/", "-")
        )
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
    when = _epoch(SAMPLE_NOW) - 2 * 3600
    for path in sorted(dest.rglob("*"), reverse=True):
        os.utime(path, (when, when), follow_symlinks=False)
    make_repos(dest)
    (dest / "tour.env").write_text(tour_env_text(Path(home)), encoding="utf-8")
    (dest / MARKER).write_text("rendered by examples/sample_home.py\n", encoding="utf-8")


def _git(cwd: Path, *args: str) -> None:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="Sample",
        GIT_AUTHOR_EMAIL="sample@example.invalid",
        GIT_COMMITTER_NAME="Sample",
        GIT_COMMITTER_EMAIL="sample@example.invalid",
        GIT_AUTHOR_DATE=COMMIT_DATE,
        GIT_COMMITTER_DATE=COMMIT_DATE,
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
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
        # Crush's per-project store is not part of the project (as most .gitignores say)
        (repo / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (repo / ".git" / "info" / "exclude").write_text(".crush/\n", encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "Initial commit")
    shop = dest / "src" / "shop"
    _git(shop, "worktree", "add", "-q", "-b", "feat/auth", str(dest / "src" / "shop-wt-feat-auth"))


def tour(dest: Path) -> int:
    """Run the README's tour commands against ``dest``, printing as they go.

    The commands are read from README.md (``scripts/readme_tour.py``), so the
    tour run here is exactly the one documented there.
    """
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "readme_tour", HERE.parent / "scripts" / "readme_tour.py"
    )
    if spec is None or spec.loader is None:
        raise SystemExit("sample_home: scripts/readme_tour.py is missing")
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_tour"] = module  # its dataclasses look the module up
    spec.loader.exec_module(module)
    status: int = module.run_live(dest)
    return status


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("dest", type=Path, help="folder to render the sample home into")
    parser.add_argument("--tour", action="store_true", help="run the README tour afterwards")
    args = parser.parse_args()
    if args.tour:  # the tour's first command renders the sample home
        return tour(args.dest.absolute())
    render(args.dest)
    print(f"sample home rendered in {args.dest}; use it in this shell with:")
    print(f"  . {args.dest / 'tour.env'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
