#!/usr/bin/env python3
"""Render a real-shaped home: the shared corpus's real transcripts plus one long conversation.

The sample home (``sample_home.py``) is tidy; real homes are not. This one
holds the real Claude Code and Aider histories of ``../shared/corpus``
(``MANIFEST.md`` there says where each came from), the peer projects'
fixtures of Codex, Pi, Cline, Gemini CLI, Antigravity and VS Code Copilot,
and a generated 600-message Claude Code conversation whose replies are
Markdown (headings, lists, tables, code) with tool calls between them. The
tests of issue 26 (ids, titles, tables, the page on phones) run on it, and so
can a person:

    python examples/corpus_home.py /tmp/real-home   # then: . /tmp/real-home/home.env

The corpus is found beside the repository (``../shared/corpus``, or beside
the folder of worktrees holding it) or at ``--corpus DIR``. Aider keeps its
history in each project, so the projects are put under ``~/src`` and the
config names ``~/src`` as a project root.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
MARKER = ".agentdex-corpus-home"
#: The long conversation's session id, cwd and size.
LONG_ID = "600c0de0-0000-4000-8000-000000000600"
LONG_MESSAGES = 600
#: "now" for relative times (a week after the long conversation), and when that began.
NOW = "2026-11-30T12:00:00Z"
START = datetime(2026, 11, 23, tzinfo=UTC)
#: Every variable that could point discovery somewhere else than this home.
UNSET_LINES = (
    "XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME XDG_CACHE_HOME AGENTDEX_HOME",
    "AGENTDEX_PROJECT_ROOTS CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME VSCODE_APPDATA",
    "OPENCODE_DB PI_CODING_AGENT_DIR GROK_HOME COPILOT_HOME",
)
UNSET = [name for line in UNSET_LINES for name in line.split()]

#: (folder of the corpus, where it goes in the home); each folder is copied file by file.
COPIES = (
    ("claude-code/projects", ".claude/projects"),
    ("agrep-fixtures/claude/home/.claude", ".claude"),
    ("agrep-fixtures/codex/home/.codex", ".codex"),
    ("agrep-fixtures/pi/home/.pi", ".pi"),
    ("agrep-fixtures/cline/home/.cline", ".cline"),
    ("agrep-fixtures/gemini/home/.gemini", ".gemini"),
    ("agrep-fixtures/antigravity/home/.gemini", ".gemini"),
    ("aider/mozgoslav", "src/mozgoslav"),
    ("aider/afi-core", "src/afi-core"),
    ("aider/zen-mcp-server", "src/zen-mcp-server"),
)
#: Single files: (corpus file, home file).
FILES = (
    (
        "agentgrep-samples/codex/codex.sessions/rollout-2026-05-17T12-00-00-example.jsonl",
        ".codex/sessions/2026/05/17/rollout-2026-05-17T12-00-00-example.jsonl",
    ),
    (
        "agentgrep-samples/vscode/vscode.chat_sessions/example.json",
        ".config/Code/User/workspaceStorage/0123456789abcdef0123456789abcdef/chatSessions/example.json",
    ),
)


def find_corpus() -> Path | None:
    """``shared/corpus`` beside the clone, or beside the folder of worktrees holding it."""
    for base in (HERE.parent.parent, HERE.parent.parent.parent):
        candidate = base / "shared" / "corpus"
        if (candidate / "MANIFEST.md").is_file():
            return candidate
    return None


def _copy_tree(src: Path, dest: Path) -> None:
    """Copy files (writable copies: the corpus is read-only) under ``src`` into ``dest``."""
    for path in sorted(src.rglob("*")):
        if path.is_file() and not path.name.startswith("LICENSE"):
            target = dest / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def _reply(n: int) -> str:
    """A Markdown reply: each tenth has a table, each seventh a code block."""
    parts = [
        f"## Step {n}: what changed",
        "",
        f"The parser now handles **case {n}** and *keeps* order:",
    ]
    parts += ["", "- reads the file once", f"- skips `{n}` blank lines", "- writes the index", ""]
    if n % 10 == 0:
        parts += [
            "| file | lines |",
            "| --- | ---: |",
            f"| parser.py | {n * 3} |",
            "| index.py | 12 |",
            "",
        ]
    if n % 7 == 0:
        parts += [
            "```python",
            f"def step_{n}(rows):",
            "    return [r for r in rows if r]",
            "```",
            "",
        ]
    parts.append(f"1. run the tests\n2. check message {n} in the page")
    return "\n".join(parts)


def long_conversation(home: Path, messages: int = LONG_MESSAGES) -> Path:
    """A Claude Code transcript: ``messages`` prompts and replies, a tool call every tenth."""
    cwd = home / "src" / "longchat"
    cwd.mkdir(parents=True, exist_ok=True)
    folder = home / ".claude" / "projects" / ("".join(c if c.isalnum() else "-" for c in str(cwd)))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{LONG_ID}.jsonl"
    lines = []
    parent = None

    def add(kind: str, message: dict[str, object], i: int) -> None:
        nonlocal parent
        uuid = f"00000000-0000-4000-8000-{len(lines):012d}"
        moment = START + timedelta(seconds=len(lines))
        stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": stamp,
                "cwd": str(cwd),
                "sessionId": LONG_ID,
                "version": "2.1.96",
                "gitBranch": "main",
                "userType": "external",
            }
        )
        parent = uuid

    for i in range(messages // 2):
        add(
            "user",
            {
                "role": "user",
                "content": f"Message {2 * i + 1}: please handle case {i} of the parser",
            },
            i,
        )
        if i % 10 == 5:
            call = f"toolu_{i:06d}"
            add(
                "assistant",
                {
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": call,
                            "name": "Bash",
                            "input": {
                                "command": f'pytest -q -k "case_{i}"\necho "done"',
                                "description": "Run the case",
                            },
                        }
                    ],
                },
                i,
            )
            add(
                "user",
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": call,
                            "content": f"1 passed\ndone {i}",
                        }
                    ],
                },
                i,
            )
        add(
            "assistant",
            {
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": _reply(2 * i + 2)}],
            },
            i,
        )
    path.write_text(
        "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines), encoding="utf-8"
    )
    return path


def env_text(home: Path) -> str:
    unset = "\n".join(f"unset {line}" for line in UNSET_LINES)
    return f"""\
