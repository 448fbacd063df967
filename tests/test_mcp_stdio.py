"""``agentdex mcp`` as a real subprocess, driven by the MCP SDK's stdio client.

Tools whose library API is not in this build must answer with a tool error
saying so; their tests skip with that message (the lead re-runs them after
the final merge).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from agentdex.catalogue import CATALOGUE, Coverage, agents
from agentdex.mcp.resources import DOCS_DIR
from conftest import git
from mcp_support import (
    TOOL_NAMES,
    api_present,
    json_of,
    require_api,
    require_parser,
    stdio_session,
    text_of,
    unavailable,
    write_claude_session,
    write_codex_session,
)

SECRET = "sk-very-secret"


async def _check_tools_and_resources(session: ClientSession) -> None:
    assert session.server_info is not None
    assert session.server_info.name == "agentdex"
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == TOOL_NAMES
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
        assert tool.annotations is not None and tool.annotations.read_only_hint
    # Enums come from the catalogue, not from a retyped list.
    sources = tools["list_sources"].input_schema["properties"]
    assert sources["agent"]["enum"] == list(agents())
    listed = [r.store for r in CATALOGUE if r.coverage is not Coverage.PRIVATE]
    assert sources["store"]["enum"] == listed
    assert tools["show_session"].input_schema["required"] == ["ref"]
    assert tools["search"].input_schema["required"] == ["query"]

    uris = {str(r.uri) for r in (await session.list_resources()).resources}
    assert uris == {"agentdex://query-language", "agentdex://catalogue"}
    catalogue = json.loads(
        (await session.read_resource("agentdex://catalogue")).contents[0].text  # type: ignore[union-attr]
    )
    listed_first = [row["store"] for row in catalogue["stores"]]
    assert listed_first == [r.store for r in CATALOGUE][: len(listed_first)]
    # Past the response budget the catalogue is cut and names every agent's own slice;
    # together the slices are the whole catalogue, in order.
    slices = []
    for agent in agents():
        text = (await session.read_resource(f"agentdex://catalogue/{agent}")).contents[0].text  # type: ignore[union-attr]
        slices += [row["store"] for row in json.loads(text)["stores"]]
    assert slices == [r.store for r in CATALOGUE]
    templates = (await session.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["agentdex://catalogue/{agent}"]
    codex = json.loads(
        (await session.read_resource("agentdex://catalogue/codex")).contents[0].text  # type: ignore[union-attr]
    )
    assert [row["store"] for row in codex["stores"]] == [
        r.store for r in CATALOGUE if r.agent == "codex"
    ]
    private = [row for row in catalogue["stores"] if row["coverage"] == "private"]
    assert private and all("never lists, opens" in row["note"] for row in private)
    language = (await session.read_resource("agentdex://query-language")).contents[0]
    doc = DOCS_DIR / "query-language.md"
    if doc.is_file():
        assert language.text == doc.read_text(encoding="utf-8")  # type: ignore[union-attr]
    else:
        assert language.text.startswith("# agentdex query language")  # type: ignore[union-attr]
    for missing in ("agentdex://nothing-here", "agentdex://catalogue/nobody"):
        with pytest.raises(MCPError, match="no resource"):
            await session.read_resource(missing)
    # The connection survives a failed request.
    assert len((await session.list_tools()).tools) == len(TOOL_NAMES)


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("list_sources", {"limit": "ten"}, "limit: 'ten' is not of type 'integer'"),
    ("list_sources", {"agent": "nobody"}, "agent: 'nobody' is not one of"),
    ("list_sources", {"limit": 0}, "limit: 0 is less than the minimum of 1"),
    ("list_sources", {"bogus": 1}, "Additional properties are not allowed ('bogus'"),
    ("show_session", {}, "'ref' is a required property"),
    ("show_session", {"ref": "no-such-session"}, "NOT_FOUND: no conversation with id"),
    ("search", {"query": 42}, "query: 42 is not of type 'string'"),
    ("no_such_tool", {}, "unknown tool 'no_such_tool'"),
]


async def _check_bad_arguments(session: ClientSession) -> None:
    for name, arguments, expected in BAD_CALLS:
        result = await session.call_tool(name, arguments)
        assert result.is_error, (name, arguments)
        assert expected in text_of(result), text_of(result)
    if api_present("search", "search"):
        # A malformed query is the search API's usage error, as `agentdex search` reports it.
        result = await session.call_tool("search", {"query": "colour:blue retry"})
        assert result.is_error and text_of(result).startswith("USAGE: "), text_of(result)
        assert "colour" in text_of(result)
    # Still serving after every failure.
    assert not (await session.call_tool("list_sources", {})).is_error


async def _check_list_sources(session: ClientSession, claude: Path, codex: Path) -> None:
    data = json_of(await session.call_tool("list_sources", {}))
    by_path = {row["path"]: row for row in data["sources"]}
    assert {str(claude), str(codex)} <= set(by_path)
    assert by_path[str(claude)]["agent"] == "claude-code"
    assert by_path[str(codex)]["store"] == "codex.sessions"
    for row in data["sources"]:
        assert row["coverage"] in {"default", "opt-in", "listed"}
        assert row["parse_status"] in {"ok", "empty", "error", "not-parsed"}
    only = json_of(await session.call_tool("list_sources", {"agent": "codex"}))
    assert {row["agent"] for row in only["sources"]} == {"codex"}
    page = json_of(await session.call_tool("list_sources", {"limit": 1, "offset": 1}))
    assert page["total"] == data["total"] and len(page["sources"]) == 1
    assert page["sources"][0] == data["sources"][1]


async def _check_show_session(session: ClientSession) -> None:
    first = json_of(await session.call_tool("show_session", {"ref": "d00d0000-show", "limit": 10}))
    assert first["session_id"] == "d00d0000-show"
    assert first["total_records"] == 30
    assert [r["text"] for r in first["records"]] == [f"step {i}" for i in range(10)]
    assert first["next_offset"] == 10
    assert first["common"]["session_id"] == "d00d0000-show"
    rest = json_of(await session.call_tool("show_session", {"ref": "d00d0000-show", "offset": 25}))
    assert [r["text"] for r in rest["records"]] == [f"step {i}" for i in range(25, 30)]
    assert rest["next_offset"] is None
    # Window mode: a ref with a locator centres the page on it.
    locator = first["records"][7].get("locator") or first["common"].get("locator")
    ref = f"d00d0000-show@{locator}"
    window = json_of(await session.call_tool("show_session", {"ref": ref, "around": 2}))
    assert window["focus"] == 7
    assert window["offset"] == 5
    assert [r["text"] for r in window["records"]] == [f"step {i}" for i in range(5, 10)]


def test_list_sources_and_show_session_on_real_transcripts(home: Path) -> None:
    require_parser("claude_code")
    claude = write_claude_session(home, "c1a2b3c4-0001", home / "shop", [("user", "hi")])
    codex = write_codex_session(home, "0199aaaa-bbbb-0001", home / "notes", [("user", "yo")])
    turns = [("user" if i % 2 == 0 else "assistant", f"step {i}") for i in range(30)]
    write_claude_session(home, "d00d0000-show", home / "shop", turns)

    async def scenario() -> None:
        async with stdio_session("--home", str(home)) as session:
            await _check_list_sources(session, claude, codex)
            await _check_show_session(session)

    asyncio.run(scenario())


def test_list_worktrees_matches_the_cli(git_repo: Path, run_cli: Any) -> None:
    linked = git_repo.parent / "repo-wt-feature"
    git(git_repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    require_api("worktrees", "list_worktrees")

    async def scenario() -> dict[str, Any]:
        async with stdio_session(cwd=git_repo) as session:
            result = await session.call_tool("list_worktrees", {"repo": str(linked)})
            here = json_of(await session.call_tool("list_worktrees", {}))
            assert here["worktrees"] == json_of(result)["worktrees"]
            return json_of(result)

    data = asyncio.run(scenario())
    paths = [Path(w["path"]).resolve() for w in data["worktrees"]]
    assert paths[:1] == [git_repo.resolve()] and linked.resolve() in paths
    cli = run_cli("worktree", "list", "--json", cwd=git_repo)
    assert cli.returncode == 0, cli.stderr
    cli_data = json.loads(cli.stdout)
    cli_rows = cli_data["worktrees"] if isinstance(cli_data, dict) else cli_data
    assert cli_rows == data["worktrees"]


def _workspace_with_mcp_config(root: Path) -> Path:
    workspace = root / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Run the tests with make check.\n")
    (workspace / "CLAUDE.md").write_text("Prefer small commits.\n")
    (workspace / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "tracker": {
                        "command": "tracker-mcp",
                        "args": ["--stdio"],
                        "env": {"TOKEN": SECRET},
                    },
                    "remote": {
                        "type": "http",
                        "url": "https://tracker.invalid/mcp",
                        "headers": {"Authorization": f"Bearer {SECRET}"},
                    },
                }
            }
        )
    )
    return workspace


async def _check_workspace_context(session: ClientSession, workspace: Path) -> None:
    result = await session.call_tool("workspace_context", {"directory": str(workspace)})
    data = json_of(result)
    text = json.dumps(data)
    assert "AGENTS.md" in text and "tracker" in text
    assert SECRET not in text
    with_payloads = await session.call_tool(
        "workspace_context", {"directory": str(workspace), "payloads": True}
    )
    assert "Run the tests with make check." in text_of(with_payloads)
    assert SECRET not in text_of(with_payloads)


async def _check_no_config_values(session: ClientSession, workspace: Path) -> int:
    """Every tool, called on a workspace whose .mcp.json holds a secret, never returns it."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": "tracker", "cwd": str(workspace)}),
        ("search", {"query": "TOKEN", "cwd": str(workspace), "only_here": True}),
        ("show_session", {"ref": "5ec7e700-0001"}),
        ("list_sessions", {}),
        ("list_sources", {}),
        ("workspace_context", {"directory": str(workspace)}),
        ("workspace_context", {"directory": str(workspace), "payloads": True}),
        ("list_worktrees", {"repo": str(workspace)}),
        ("validate_query", {"query": "tracker agent:claude-code"}),
    ]

    answered = 0
    for name, arguments in calls:
        result = await session.call_tool(name, arguments)
        assert SECRET not in text_of(result), name
        answered += not result.is_error
    for resource in ("agentdex://catalogue", "agentdex://query-language"):
        contents = (await session.read_resource(resource)).contents[0]
        assert SECRET not in contents.text  # type: ignore[union-attr]
    return answered


