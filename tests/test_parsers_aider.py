"""Aider: real histories checked against the corpus MANIFEST, and where files are found."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from _agent_helpers import count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers._registry import get_parser
from agentdex.paths import home_data_dir
from conftest import git

CHAT = "aider.chat_history_md.v1"
INPUT = "aider.input_history.v1"

# (dir, '#### ' lines, '# aider chat started at' runs, input-history entries) — MANIFEST.md §3
MANIFEST = [("mozgoslav", 305, 3, 24), ("afi-core", 350, 9, 90), ("zen-mcp-server", 25, 4, 8)]


@pytest.mark.parametrize(("name", "prompt_lines", "runs", "inputs"), MANIFEST)
def test_real_histories_match_the_manifest(
    corpus: Path, name: str, prompt_lines: int, runs: int, inputs: int
) -> None:
    chat = corpus / "aider" / name / ".aider.chat.history.md"
    records, cursor, diags = parse(CHAT, chat)
    typed = [r for r in records if r.role == "user"]
    assert sum(r.text.count("\n") + 1 for r in typed) == prompt_lines
    assert len({r.session_id for r in records}) == runs
    assert {r.cwd for r in records} == {str(chat.parent)}
    assert all(r.timestamp for r in records)
    assert cursor.units == count_raw(CHAT, chat) == len(typed)
    assert diags.count == 0
    history = corpus / "aider" / name / ".aider.input.history"
    records, cursor, _ = parse(INPUT, history)
    assert len(records) == inputs == cursor.units == count_raw(INPUT, history)


# (dir, prompts, replies, tool commands and answers, '> Tokens:' reports) over the real files
ROLES = [
    ("afi-core", 29, 39, 20, 39),
    ("mozgoslav", 11, 14, 10, 14),
    ("zen-mcp-server", 0, 0, 8, 0),
]


@pytest.mark.parametrize(("name", "prompts", "replies", "commands", "reports"), ROLES)
def test_real_histories_roles(
    corpus: Path, name: str, prompts: int, replies: int, commands: int, reports: int
) -> None:
    """One reply per model answer: an edit block's ``>>>>>>> REPLACE`` no longer splits it."""
    chat = corpus / "aider" / name / ".aider.chat.history.md"
    records, _, _ = parse(CHAT, chat)
    kinds = Counter((r.role, r.kind) for r in records)
    assert kinds["user", "prompt"] == prompts and kinds["assistant", "message"] == replies
    assert kinds["user", "message"] == commands
    # Aider reports tokens once per model answer; answers cut short report none.
    tokens = sum(r.text.count("Tokens: ") for r in records if r.kind == "tool_result")
    assert tokens == reports
    raw = chat.read_text()
    replace_lines = raw.count("\n>>>>>>> REPLACE")
    in_replies = sum(
        r.text.count(">>>>>>> REPLACE") for r in records if r.role in ("assistant", "tool")
    )
    in_results = sum(r.text.count("\n>>>>>>> REPLACE") for r in records if r.role == "tool")
    assert in_replies == replace_lines and in_results <= 1  # one echoed in an edit error
    spec = get_parser(CHAT)
    assert spec.count_roles is not None
    counted = spec.count_roles(chat)
    assert sum(c["prompts"] for c in counted.values()) == prompts
    assert sum(c["replies"] for c in counted.values()) == replies


def test_multi_line_output_reasoning_and_commands(tmp_path: Path) -> None:
    chat = tmp_path / ".aider.chat.history.md"
    chat.write_text(
        "\n# aider chat started at 2026-11-03 09:00:00\n\n"
        "#### /add app.py  \n"
        "> Added app.py to the chat  \n\n"
        "#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all  \n\n"
        "#### /ask why does the build fail?  \n\n"
        "<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n\nLook at the log.\n\n"
        "</thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n\n"
        "The import is circular.\n\n"
        "app.py\n```python\n<<<<<<< SEARCH\nimport b\n=======\nimport c\n>>>>>>> REPLACE\n```\n\n"
        "> quoted line in the reply would be output, so it is kept short  \n"
        "> mkdir -p dist/dags                 \n"
        "touch dist/dags/index.js  \n"
        "> Run shell commands? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n\n"
        "#### thanks, now fix it  \n\n"
        "Done.\n"
    )
    records, cursor, _ = parse(CHAT, chat)
    assert [(r.locator, r.role, r.kind, r.text) for r in records] == [
        ("line:4", "user", "message", "/add app.py"),
        ("line:5", "tool", "tool_result", "Added app.py to the chat"),
        (
            "line:7",
            "user",
            "message",
            "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all",
        ),
        ("line:9", "user", "prompt", "/ask why does the build fail?"),
        ("line:13", "assistant", "reasoning", "Look at the log."),
        (
            "line:17",
            "assistant",
            "message",
            "The import is circular.\n\napp.py\n```python\n<<<<<<< SEARCH\nimport b\n"
            "=======\nimport c\n>>>>>>> REPLACE\n```",
        ),
        (
            "line:28",
            "tool",
            "tool_result",
            "quoted line in the reply would be output, so it is kept short\n"
            "mkdir -p dist/dags\ntouch dist/dags/index.js\n"
            "Run shell commands? (Y)es/(N)o/(D)on't ask again [Yes]: y",
        ),
        ("line:33", "user", "prompt", "thanks, now fix it"),
        ("line:35", "assistant", "message", "Done."),
    ]
    assert cursor.units == count_raw(CHAT, chat) == 4
    spec = get_parser(CHAT)
    assert spec.count_roles is not None
    session = f"{tmp_path}@2026-11-03 09:00:00"
    assert spec.count_roles(chat) == {session: {"prompts": 2, "replies": 2}}