# agentdex on a real-shaped home: this shell sees it as its home.
export HOME={home}
export AGENTDEX_DATA_DIR="$HOME/.local/share/agentdex"
export AGENTDEX_CONFIG="$HOME/.config/agentdex/config.toml"
export AGENTDEX_NOW={NOW}
export AGENTDEX_WSL=0
{unset}
"""


def render(dest: Path, corpus: Path, messages: int = LONG_MESSAGES) -> Path:
    """Render the home into ``dest`` (empty, or an earlier rendering); returns ``dest``."""
    if dest.exists() and any(dest.iterdir()):
        if not (dest / MARKER).exists():
            raise SystemExit(f"{dest} is not empty and holds no earlier corpus home")
        shutil.rmtree(dest)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / MARKER).write_text("rendered by examples/corpus_home.py\n")
    for src, target in COPIES:
        _copy_tree(corpus / src, dest / target)
    for src, target in FILES:
        (dest / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus / src, dest / target)
    long_conversation(dest, messages)
    config = dest / ".config" / "agentdex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[projects]\nroots = ["{dest / "src"}"]\n', encoding="utf-8")
    (dest / "home.env").write_text(env_text(dest), encoding="utf-8")
    return dest


def environment(home: Path) -> dict[str, str]:
    """The environment of a process that sees ``home`` as its home (what ``home.env`` sets)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AGENTDEX_"))}
    for name in UNSET:
        env.pop(name, None)
    env.update(
        HOME=str(home),
        AGENTDEX_DATA_DIR=str(home / ".local" / "share" / "agentdex"),
        AGENTDEX_CONFIG=str(home / ".config" / "agentdex" / "config.toml"),
        AGENTDEX_NOW=NOW,
        AGENTDEX_WSL="0",
    )
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--messages", type=int, default=LONG_MESSAGES)
    args = parser.parse_args()
    corpus = args.corpus or find_corpus()
    if corpus is None or not corpus.is_dir():
        print("corpus_home: no shared corpus found (give --corpus DIR)", file=sys.stderr)
        return 2
    home = render(args.dest.resolve(), corpus, args.messages)
    print(f"real-shaped home rendered in {home}; use it in this shell with:\n  . {home}/home.env")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