def test_workspace_context_and_no_mcp_config_values_anywhere(home: Path, tmp_path: Path) -> None:
    workspace = _workspace_with_mcp_config(tmp_path)
    write_claude_session(home, "5ec7e700-0001", workspace, [("user", "set up the tracker")])

    async def scenario() -> int:
        async with stdio_session("--home", str(home), cwd=workspace) as session:
            if api_present("context", "snapshot"):
                await _check_workspace_context(session, workspace)
            return await _check_no_config_values(session, workspace)

    answered = asyncio.run(scenario())
    assert answered >= 6  # the secret check ran against real answers, not only errors


def test_validate_query_explains_or_names_the_problem(home: Path) -> None:
    require_api("search", "validate_query")

    async def scenario() -> None:
        async with stdio_session() as session:
            good = await session.call_tool(
                "validate_query", {"query": 'retry "back off" agent:codex'}
            )
            assert json_of(good)["valid"] is True
            bad = await session.call_tool("validate_query", {"query": "colour:blue"})
            data = json_of(bad)
            assert data["valid"] is False
            assert "colour" in data["error"]

    asyncio.run(scenario())


def _three_conversations(home: Path) -> tuple[Path, Path]:
    """Two Claude Code chats and one Codex chat about retries, in two projects."""
    shop, notes = home / "src" / "shop", home / "src" / "notes"
    for folder in (shop, notes):
        folder.mkdir(parents=True)
    write_claude_session(
        home,
        "aaaa1111-0001",
        shop,
        [
            ("user", "the checkout test is flaky, add retry with backoff"),
            ("assistant", "Added retry."),
        ],
    )
    write_claude_session(
        home,
        "aaaa1111-0002",
        notes,
        [("user", "why does retry not fire on 503?"), ("assistant", "The retry filter skips 5xx.")],
        start="2026-11-21T08:00",
    )
    write_codex_session(
        home,
        "0199cccc-dddd-0003",
        shop,
        [("user", "make retry backoff exponential"), ("assistant", "Done: retry uses 2^n.")],
        day="19",
    )
    return shop, notes


