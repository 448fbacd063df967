"""CLI conventions as a program in a pipe sees them: formats, errors, exit codes, homes.

Everything runs ``python -m agentdex`` as a real subprocess (stdout is a pipe,
never a terminal); the terminal side is tested under tmux
(``tests/test_terminal_tmux.py``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import SRC_DIR
from search_support import assert_same_results

Run = Callable[..., subprocess.CompletedProcess[str]]


def claude_session(home: Path, session: str, cwd: str, texts: list[str], day: int = 20) -> Path:
    """A real-format Claude Code transcript: alternating user prompts and answers."""
    folder = home / ".claude" / "projects" / ("-" + cwd.strip("/").replace("/", "-"))
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for n, text in enumerate(texts):
        user = n % 2 == 0
        lines.append(
            {
                "type": "user" if user else "assistant",
                "sessionId": session,
                "uuid": f"{session}-{n}",
                "cwd": cwd,
                "timestamp": f"2026-11-{day:02d}T10:{n // 60:02d}:{n % 60:02d}Z",
                "message": {
                    "role": "user" if user else "assistant",
                    "content": text if user else [{"type": "text", "text": text}],
                },
            }
        )
    path = folder / f"{session}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture
def history(home: Path) -> Path:
    claude_session(
        home,
        "aaaa1111-0000-4000-8000-000000000001",
        "/work/shop",
        ["add retry with backoff", "Added retry and exponential backoff.", "now retry only"],
    )
    claude_session(
        home,
        "bbbb2222-0000-4000-8000-000000000002",
        "/work/notes",
        ["rate limit the API with a long explanation " + "x" * 300, "Done: 429 + Retry-After."],
        day=21,
    )
    return home


def test_dash_word_is_an_exclusion_not_an_option(history: Path, run_cli: Run) -> None:
    out = run_cli("search", "retry", "-backoff", "--json")
    assert out.returncode == 0, out.stderr
    texts = [r["text"] for r in json.loads(out.stdout)["results"]]
    assert texts and all("backoff" not in t for t in texts)
    assert "now retry only" in texts
    # a value option glued to its value is still the option; a word is a word
    limited = json.loads(run_cli("search", "-n1", "retry", "--json").stdout)
    assert limited["stats"]["returned"] == 1
    excluded = json.loads(run_cli("search", "-nothing", "retry", "--json").stdout)
    assert excluded["query"] == "-nothing retry" and excluded["stats"]["total"] == 4
    assert run_cli("search", "retry", "--jsn").returncode == 2  # a mistyped option is still one


def test_nothing_found_is_status_1_like_grep(history: Path, run_cli: Run) -> None:
    out = run_cli("search", "quokka")
    assert out.returncode == 1 and out.stdout == "" and "No results" in out.stderr
    as_json = run_cli("search", "quokka", "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["results"] == []
    assert run_cli("conversations", "quokka").returncode == 1
    assert run_cli("conversations").returncode == 0


def test_pipe_output_is_one_whole_tab_separated_line_per_result(
    history: Path, run_cli: Run
) -> None:
    out = run_cli("search", "rate", "limit", env={"COLUMNS": "40"})
    lines = out.stdout.splitlines()
    assert len(lines) == 1 and "\x1b[" not in out.stdout
    fields = lines[0].split("\t")
    assert fields[0] == "bbbb2222-0000-4000-8000-000000000002@line:1"
    assert fields[1] == "claude-code" and len(fields[-1]) > 100  # the snippet, not cut at 40
    sessions = run_cli("conversations", env={"COLUMNS": "40"}).stdout.splitlines()
    assert [line.split("\t")[1] for line in sessions] == [
        "bbbb2222-0000-4000-8000-000000000002",
        "aaaa1111-0000-4000-8000-000000000001",
    ]
    assert sessions[0].split("\t")[2] == "2026-11-21T10:00:01.000Z"  # ISO in pipes
    titles = [
        c["title"] for c in json.loads(run_cli("conversations", "--json").stdout)["conversations"]
    ]
    assert [line.split("\t")[7] for line in sessions] == titles  # whole, as the API gives them
    assert len(titles[0]) > 40


def test_colour_follows_the_flag_and_no_color(history: Path, run_cli: Run) -> None:
    plain = run_cli("search", "backoff")
    assert "\x1b[" not in plain.stdout
    forced = run_cli("search", "backoff", "--color", "always", env={"NO_COLOR": "1"})
    assert "\x1b[" in forced.stdout
    assert forced.stdout.count("\t") == plain.stdout.count("\t")  # same rows, coloured
    assert "\x1b[" not in run_cli("--color", "never", "search", "backoff").stdout
    assert (
        "\x1b[" not in run_cli("search", "backoff", env={"FORCE_COLOR": "", "NO_COLOR": "1"}).stdout
    )
    bad = run_cli("search", "x", "--color", "sometimes")
    assert bad.returncode == 2


def test_context_and_index_lines_are_not_wrapped_in_a_pipe(home: Path, run_cli: Run) -> None:
    deep = home / ("a-rather-long-folder-name-" * 4).strip("-") / "project"
    deep.mkdir(parents=True)
    (deep / "AGENTS.md").write_text("# A title that is long enough to pass eighty columns easily\n")
    out = run_cli("context", str(deep), env={"COLUMNS": "60"})
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if "AGENTS.md" in line)
    assert str(deep / "AGENTS.md") in line and "eighty columns easily" in line
    index = run_cli("index", env={"COLUMNS": "40"})
    first = index.stdout.splitlines()[0]  # one unwrapped line, however long
    assert first.startswith("Indexed ") and first.endswith("/index") and len(first) > 40


def test_index_says_where_its_parse_diagnostics_are(home: Path, run_cli: Run) -> None:
    path = claude_session(home, "dddd0000-0000-4000-8000-00000000000d", "/work/d", ["hi", "yo"])
    with path.open("a") as handle:
        handle.write('{"type": "user", "broken\n')  # a line cut short by a crash
    out = run_cli("index")
    assert out.returncode == 0, out.stderr
    assert "1 parse diagnostic(s)" in out.stderr and "`agentdex audit`" in out.stderr
    audit = run_cli("audit", "--json")
    assert str(path) in audit.stdout  # where the hint points, the line is


def test_json_errors_are_json_on_stdout_with_the_same_status(history: Path, run_cli: Run) -> None:
    missing = run_cli("show", "nosuchsession", "--json")
    assert missing.returncode == 3
    error = json.loads(missing.stdout)["error"]
    assert error["code"] == "NOT_FOUND" and "nosuchsession" in error["message"]
    assert error["exit_code"] == 3 and missing.stderr.startswith("agentdex: ")
    usage = run_cli("search", "--json", "--bogus", "x")
    assert usage.returncode == 2 and json.loads(usage.stdout)["error"]["code"] == "USAGE"
    both = run_cli("search", "x", "--json", "--ndjson")
    assert (
        both.returncode == 2 and "two output formats" in json.loads(both.stdout)["error"]["message"]
    )
    assert run_cli("conversations", "--json", "--ndjson").returncode == 2
    global_json = run_cli("--json", "show", "nosuchsession")
    assert global_json.returncode == 3 and "error" in json.loads(global_json.stdout)
    human = run_cli("show", "nosuchsession")
    assert human.stdout == "" and human.stderr.startswith("agentdex: ")


def test_sessions_ndjson(history: Path, run_cli: Run) -> None:
    out = run_cli("conversations", "--ndjson")
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["session_id"][:4] for r in rows] == ["bbbb", "aaaa"]
    assert all(r["time_source"] == "recorded" for r in rows)


def test_show_a_locator_past_the_end_is_not_found(history: Path, run_cli: Run) -> None:
    ok = run_cli("show", "aaaa1111@line:2", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["focus"] == 1
    past = run_cli("show", "aaaa1111@line:9999")
    assert past.returncode == 3 and "no record at line:9999" in past.stderr
    assert "line:1 … line:3" in past.stderr and past.stdout == ""


def test_home_must_exist_and_a_missing_config_is_said(home: Path, run_cli: Run) -> None:
    out = run_cli("--home", str(home / "nope"), "sources")
    assert out.returncode == 2 and "--home" in out.stderr and "no such directory" in out.stderr
    env = run_cli("sources", env={"AGENTDEX_HOME": str(home / "nope")})
    assert env.returncode == 2 and "AGENTDEX_HOME" in env.stderr
    config = run_cli("sources", "--json", env={"AGENTDEX_CONFIG": str(home / "missing.toml")})
    assert config.returncode == 0
    assert "AGENTDEX_CONFIG=" in config.stderr and "no such file" in config.stderr
    assert json.loads(config.stdout)["sources"] == []


def test_global_options_work_after_the_subcommand(
    history: Path, tmp_path: Path, run_cli: Run
) -> None:
    other = tmp_path / "other-home"
    claude_session(other, "cccc3333-0000-4000-8000-000000000003", "/elsewhere", ["quokka here"])
    before = run_cli("--home", str(other), "search", "quokka", "--json")
    after = run_cli("search", "quokka", "--json", "--home", str(other))
    assert before.returncode == after.returncode == 0
    assert_same_results(json.loads(before.stdout)["results"], json.loads(after.stdout)["results"])
    assert run_cli("sources", f"--home={other}", "--no-pager", "--json").returncode == 0
    # a child command's arguments are never taken for agentdex's own
    sid = json.loads(run_cli("session", "new", "--workdir", str(tmp_path), "--json").stdout)
    run = run_cli(
        "session",
        "run",
        sid["created"]["id"],
        sys.executable,
        "-c",
        "import sys; print(sys.argv[1:])",
        "--home",
        "x",
        "--json",
    )
    assert run.returncode == 0 and "['--home', 'x', '--json']" in run.stdout


def test_each_home_has_its_own_index(history: Path, tmp_path: Path, run_cli: Run) -> None:
    other = tmp_path / "other-home"
    claude_session(other, "cccc3333-0000-4000-8000-000000000003", "/elsewhere", ["quokka here"])
    assert run_cli("search", "quokka", "--home", str(other), "--json").returncode == 0
    mine = run_cli("search", "quokka", "--json")  # the default home: never sees the other
    assert mine.returncode == 1 and json.loads(mine.stdout)["results"] == []
    theirs = run_cli("search", "backoff", "--home", str(other), "--json")
    assert theirs.returncode == 1
    paths = {
        json.loads(run_cli(*args, "index", "--json").stdout)["index"]["path"]
        for args in ((), ("--home", str(other)))
    }
    assert len(paths) == 2 and all("/homes/" in p for p in paths)


def test_version_flag(run_cli: Run) -> None:
    from agentdex import __version__

    for flag in ("-V", "--version"):
        out = run_cli(flag)
        assert out.returncode == 0 and __version__ in out.stdout


def test_a_port_in_use_is_a_conflict_not_a_usage_error(run_cli: Run) -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    try:
        port = holder.getsockname()[1]
        out = run_cli("serve", "--port", str(port), timeout=60)
    finally:
        holder.close()
    assert out.returncode == 4 and "in use" in out.stderr.lower()


def test_closed_pipe_exits_quietly_with_status_0(home: Path) -> None:
    texts = [f"message {n} " + "y" * 200 for n in range(1500)]  # ~300 KB of output
    claude_session(home, "dddd4444-0000-4000-8000-000000000004", "/work/long", texts)
    env = {**os.environ, "PYTHONPATH": str(SRC_DIR)}
    for args in (["show", "dddd4444"], ["show", "dddd4444", "--json"], ["search", "message"]):
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentdex", *args, "-n", "2000"]
            if args[0] == "search"
            else [sys.executable, "-m", "agentdex", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()  # what `| head -1` does
        status = proc.wait(60)
        stderr = proc.stderr.read().decode()
        assert status == 0, (args, stderr)
        assert stderr == "", (args, stderr)


def test_aider_sources_are_listed_before_any_index(home: Path, run_cli: Run) -> None:
    project = home / "src" / "notes"
    project.mkdir(parents=True)
    (project / ".aider.chat.history.md").write_text(
        "# aider chat started at 2026-11-20 10:00:00\n\n#### add healthz\n\nDone.\n"
    )
    claude_session(home, "eeee5555-0000-4000-8000-000000000005", str(project), ["hello"])
    out = run_cli("sources", "--json")
    stores = {row["store"]: row for row in json.loads(out.stdout)["sources"]}
    assert stores["aider.chat_history"]["path"] == str(project / ".aider.chat.history.md")
    assert stores["aider.chat_history"]["parse_status"] == "ok"
    assert not any(p.name == "index" for p in home.parent.rglob("index"))  # nothing indexed


def test_stores_without_times_are_marked(home: Path, run_cli: Run) -> None:
    (home / ".config" / "cursor").mkdir(parents=True)
    (home / ".config" / "cursor" / "prompt_history.json").write_text('["explain the flow"]')
    sources = json.loads(run_cli("sources", "--json").stdout)["sources"]
    assert [row["times"] for row in sources] == ["file-mtime"]
    sessions = json.loads(run_cli("conversations", "--json").stdout)["conversations"]
    assert [c["time_source"] for c in sessions] == ["file-mtime"]


def test_doctor_says_where_it_looked(home: Path, run_cli: Run, tmp_path: Path) -> None:
    claude_session(home, "ffff6666-0000-4000-8000-000000000006", "/w", ["hi"])
    config = tmp_path / "config.toml"
    config.write_text('[agents]\ndisabled = ["codex"]\n')
    out = run_cli(
        "doctor", "--json", env={"AGENTDEX_CONFIG": str(config), "GROK_HOME": str(home / "nope")}
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    stores = {s["store"]: s for s in data["stores"]}
    assert stores["claude-code.projects"]["status"] == "found"
    assert stores["claude-code.projects"]["files"] == 1
    assert stores["claude-code.credentials"]["status"] == "private"
    assert stores["codex.sessions"]["status"] == "skipped"
    assert "disabled" in stores["codex.sessions"]["reason"]
    gemini = stores["gemini-cli.chats"]
    assert gemini["status"] == "not-found"
    assert {"path": str(home / ".gemini"), "exists": False} in gemini["looked_in"]
    assert any(v["name"] == "GROK_HOME" for v in data["environment"])
    assert any("GROK_HOME" in w for w in data["warnings"])
    assert data["config"]["exists"] and data["config"]["path"] == str(config)
    human = run_cli("doctor", env={"AGENTDEX_CONFIG": str(config)})
    assert "looked in ~/.gemini (missing)" in human.stdout


def test_doctor_explains_every_documented_variable(run_cli: Run) -> None:
    """Every ``AGENTDEX_*`` variable the user docs name is one ``doctor`` lists with its
    purpose when it is set (a user who set one sees it there), and one set is listed."""
    import re

    from agentdex.api.doctor import AGENTDEX_ENV

    docs = Path(__file__).resolve().parents[1] / "docs"
    named = {
        var
        for page in docs.glob("*.md")
        if page.name != "performance.md"  # the benches' own knobs
        for var in re.findall(r"AGENTDEX_[A-Z_]*[A-Z]", page.read_text())
    }
    not_settings = {"AGENTDEX_COMPLETE", "AGENTDEX_CHROMIUM"}  # shell completion, the tests
    assert named - not_settings - set(AGENTDEX_ENV) == set()
    out = run_cli("doctor", "--json", env={"AGENTDEX_INDEXING_THREADS": "2"})
    listed = {v["name"]: v for v in json.loads(out.stdout)["environment"]}
    assert listed["AGENTDEX_INDEXING_THREADS"]["value"] == "2"
    assert (
        listed["AGENTDEX_INDEXING_THREADS"]["purpose"] == AGENTDEX_ENV["AGENTDEX_INDEXING_THREADS"]
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_doctor_reports_unreadable_files(home: Path, run_cli: Run) -> None:
    path = claude_session(home, "abab7777-0000-4000-8000-000000000007", "/w", ["hi"])
    path.chmod(0)
    try:
        data = json.loads(run_cli("doctor", "--json").stdout)
    finally:
        path.chmod(0o600)
    stores = {s["store"]: s for s in data["stores"]}
    assert stores["claude-code.projects"]["unreadable"] == [str(path)]


def test_shell_completion_lists_commands_and_options(run_cli: Run) -> None:
    env = {"_AGENTDEX_COMPLETE": "bash_complete", "COMP_WORDS": "agentdex se", "COMP_CWORD": "1"}
    out = run_cli(env=env)
    assert {"plain,search", "plain,sessions", "plain,serve"} <= set(out.stdout.split())
    script = run_cli(env={"_AGENTDEX_COMPLETE": "bash_source"})
    assert "_agentdex_completion" in script.stdout


def test_context_add_names_the_allowed_roots(home: Path, tmp_path: Path, run_cli: Run) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out = run_cli("context", "add", "/etc", "--workspace", str(workspace))
    assert out.returncode == 2
    assert "not under an allowed root; allowed:" in out.stderr
    assert str(workspace) in out.stderr and "[context] roots" in out.stderr