def _roles(chat: Path) -> dict[str, dict[str, int]]:
    spec = get_parser(CHAT)
    assert spec.count_roles is not None
    return spec.count_roles(chat)


def test_a_paste_whose_line_breaks_were_rewritten_is_one_prompt(tmp_path: Path) -> None:
    """Shaped after a real v0.50 history from Windows (its repository has no licence): a
    pasted log shows as ``####`` lines with blank lines between and no two-space breaks,
    while the input history holds it as one entry. Aider answers a prompt before it reads
    the next input, so what follows a prompt with only blank lines between continues it;
    commands that print nothing (``/clear``) still stand alone."""
    chat = tmp_path / ".aider.chat.history.md"
    chat.write_text(
        "# aider chat started at 2024-08-20 21:16:21\n\n"
        "> Aider v0.50.1  \n\n"
        "#### /clear\n\n"
        "#### /add instructions.md\n\n"
        "> Added instructions.md to the chat\n\n"
        "#### VM46:2327\n\n####\n\n#### GET https://shop.example/auth 400\n\n"
        "#### handleLoaders @ VM46:1963\n\n"
        "> Tokens: 9.1k sent, 312 received.  \n\n"
        "The redirect URI is not registered.\n\n"
        "#### /clear\n\n"
        "#### still failing\n\n"
        "Check the callback.\n"
    )
    records, cursor, _ = parse(CHAT, chat)
    users = [(r.locator, r.kind, r.text) for r in records if r.role == "user"]
    assert users == [
        ("line:5", "message", "/clear"),
        ("line:7", "message", "/add instructions.md"),
        (
            "line:11",
            "prompt",
            "VM46:2327\n\nGET https://shop.example/auth 400\nhandleLoaders @ VM46:1963",
        ),
        ("line:23", "message", "/clear"),
        ("line:25", "prompt", "still failing"),
    ]
    assert cursor.units == count_raw(CHAT, chat) == 5
    assert _roles(chat) == {f"{tmp_path}@2024-08-20 21:16:21": {"prompts": 2, "replies": 2}}


def test_an_architects_plan_and_an_ask_echo_are_not_typed_twice(tmp_path: Path) -> None:
    """Architect mode logs the plan it hands to its editor as a ``####`` input (equal to
    the reply just given); ``/ask X`` is followed by Aider's echo ``#### X``."""
    plan = "Changes to make:\n\n1) Add backend/app.py\n- Create the FastAPI app."
    chat = tmp_path / ".aider.chat.history.md"
    chat.write_text(
        "# aider chat started at 2025-08-06 12:06:30\n\n"
        "#### Make this app a web service.  \n\n"
        + plan
        + "\n\n> Tokens: 1.6k sent, 1.7k received.  \n\n"
        + "".join(f"#### {line}  \n" for line in plan.split("\n"))
        + "\nbackend/app.py\n```python\napp = FastAPI()\n```\n\n"
        "> Applied edit to backend/app.py  \n\n"
        "#### /ask is nodes.py still used?  \n\n"
        "#### is nodes.py still used?  \n\n"
        "No.\n\n"
        "#### <blank>  \n"
    )
    records, cursor, _ = parse(CHAT, chat)
    users = [(r.kind, r.text, r.extra.get("handoff")) for r in records if r.role == "user"]
    assert users == [
        ("prompt", "Make this app a web service.", None),
        ("message", plan, True),
        ("message", "/ask is nodes.py still used?", None),
        ("prompt", "is nodes.py still used?", None),
        ("message", "<blank>", None),
    ]
    assert cursor.units == count_raw(CHAT, chat) == 5
    assert _roles(chat) == {f"{tmp_path}@2025-08-06 12:06:30": {"prompts": 2, "replies": 3}}