QUERIES = ("retry", "retry agent:claude-code", "backoff OR 503", "retry kind:prompt")
SESSION_CALLS: dict[str, dict[str, Any]] = {
    "all": {},
    "codex": {"agent": "codex"},
    "shop": {"project": "../shop"},  # relative: from the server's cwd (notes)
    "here": {"project": "."},
    "page2": {"limit": 1, "offset": 1},
    "503": {"query": "503"},
}


def test_search_and_list_sessions_match_the_cli(home: Path, run_cli: Any) -> None:
    """The same query through MCP and `agentdex search --json`: same refs, same order;
    list_sessions lists and filters conversations as `agentdex sessions` does."""
    require_parser("claude_code")
    require_parser("codex")
    require_api("search", "search")
    _shop, notes = _three_conversations(home)

    async def scenario() -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
        async with stdio_session("--home", str(home), cwd=notes) as session:
            searched = [
                json_of(await session.call_tool("search", {"query": query, "limit": 50}))
                for query in QUERIES
            ]
            listed = {
                name: json_of(await session.call_tool("list_sessions", arguments))
                for name, arguments in SESSION_CALLS.items()
            }
            return searched, listed

    searched, listed = asyncio.run(scenario())
    for query, via_mcp in zip(QUERIES, searched, strict=True):
        cli = run_cli("--home", str(home), "search", query, "--limit", "50", "--json", cwd=notes)
        assert cli.returncode == 0, cli.stderr
        via_cli = json.loads(cli.stdout)
        refs = [r["ref"] for r in via_mcp["results"]]
        assert refs, query
        assert refs == [r["ref"] for r in via_cli["results"]], query
        assert [r["session_id"] for r in via_mcp["results"]] == [
            r["session_id"] for r in via_cli["results"]
        ]
        assert via_mcp["run"]["status"] == "complete", via_mcp["run"]
        assert "text" not in via_mcp["results"][0]  # snippet only unless full_text

    def ids(name: str) -> list[str]:
        return [c["session_id"] for c in listed[name]["conversations"]]

    cli = run_cli("--home", str(home), "conversations", "--json")
    assert cli.returncode == 0, cli.stderr
    everything = [c["session_id"] for c in json.loads(cli.stdout)["conversations"]]
    assert ids("all") == everything  # newest activity first, as the CLI lists them
    assert ids("all") == ["aaaa1111-0002", "aaaa1111-0001", "0199cccc-dddd-0003"]
    assert ids("codex") == ["0199cccc-dddd-0003"]
    assert set(ids("shop")) == {"aaaa1111-0001", "0199cccc-dddd-0003"}
    assert ids("here") == ["aaaa1111-0002"]  # "." is the server's cwd: notes
    assert ids("page2") == everything[1:2]
    assert listed["page2"]["offset"] == 1
    assert ids("503") == ["aaaa1111-0002"]


