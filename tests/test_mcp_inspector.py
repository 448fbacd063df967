"""The MCP server as a real client sees it: the official MCP Inspector CLI.

Every tool declares an ``outputSchema`` and returns ``structuredContent``
beside its text. The Inspector (``@modelcontextprotocol/inspector``, run as
``mcp-inspector --cli``) validates ``structuredContent`` against the tool's
``outputSchema`` and fails the call when they disagree, and ``--strict``
reports tool schemas that are not portable across clients; this test runs
it against ``agentdex mcp`` on a rendered sample home, including responses
the size budget cut.

The Inspector is installed from the npm registry into ``.cache/mcp-inspector``
(or ``$AGENTDEX_MCP_INSPECTOR`` names an installed ``mcp-inspector``); the
test skips when node or npm is absent.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentdex.mcp.tools import TOOLS
from conftest import REPO_DIR, SRC_DIR

pytestmark = [
    pytest.mark.serial,
    pytest.mark.skipif(
        shutil.which("node") is None or shutil.which("npm") is None,
        reason="node and npm are needed for the MCP Inspector",
    ),
]

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
CACHE = REPO_DIR / ".cache" / "mcp-inspector"
SERVER = (sys.executable, "-m", "agentdex", "mcp")


@pytest.fixture(scope="module")
def inspector() -> str:
    named = os.environ.get("AGENTDEX_MCP_INSPECTOR")
    if named:
        return named
    binary = CACHE / "node_modules" / ".bin" / "mcp-inspector"
    CACHE.mkdir(parents=True, exist_ok=True)
    # pytest-xdist workers each run this module fixture; one installs, the others wait.
    with (CACHE / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            _install()
    return str(binary)


def _install() -> None:
    done = subprocess.run(
        [
            *("npm", "install", "--prefix", str(CACHE), "--cache", str(CACHE / "npm-cache")),
            *("--no-audit", "--no-fund", "--loglevel", "error", INSPECTOR),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"npm could not install {INSPECTOR}:\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = importlib.util.spec_from_file_location(
        "sample_home", REPO_DIR / "examples" / "sample_home.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sample_home"] = module
    spec.loader.exec_module(module)
    home = tmp_path_factory.mktemp("inspector") / "home"
    module.render(home)
    return home


def _run(inspector: str, home: Path, *args: str, budget: int | None = None) -> dict[str, Any]:
    env = {
        "PYTHONPATH": str(SRC_DIR),
        "HOME": str(home),
        "AGENTDEX_DATA_DIR": str(home / ".local" / "share" / "agentdex"),
        "AGENTDEX_CONFIG": str(home / ".config" / "agentdex" / "config.toml"),
        "AGENTDEX_WSL": "0",
    }
    if budget is not None:
        env["AGENTDEX_MCP_MAX_BYTES"] = str(budget)
    flags = [part for name, value in env.items() for part in ("-e", f"{name}={value}")]
    done = subprocess.run(
        [inspector, "--cli", "--format", "json", *flags, *args, "--", *SERVER],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "HOME": str(home)},
    )
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
    result: dict[str, Any] = json.loads(done.stdout)["result"]
    return result


def _call(inspector: str, home: Path, tool: str, budget: int | None = None, **arguments: Any):  # type: ignore[no-untyped-def]
    args = ["--method", "tools/call", "--tool-name", tool]
    if arguments:
        args += ["--tool-args-json", json.dumps(arguments)]
    result = _run(inspector, home, *args, budget=budget)
    assert result.get("isError") is False, result
    structured = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == structured  # the same object twice
    return structured


def test_every_tool_declares_a_portable_output_schema(inspector: str, sample: Path) -> None:
    listed = _run(inspector, sample, "--method", "tools/list", "--strict")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == {spec.name for spec in TOOLS}
    for tool in tools.values():
        assert tool["outputSchema"]["type"] == "object", tool["name"]


def test_structured_content_matches_the_schema_as_a_client_checks_it(
    inspector: str, sample: Path
) -> None:
    shop = str(sample / "src" / "shop")
    found = _call(inspector, sample, "search", query="retry backoff", limit=3)
    assert found["results"] and found["run"]["status"] in {"complete", "truncated"}
    ref = found["results"][0]["ref"]
    shown = _call(inspector, sample, "show_session", ref=ref, around=1)
    assert shown["focus"] is not None and shown["records"]
    sessions = _call(inspector, sample, "list_sessions", limit=3)
    assert len(sessions["conversations"]) == 3
    sources = _call(inspector, sample, "list_sources", agent="claude-code")
    assert {s["agent"] for s in sources["sources"]} == {"claude-code"}
    context = _call(inspector, sample, "workspace_context", directory=shop)
    assert context["workspace"] == shop and context["resources"]
    worktrees = _call(inspector, sample, "list_worktrees", repo=shop)
    assert [w["primary"] for w in worktrees["worktrees"]] == [True, False]
    checked = _call(inspector, sample, "validate_query", query='retry -backoff "exact phrase"')
    assert checked["valid"] is True
    spent = _call(inspector, sample, "usage", by="model")
    assert spent["rows"] and spent["totals"]["total_tokens"] > 0


def test_responses_cut_by_the_size_budget_still_match(inspector: str, sample: Path) -> None:
    cut = _call(inspector, sample, "search", budget=2048, query="the", limit=50, full_text=True)
    assert "response_truncated" in cut
    listing = _call(inspector, sample, "list_sources", budget=2048)
    assert "response_truncated" in listing and listing["response_truncated"]["next"]
