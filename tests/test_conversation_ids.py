"""Conversation ids a person can type (issue 26 item 1; ambiguity, item 7).

Unit: the id of a conversation, the shortest unique prefixes, what a token
names. On the real-shaped home (``examples/corpus_home.py``: real Aider chats
whose session ids are ``<folder>@<time>``): every listed id opens its
conversation in ``show``, ``export``, ``resume``, ``forget``, HTTP and MCP; the
old long forms still work; a prefix naming several is a conflict everywhere
(exit 4, HTTP 409) that lists the candidates.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agentdex.api.ids import conversation_id, matches, short_ids
from corpus_support import cli, on_terminal, render_corpus_home

AIDER = "/home/me/proj@2026-04-22 22:40:47"


def test_a_typeable_session_id_is_its_own_id() -> None:
    uuid = "3b5e9c2a-7d41-4f0e-9a6b-2c8d1e4f7a90"
    assert conversation_id("claude-code", uuid) == uuid
    assert conversation_id("cline", "1767348000000") == "1767348000000"
    assert conversation_id("cursor-cli", "cursor-cli.prompt_history") == "cursor-cli.prompt_history"


def test_an_untypeable_session_id_gets_a_stable_hashed_id() -> None:
    made = conversation_id("aider", AIDER)
    assert made == conversation_id("aider", AIDER)  # stable: depends on nothing else
    assert made.startswith("aider-") and len(made) == len("aider-") + 8
    assert made != conversation_id("aider", AIDER.replace("47", "48"))
    assert conversation_id("aider", "aider-input:/home/me/proj").startswith("aider-")
    assert conversation_id("x", "a" * 65).startswith("x-")  # too long to type
    # the home reads as ~: the id survives the home moving (another machine, a backup)
    moved = conversation_id("aider", "/b/me/proj@2026-04-22 22:40:47", "/b/me")
    assert conversation_id("aider", "/a/me/proj@2026-04-22 22:40:47", "/a/me") == moved
    assert conversation_id("aider", "/a/me/proj@2026-04-22 22:40:47", "/c") != moved


def test_short_ids_are_the_shortest_unique_prefixes() -> None:
    keys = [
        ("claude-code", "3b5e9c2a-7d41-4f0e-9a6b-2c8d1e4f7a90"),
        ("claude-code", "3b5e9c2a-7d41-4f0e-9a6b-000000000000"),
        ("codex", "019a9f3e-5c21-7b40-a8d2-4e6f1b0c9d37"),
        ("codex", "33333333-3333-4333-8333-333333333333"),
        ("antigravity-cli", "33333333-3333-4333-8333-333333333333"),
        ("aider", AIDER),
    ]
    shorts = short_ids(keys)
    assert shorts[keys[2]] == "019a9f3e"  # 8 characters at least
    assert shorts[keys[0]] == "3b5e9c2a-7d41-4f0e-9a6b-2"  # one more than they share
    assert shorts[keys[3]] == "codex:33333333"  # an id two agents share is qualified
    assert shorts[keys[4]] == "antigravity-cli:33333333"
    assert shorts[keys[5]] == conversation_id(*keys[5])[: len("aider-") + 4]
    for key, short in shorts.items():
        assert matches(short, keys) == [key], short


def test_what_a_token_names() -> None:
    keys = [("aider", AIDER), ("aider", AIDER + "0"), ("codex", "0190abcd-0000")]
    hashed = conversation_id("aider", AIDER)
    assert matches(AIDER, keys) == [("aider", AIDER)]  # the exact session id wins
    assert matches(hashed, keys) == [("aider", AIDER)]
    assert matches("/home/me/proj@", keys) == sorted(keys[:2])  # a prefix of two
    assert matches("0190", keys) == [keys[2]]
    assert matches("codex:0190", keys) == [keys[2]]
    assert matches("aider:0190", keys) == []
    assert matches("0190", keys, agent="aider") == []


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    home, env = render_corpus_home(tmp_path_factory.mktemp("ids") / "home", messages=40)
    assert cli(env, "index").returncode == 0
    yield home, env


def _listed(env: dict[str, str]) -> list[dict[str, object]]:
    out = cli(env, "conversations", "--json", "--no-refresh", "-n", "500")
    conversations: list[dict[str, object]] = json.loads(out.stdout)["conversations"]
    return conversations


def test_every_listed_id_is_unique_and_opens_its_conversation(
    real: tuple[Path, dict[str, str]],
) -> None:
    _, env = real
    listed = _listed(env)
    # an id is unique within its agent (two agents may share a UUID); short ids are unique
    assert len({(c["agent"], c["id"]) for c in listed}) == len(listed)
    assert len({c["short_id"] for c in listed}) == len(listed)
    aider = [c for c in listed if c["agent"] == "aider"]
    assert len(aider) > 10 and all(str(c["id"]).startswith("aider-") for c in aider)
    for c in aider[:6] + [c for c in listed if c["agent"] != "aider"][:4]:
        for form in (c["short_id"], c["id"], c["session_id"]):  # the old long form too
            shown = cli(env, "show", str(form), "--json")
            assert shown.returncode == 0, (form, shown.stderr)
            data = json.loads(shown.stdout)
            assert (data["agent"], data["session_id"], data["id"]) == (
                c["agent"],
                c["session_id"],
                c["id"],
            )
    code, screen = on_terminal(env, "conversations", "--no-refresh", "-n", "500", columns=120)
    assert code == 0
    rows = [r.split() for r in screen.splitlines() if r.startswith("aider ")]
    assert sorted(r[1] for r in rows) == sorted(str(c["short_id"]) for c in aider)


def test_a_short_id_works_in_export_resume_and_search_refs(
    real: tuple[Path, dict[str, str]],
) -> None:
    _, env = real
    chat = next(c for c in _listed(env) if c["agent"] == "aider" and c["replies"])
    exported = json.loads(cli(env, "export", str(chat["short_id"]), "--format", "json").stdout)
    assert exported["session_id"] == chat["session_id"]
    resumed = cli(env, "resume", str(chat["short_id"]), "--json")
    assert json.loads(resumed.stdout)["session_id"] == chat["session_id"]
    found = json.loads(cli(env, "search", "Tokens", "agent:aider", "--json", "-n", "3").stdout)
    hit = found["results"][0]
    assert hit["short_ref"] == f"{hit['id']}@{hit['locator']}" and " " not in hit["short_ref"]
    opened = json.loads(cli(env, "show", hit["short_ref"], "--json").stdout)
    assert opened["records"][opened["focus"]]["locator"] == hit["locator"]
    piped = cli(env, "search", "Tokens", "agent:aider", "-n", "1").stdout
    assert piped.split("\t")[0] == hit["short_ref"]  # what `cut -f1 | xargs show` gets


def test_an_ambiguous_prefix_is_a_conflict_that_lists_the_candidates(
    real: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, env = real
    export = cli(env, "export", "aider-", "--format", "json")
    assert export.returncode == 4 and "names" in export.stderr and export.stdout == ""
    for command in ("show", "resume", "forget"):
        out = cli(env, command, "aider-", "--json")
        assert out.returncode == 4, (command, out.stderr)
        error = json.loads(out.stdout)["error"]
        assert error["code"] == "CONFLICT" and "names" in error["message"]
        candidates = error["detail"]["candidates"]
        assert len(candidates) > 1 and all(c["agent"] == "aider" for c in candidates)
        assert {"session_id", "id", "short_id", "title"} <= set(candidates[0])
    two = cli(env, "show", "33333333")  # the same id under two agents
    assert two.returncode == 4 and "codex:33333333" in two.stderr
    assert cli(env, "show", "codex:33333333", "--json").returncode == 0

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    from agentdex.http.app import create_app

    client = TestClient(create_app(token="t"), headers={"Authorization": "Bearer t"})
    answer = client.get("/api/v0/show", params={"ref": "aider-"})
    assert answer.status_code == 409
    assert answer.json()["error"] == "CONFLICT" and len(answer.json()["detail"]["candidates"]) > 1
    chat = next(c for c in _listed(env) if c["agent"] == "aider")
    opened = client.get("/api/v0/show", params={"ref": chat["short_id"]})
    assert opened.status_code == 200 and opened.json()["id"] == chat["id"]
    assert all(r["short_ref"].startswith(f"{chat['id']}@") for r in opened.json()["records"])

    from agentdex.mcp.tools._base import Settings
    from agentdex.mcp.tools.history import SHOW_SESSION

    shown = SHOW_SESSION.handler({"ref": chat["short_id"]}, Settings(home=env["HOME"]))
    assert shown["session_id"] == chat["session_id"] and shown["id"] == chat["id"]


def test_forget_takes_a_short_id_and_refuses_without_yes_off_a_terminal(
    real: tuple[Path, dict[str, str]],
) -> None:
    _, env = real
    chat = next(c for c in _listed(env) if c["agent"] == "aider")
    refused = cli(env, "forget", str(chat["short_id"]))
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert cli(env, "show", str(chat["short_id"])).returncode == 0
    done = json.loads(cli(env, "forget", str(chat["short_id"]), "--yes", "--json").stdout)
    assert [c["session_id"] for c in done["forgotten"]] == [chat["session_id"]]
    assert cli(env, "show", str(chat["session_id"])).returncode == 3


def test_the_old_long_forms_still_work_everywhere(
    real: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 1: a real Aider session id (a path, a space, an '@') as it was typed before short
    ids: export, resume, show ID@LOCATOR, HTTP show and MCP take it; a prefix naming several
    is a conflict in MCP too (item 7)."""
    _, env = real
    chats = [
        c for c in _listed(env) if c["agent"] == "aider" and c["replies"] and " " in c["session_id"]
    ]
    chat = chats[-1]  # not the one test_forget_... forgets
    long = str(chat["session_id"])
    exported = cli(env, "export", long, "--format", "json")
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["session_id"] == long
    resumed = cli(env, "resume", long, "--json")
    by_short = cli(env, "resume", str(chat["short_id"]), "--json")  # (Aider: exit 8, one log)
    assert json.loads(resumed.stdout) == json.loads(by_short.stdout)
    assert resumed.returncode == by_short.returncode
    assert json.loads(resumed.stdout)["session_id"] == long
    records = json.loads(cli(env, "show", long, "--json").stdout)["records"]
    locator = records[len(records) // 2]["locator"]
    opened = json.loads(cli(env, "show", f"{long}@{locator}", "--json").stdout)
    assert opened["id"] == chat["id"] and opened["records"][opened["focus"]]["locator"] == locator

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    from agentdex.http.app import create_app

    client = TestClient(create_app(token="t"), headers={"Authorization": "Bearer t"})
    answer = client.get("/api/v0/show", params={"ref": f"{long}@{locator}"})
    assert answer.status_code == 200 and answer.json()["id"] == chat["id"]
    assert answer.json()["records"][answer.json()["focus"]]["locator"] == locator

    from agentdex.mcp.server import AgentdexMCP

    server = AgentdexMCP(home=env["HOME"])
    shown = server.call("show_session", {"ref": long})
    assert shown.is_error is not True and shown.structured_content is not None
    assert shown.structured_content["session_id"] == long
    ambiguous = server.call("show_session", {"ref": "aider-"})
    assert ambiguous.is_error is True
    message = ambiguous.content[0].text  # type: ignore[union-attr]
    assert message.startswith("CONFLICT: ") and "candidates" in message, message