API_OF_TOOL = {
    "search": ("search", "search", {"query": "x"}),
    "list_sessions": ("search", "conversations", {}),
    "validate_query": ("search", "validate_query", {"query": "x"}),
    "workspace_context": ("context", "snapshot", {}),
    "list_worktrees": ("worktrees", "list_worktrees", {}),
}


async def _check_unavailable_exactly_when_api_missing(session: ClientSession) -> None:
    """Until its API is merged a tool answers with a clear error, never a fake result."""
    for name, (module, attr, arguments) in API_OF_TOOL.items():
        answer = await session.call_tool(name, arguments)
        assert unavailable(answer) is not api_present(module, attr), (name, text_of(answer))


def test_protocol_tools_resources_and_errors(home: Path) -> None:
    """initialize, list tools/resources, read resources; bad arguments and missing APIs
    are tool errors; the connection survives every failure."""

    async def scenario() -> None:
        async with stdio_session(cwd=home) as session:
            await _check_tools_and_resources(session)
            await _check_bad_arguments(session)
            await _check_unavailable_exactly_when_api_missing(session)

    asyncio.run(scenario())


def test_garbage_on_stdin_and_eof_end_cleanly(run_cli: Any) -> None:
    """Not JSON, an unknown method, then EOF: JSON-RPC errors, exit 0, no traceback."""
    garbage = 'not json\n{"jsonrpc":"2.0","id":1,"method":"bogus"}\n'
    done = run_cli("mcp", input=garbage, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(replies) == 2  # stdout carries only protocol messages
    assert replies[0]["id"] is None and replies[0]["error"]["code"] == -32700  # parse error
    assert replies[1]["id"] == 1 and replies[1]["error"]["code"] == -32601  # method not found


def test_query_language_page_without_the_doc(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An installed build has no docs folder: the page lists what the search API publishes."""
    require_api("search", "query_fields")
    from agentdex.api.search import SORTS, query_fields
    from agentdex.mcp import resources

    monkeypatch.setattr(resources, "DOCS_DIR", tmp_path)
    page = resources.query_language_text()
    assert page.startswith("# agentdex query language")
    for name in query_fields():
        assert f"- `{name}:`" in page
    for value in (*agents(), *SORTS):
        assert f"- `{value}`" in page
