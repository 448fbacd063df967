"""Cline task folders: the peer fixture, wrappers, tmp files, every location."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _agent_helpers import count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser

PID = "cline.api_history_json.v1"


def test_peer_fixture(corpus: Path) -> None:
    data = corpus / "agrep-fixtures/cline/home/.cline/data"
    path = data / "tasks/1767348000000/api_conversation_history.json"
    records, cursor, diags = parse(PID, path, root=data)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("user", "prompt", "build a cli flag parser"),
        ("assistant", "message", "I'll add the parser."),
        ("assistant", "tool_call", 'write_to_file {"path":"cli.py","content":"import argparse"}'),
        ("tool", "tool_result", "file written"),
        ("user", "prompt", "also handle --help"),
        ("assistant", "message", "Added --help handling."),
    ]
    assert {r.cwd for r in records} == {"/work/delta"}
    assert {r.session_id for r in records} == {"1767348000000"}
    assert records[1].model == "claude-fable-5"
    assert diags.count == 0
    assert cursor.units == count_raw(PID, path) == 5


def test_old_text_tool_results_and_env_only_messages(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "1795000000000"
    task.mkdir(parents=True)
    history = [
        {
            "role": "user",
            "content": "<task>fix the build</task>\n<environment_details>\n"
            "# Current Working Directory (/work/from-env) Files\n"
            "</environment_details>",
        },
        {"role": "assistant", "content": "Reading the makefile."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[read_file for 'Makefile'] Result:\nall: build"},
                {"type": "text", "text": "<environment_details>noise</environment_details>"},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<environment_details>only</environment_details>"}
            ],
        },
        "not a message",
    ]
    path = task / "api_conversation_history.json"
    path.write_text(json.dumps(history))
    records, cursor, _ = parse(PID, path, root=tmp_path)
    assert [(r.kind, r.text) for r in records] == [
        ("prompt", "fix the build"),
        ("message", "Reading the makefile."),
        ("tool_result", "[read_file for 'Makefile'] Result:\nall: build"),
    ]
    assert {r.cwd for r in records} == {"/work/from-env"}
    assert records[0].timestamp == 1795000000.0
    assert cursor.units == count_raw(PID, path) == 3


def test_not_an_array_is_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "tasks" / "1" / "api_conversation_history.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"role": "user"}')
    records, _, diags = parse(PID, path, root=tmp_path)
    assert records == [] and diags.count == 1


def _task(base: Path, task_id: str, text: str) -> None:
    folder = base / "tasks" / task_id
    folder.mkdir(parents=True)
    (folder / "api_conversation_history.json").write_text(
        json.dumps([{"role": "user", "content": f"<task>{text}</task>"}])
    )
    (folder / "api_conversation_history.json.tmp.123").write_text("partial")


def test_every_location_and_tmp_files_ignored(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ext = "saoudrizwan.claude-dev"
    _task(home / ".config" / "Code" / "User" / "globalStorage" / ext, "1", "stable")
    _task(home / ".config" / "Code - Insiders" / "User" / "globalStorage" / ext, "2", "insiders")
    _task(home / ".config" / "Cursor" / "User" / "globalStorage" / ext, "3", "in cursor")
    _task(home / ".cline" / "data", "4", "cli")
    users = tmp_path / "winusers"
    _task(
        users / "bob" / "AppData" / "Roaming" / "Code" / "User" / "globalStorage" / ext,
        "5",
        "windows side",
    )
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    found = discover(home, agents=["cline"])
    assert all(".tmp." not in s.path.name for s in found.sources)
    texts = sorted(r.text for s in found.sources for r in run(s))
    assert texts == ["cli", "in cursor", "insiders", "stable", "windows side"]
    hosts = {s.host for s in found.sources}
    assert hosts == {None, "windows:bob"}


def test_corpus_home_layout_is_discovered(home: Path, corpus: Path) -> None:
    shutil.copytree(corpus / "agrep-fixtures/cline/home/.cline", home / ".cline")
    found = discover(home, agents=["cline"])
    assert [s.store for s in found.sources] == ["cline.tasks"]
    assert next(r.cwd for r in run(found.sources[0])) == "/work/delta"


FIXTURE = Path(__file__).parent / "fixtures" / "cline"
TASK = FIXTURE / "tasks" / "1795000000000" / "api_conversation_history.json"


def test_real_shape_prompts_are_what_the_person_typed() -> None:
    """Harness texts, feedback wrappers and odd tool headers, in a real task's shape."""
    records, cursor, diags = parse(PID, TASK, root=FIXTURE)
    assert [r.text for r in records if r.kind == "prompt"] == [
        "add a retry to the checkout client",
        "exponential, max 3 tries",
        "also log each retry",
        "use the logger from src/log.ts",
        "not in the client, in the wrapper",
    ]
    harness = [r.text.split("\n")[0] for r in records if r.role == "system"]
    assert harness == [
        "# task_progress RECOMMENDED",
        "[ERROR] You did not use a tool in your previous response! Please retry with a tool use.",
        "# TODO LIST UPDATE REQUIRED - You MUST include the task_progress parameter in your "
        "NEXT tool call.",
        "[TASK RESUMPTION] This task was interrupted 10 minutes ago. It may or may not be "
        "complete, so please reassess the task context. Be aware that the project state may "
        "have changed since then. The current working directory is now '/work/shop'.",
        "New instructions for task continuation:",
        "[Response interrupted by user]",
    ]
    results = [r.text for r in records if r.kind == "tool_result"]
    assert results[0] == "[read_file for 'src/a]b.ts'] Result:\nexport const client = {}"
    assert results[1].startswith("Tool [read_file] was not executed")
    assert results[2].startswith("[execute_command for 'npm test -- --grep 'retry]'\necho done']")
    assert "<feedback>this is file text</feedback>" in results[-1]  # a file read, not typed
    assert not any("environment_details" in r.text for r in records)
    assert diags.count == 0 and cursor.units == count_raw(PID, TASK) == 17