def test_models_and_blocks(tmp_path: Path) -> None:
    chat = tmp_path / ".aider.chat.history.md"
    chat.write_text(
        "\n# aider chat started at 2026-11-03 09:00:00\n\n"
        "> Aider v0.86.1\n> Main model: gpt-4.1 with diff edit format\n\n"
        "#### add a health endpoint\n#### with a test\n\n"
        "Here is the change.\n\nmore reply\n\n"
        "> Applied edit to app.py\n"
        "\n# aider chat started at 2026-11-04 10:00:00\n\n#### second run\n"
    )
    records, cursor, _ = parse(CHAT, chat)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("tool", "tool_result", "Aider v0.86.1\nMain model: gpt-4.1 with diff edit format"),
        ("user", "prompt", "add a health endpoint\nwith a test"),
        ("assistant", "message", "Here is the change.\n\nmore reply"),
        ("tool", "tool_result", "Applied edit to app.py"),
        ("user", "prompt", "second run"),
    ]
    assert records[2].model == "gpt-4.1"
    assert len({r.session_id for r in records}) == 2
    assert cursor.units == count_raw(CHAT, chat) == 2


def _project(path: Path, text: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / ".aider.input.history").write_text(f"\n# 2026-11-05 08:00:00.000001\n+{text}\n")
    return path


def _found(home: Path) -> set[str]:
    return {str(s.path.parent) for s in discover(home, agents=["aider"]).sources}


def test_env_roots_expand_one_level_only(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    a = _project(src / "a", "a")
    deep = _project(src / "group" / "deep", "too deep")
    top = _project(src, "src itself")
    monkeypatch.setenv(
        "AGENTDEX_PROJECT_ROOTS", os.pathsep.join([str(src), str(tmp_path / "missing")])
    )
    found = discover(home, agents=["aider"])
    paths = {str(s.path.parent) for s in found.sources}
    assert paths == {str(a), str(top)}
    assert str(deep) not in paths
    assert any("missing" in w for w in found.warnings)


def test_git_toplevel_of_a_subdir_root(
    home: Path, git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(git_repo, "repo root")
    sub = git_repo / "pkg" / "inner"
    sub.mkdir(parents=True)
    monkeypatch.setenv("AGENTDEX_PROJECT_ROOTS", str(sub))
    assert _found(home) == {str(git_repo)}


def test_projects_json_from_the_index(home: Path, tmp_path: Path, git_repo: Path) -> None:
    _project(git_repo, "seen by the index")
    worktree = tmp_path / "wt"
    git(git_repo, "worktree", "add", "-q", "-b", "feat/x", str(worktree))
    _project(worktree, "in the worktree")
    nested = git_repo / "sub"
    nested.mkdir()
    home_data_dir().mkdir(parents=True, exist_ok=True)
    (home_data_dir() / "projects.json").write_text(
        json.dumps([str(worktree), str(nested), "relative/ignored", 42, str(tmp_path / "gone")])
    )
    assert _found(home) == {str(git_repo), str(worktree)}


def test_corrupt_projects_json_is_ignored(home: Path) -> None:
    home_data_dir().mkdir(parents=True, exist_ok=True)
    (home_data_dir() / "projects.json").write_text("{not json")
    assert _found(home) == set()
    (home_data_dir() / "projects.json").write_text('{"a": 1}')
    assert _found(home) == set()


def test_corpus_files_in_a_configured_root(
    home: Path, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "code" / "afi-core"
    shutil.copytree(corpus / "aider" / "afi-core", target)
    monkeypatch.setenv("AGENTDEX_PROJECT_ROOTS", str(tmp_path / "code"))
    stores = sorted(s.store for s in discover(home, agents=["aider"]).sources)
    assert stores == ["aider.chat_history", "aider.input_history"]


REAL = Path(__file__).parent / "fixtures" / "real" / "aider"


@pytest.mark.parametrize(
    ("name", "prompts", "replies", "reasoning", "reports"),
    [("afi-core", 6, 9, 0, 9), ("mozgoslav", 3, 2, 2, 2)],
)
def test_vendored_real_excerpts(
    name: str, prompts: int, replies: int, reasoning: int, reports: int
) -> None:
    """Trimmed real histories (tests/fixtures/real/SOURCES.md): one reply per model answer
    (Aider reports tokens once per answer), reasoning apart, counters agree."""
    chat = REAL / name / ".aider.chat.history.md"
    records, cursor, diags = parse(CHAT, chat)
    kinds = Counter((r.role, r.kind) for r in records)
    assert kinds["user", "prompt"] == prompts and kinds["assistant", "message"] == replies
    assert kinds["assistant", "reasoning"] == reasoning
    assert sum(r.text.count("Tokens: ") for r in records if r.role == "tool") == reports
    assert not any(r.text.startswith(">>>>>>>") for r in records if r.role == "tool")
    assert len({r.locator for r in records}) == len(records)
    assert cursor.units == count_raw(CHAT, chat) and diags.count == 0
    spec = get_parser(CHAT)
    assert spec.count_roles is not None
    counted = spec.count_roles(chat)
    assert sum(c["prompts"] for c in counted.values()) == prompts
    assert sum(c["replies"] for c in counted.values()) == replies
