"""The index/search/sessions commands as real subprocesses (index built in-process)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdex.api import search as api
from test_index_fixtures import ROWS, register, store_dir, write_file

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def indexed(home: Path) -> Path:
    register()
    write_file(
        store_dir(home) / "a.jsonl",
        [
            {
                "session": "s1",
                "role": "user",
                "kind": "prompt",
                "text": "How to add retry backoff?",
                "ts": 1_767_000_000,
                "cwd": "/nonexistent/app",
                "branch": "feat/retry",
            },
            {
                "session": "s1",
                "role": "assistant",
                "kind": "message",
                "text": "Use exponential backoff with jitter.",
                "ts": 1_767_000_060,
                "cwd": "/nonexistent/app",
                "model": "opus",
            },
            {
                "session": "s1",
                "role": "tool",
                "kind": "tool_result",
                "text": "backoff.py: ok",
                "ts": 1_767_000_070,
                "cwd": "/nonexistent/app",
            },
            {
                "session": "s2",
                "role": "user",
                "kind": "prompt",
                "text": "unrelated question",
                "ts": 1_767_100_000,
                "cwd": "/nonexistent/other",
            },
        ],
    )
    api.refresh(home=str(home), rows=ROWS)
    return home


def test_search_json_shape_and_ranking(indexed: Path, run_cli: Run) -> None:
    out = run_cli("search", "--no-refresh", "--json", "backoff")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"query", "status", "stats", "results"}
    assert data["query"] == "backoff" and data["stats"]["total"] == 3
    kinds = [r["kind"] for r in data["results"]]
    assert kinds == ["prompt", "message", "tool_result"]  # typed > prose > tool output
    first = data["results"][0]
    for key in (
        "agent",
        "store",
        "session_id",
        "role",
        "kind",
        "timestamp",
        "text",
        "snippet",
        "cwd",
        "project",
        "branch",
        "worktree",
        "model",
        "source_path",
        "locator",
        "score",
        "ref",
    ):
        assert key in first
    assert first["ref"] == "s1@line:1" and first["branch"] == "feat/retry"


def test_search_ndjson_filters_and_sort(indexed: Path, run_cli: Run) -> None:
    out = run_cli("search", "--no-refresh", "--ndjson", "--sort", "time", "role:user")
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["session_id"] for r in lines] == ["s2", "s1"]
    out = run_cli("search", "--no-refresh", "--json", "backoff", "model:OPUS", "-n", "1")
    assert [r["role"] for r in json.loads(out.stdout)["results"]] == ["assistant"]


def test_plain_output_when_not_a_terminal(indexed: Path, run_cli: Run) -> None:
    out = run_cli("search", "--no-refresh", "jitter")
    assert out.returncode == 0
    assert "claude-code" in out.stdout and "s1@line:2" in out.stdout and "jitter" in out.stdout
    assert "\x1b[" not in out.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["colour:red"], "valid fields"),
        (['"open'], "unbalanced quote"),
        (["(a"], "never closed"),
        (["-E", "a[b"], "invalid regex"),
        (["-i", "-s", "x"], "contradict"),
    ],
)
def test_bad_queries_exit_2_with_one_line(
    indexed: Path, run_cli: Run, args: list[str], needle: str
) -> None:
    out = run_cli("search", "--no-refresh", *args)
    assert out.returncode == 2
    assert out.stderr.startswith("agentdex: ") and needle in out.stderr
    assert "Traceback" not in out.stderr


def test_sessions_command(indexed: Path, run_cli: Run) -> None:
    out = run_cli("conversations", "--no-refresh", "--json")
    data = json.loads(out.stdout)
    assert [c["session_id"] for c in data["conversations"]] == ["s2", "s1"]
    s1 = data["conversations"][1]
    assert (s1["prompts"], s1["replies"], s1["tool_events"], s1["records"]) == (1, 1, 1, 3)
    assert s1["message_count"] == 2  # prompts + replies: tool traffic is not a message
    assert data["conversations"][1]["title"] == "How to add retry backoff?"
    out = run_cli("conversations", "--no-refresh", "--json", "jitter")
    assert [c["session_id"] for c in json.loads(out.stdout)["conversations"]] == ["s1"]


def test_index_command_json_and_quiet_progress(home: Path, run_cli: Run) -> None:
    out = run_cli("index", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["refresh"]["files_seen"] == 0 and data["index"]["records"] == 0
    out = run_cli("index")
    assert out.returncode == 0 and out.stderr == ""  # no progress bar off a terminal
    assert "Indexed 0 changed file(s)" in out.stdout


def test_corrupt_index_without_refresh_is_exit_6(indexed: Path, run_cli: Run) -> None:
    from agentdex.index.store import index_root

    gen = next(index_root(home=str(indexed)).glob("gen-*"))
    for suffix in ("-wal", "-shm"):
        Path(f"{gen / 'index.db'}{suffix}").unlink(missing_ok=True)
    (gen / "index.db").write_bytes(b"garbage" * 1000)
    out = run_cli("search", "--no-refresh", "backoff")
    assert out.returncode == 6 and "agentdex index --full" in out.stderr


def _search_loads(args: list[str], watched: tuple[str, ...]) -> tuple[list[str], dict]:
    """Run ``agentdex search --no-refresh --json ARGS`` in a fresh interpreter: which of
    ``watched`` the search itself imported (not there at start-up), and its JSON."""
    code = (
        "import sys; at_start = set(sys.modules)\n"
        "from agentdex.cli import main\n"
        f"try:\n main(['search', '--no-refresh', '--json', *{args!r}])\n"
        "except SystemExit: pass\n"
        f"print('LOADED', sorted(m for m in {watched!r} if m in sys.modules"
        " and m not in at_start), file=sys.stderr)"
    )
    src = Path(__file__).resolve().parent.parent / "src"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "PYTHONPATH": str(src)},
    )
    line = [x for x in out.stderr.splitlines() if x.startswith("LOADED ")]
    assert line, out.stderr
    return __import__("ast").literal_eval(line[-1][len("LOADED ") :]), json.loads(out.stdout)


def test_search_imports_stay_light(indexed: Path) -> None:
    """A JSON search imports no UI, server or pager modules (every fresh search pays for them).

    Only modules the search itself brings in count: a site `.pth` file of the
    interpreter (CI's imports shutil at start-up) is not agentdex's doing.
    """
    heavy = ("numpy", "rich", "fastapi", "subprocess", "shutil")
    loaded, found = _search_loads(["backoff"], heavy)
    assert loaded == []
    assert found["stats"]["total"] == 3


def test_a_built_in_agent_filter_loads_no_catalogue(indexed: Path, run_cli: Run) -> None:
    """``agent:<built-in id>`` is checked against the built-in ids: the catalogue (every agent
    module and the plug-ins' entry points, ~40-70 ms of a fresh search) is loaded only for
    another name, which is still refused with the valid ids when no plug-in has it."""
    watched = ("agentdex.catalogue", "importlib.metadata")
    loaded, found = _search_loads(["agent:claude-code", "backoff"], watched)
    assert loaded == []
    assert found["stats"]["total"] == 3
    refused = run_cli("search", "--no-refresh", "agent:no-such-agent", "backoff")
    assert refused.returncode == 2
    assert "unknown agent 'no-such-agent'" in refused.stderr and "claude-code" in refused.stderr


def test_search_refreshes_real_claude_transcripts_first(home: Path, run_cli: Run) -> None:
    """No index yet: `search` builds it from a real-format Claude transcript, then finds it."""
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    lines = [
        {
            "type": "user",
            "sessionId": "c1",
            "uuid": "u1",
            "cwd": "/work/app",
            "timestamp": "2026-11-01T10:00:00Z",
            "message": {"role": "user", "content": "why does the flaky quokka test fail"},
        },
        {
            "type": "assistant",
            "sessionId": "c1",
            "uuid": "a1",
            "cwd": "/work/app",
            "timestamp": "2026-11-01T10:00:05Z",
            "message": {
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "text", "text": "The quokka fixture leaks state."}],
            },
        },
    ]
    (folder / "c1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = run_cli("search", "--json", "quokka")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["stats"]["refresh"]["records_added"] == 2
    assert [r["role"] for r in data["results"]] == ["user", "assistant"]
    assert data["results"][0]["ref"] == "c1@line:1"
    again = json.loads(run_cli("search", "--json", "quokka").stdout)
    assert again["stats"]["refresh"]["files_parsed"] == 0  # unchanged: nothing reparsed