def test_one_reply_per_message_without_the_interruption_note() -> None:
    records, _, _ = parse(PID, TASK, root=FIXTURE)
    replies = [r.text for r in records if r.role == "assistant" and r.kind == "message"]
    assert replies == [
        "I'll read the checkout client.",
        "Running the tests.",
        "Which backoff do you want?",
        "Added exponential backoff.",
        "Adding a log line\n\nto each retry.",
        "Moved the log line to the wrapper.",
    ]
    assert [r.text for r in records if r.kind == "reasoning"] == [
        "Read the client first.",
        "Use execute_command.",
    ]


def test_every_record_has_its_own_locator_and_ui_time() -> None:
    records, _, _ = parse(PID, TASK, root=FIXTURE)
    locators = [r.locator for r in records]
    assert len(set(locators)) == len(locators)
    by_loc = {r.locator: r for r in records}
    assert by_loc["json:/10/content/0#1"].text == "also log each retry"
    assert by_loc["json:/1/content/2"].kind == "tool_call"
    # The UI log dates each message; times never go backwards in a task.
    stamps = [r.timestamp for r in records]
    assert stamps == sorted(stamps) and len(set(stamps)) == 17
    assert stamps[0] == 1795000000.1
    assert {r.cwd for r in records} == {"/work/shop"}


def test_role_counter_agrees_with_and_without_the_ui_log(tmp_path: Path) -> None:
    spec = get_parser(PID)
    assert spec.count_roles is not None
    assert spec.count_roles(TASK) == {"1795000000000": {"prompts": 5, "replies": 6}}
    # Without the UI log the raw history is counted the same.
    task = tmp_path / "tasks" / "1795000000000"
    task.mkdir(parents=True)
    shutil.copy(TASK, task / TASK.name)
    assert spec.count_roles(task / TASK.name) == {"1795000000000": {"prompts": 5, "replies": 6}}


def test_feedback_with_an_at_mention_is_still_a_prompt(tmp_path: Path) -> None:
    """Cline's ``parseMentions`` appends what an ``@`` mention attached after the whole text,
    so a completion's feedback that mentions a file no longer ends its tool result; the UI
    log counts it (``user_feedback``) and so must the parser."""
    task = tmp_path / "tasks" / "1795000000000"
    task.mkdir(parents=True)
    feedback = (
        "[attempt_completion] Result:\n\nThe user has provided feedback on the results. "
        "Consider their input to continue the task, and then attempt completion again.\n"
        "<feedback>\nfollow the style of '/src/a.ts' (see below)\n</feedback>\n\n"
        '<file_content path="src/a.ts">\nexport const a = "<feedback>no</feedback>"\n'
        "</file_content>\n\n<terminal_output>\n$ npm test\n1 failing\n</terminal_output>"
    )
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nadd b.ts\n</task>"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Done."},
                {"type": "tool_use", "id": "t1", "name": "attempt_completion", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": feedback},
                {"type": "text", "text": "<environment_details>\nx\n</environment_details>"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Restyled b.ts."}]},
    ]
    (task / "api_conversation_history.json").write_text(json.dumps(history))
    path = task / "api_conversation_history.json"
    records, cursor, _ = parse(PID, path, root=tmp_path)
    assert [r.text for r in records if r.kind == "prompt"] == [
        "add b.ts",
        "follow the style of '/src/a.ts' (see below)",
    ]
    attached = [r.text for r in records if r.role == "tool" and "file_content" in r.text]
    assert len(attached) == 1 and "<terminal_output>" in attached[0]
    spec = get_parser(PID)
    assert spec.count_roles is not None
    expected = {"1795000000000": {"prompts": 2, "replies": 2}}
    assert spec.count_roles(path) == expected  # the raw history, no UI log
    ui = [
        {"ts": 1795000000000, "type": "say", "say": "task", "text": "add b.ts"},
        {"ts": 1795000001000, "type": "say", "say": "text", "text": "Done."},
        {"ts": 1795000002000, "type": "say", "say": "user_feedback", "text": "follow the style"},
        {"ts": 1795000003000, "type": "say", "say": "text", "text": "Restyled b.ts."},
    ]
    (task / "ui_messages.json").write_text(json.dumps(ui))
    assert spec.count_roles(path) == expected
    assert cursor.units == count_raw(PID, path) == 4
