#!/usr/bin/env python3
"""The MCP server on real transcripts: start-up, search latency, budget paging.

Copies the shared corpus' Claude Code projects into a temporary HOME, starts
``python -m agentdex mcp`` through the SDK's stdio client and measures:
initialize, the first search (which refreshes the index), warm searches
(median of N), and paging the largest conversation through ``show_session``
under the size budget (pages, largest response, total time). The same
queries through ``agentdex search --json`` are timed for comparison and
checked for the same refs.

    python bench/bench_mcp.py [--runs 10] [--corpus ../shared/corpus]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import TextContent

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
QUERIES = ("test", "error OR fail", "agent:claude-code kind:prompt", '"git commit"')


def _env(home: Path, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX"))}
    env.update(
        HOME=str(home),
        AGENTDEX_DATA_DIR=str(data),
        AGENTDEX_CONFIG=str(data / "config.toml"),
        AGENTDEX_WSL="0",
        XDG_CONFIG_HOME=str(home / ".config"),
        PYTHONPATH=str(SRC),
    )
    return env


def _text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def _mcp(env: dict[str, str], runs: int) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agentdex", "mcp"], env=env, cwd=env["HOME"]
    )
    out: dict[str, Any] = {}
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out["initialize_s"] = round(time.perf_counter() - started, 3)
        t0 = time.perf_counter()
        await session.call_tool("search", {"query": QUERIES[0]})
        out["first_search_s (refresh + search)"] = round(time.perf_counter() - t0, 3)
        refs: dict[str, list[str]] = {}
        for query in QUERIES:
            samples = []
            for _ in range(runs):
                t0 = time.perf_counter()
                result = await session.call_tool("search", {"query": query, "limit": 20})
                samples.append(time.perf_counter() - t0)
            data = json.loads(_text(result))
            refs[query] = [r["ref"] for r in data["results"]]
            out[f"search {query!r} median_ms"] = round(statistics.median(samples) * 1000, 1)
            out[f"search {query!r} bytes"] = len(_text(result).encode())
        listed = json.loads(_text(await session.call_tool("list_sessions", {"limit": 50})))
        biggest = max(listed["conversations"], key=lambda c: c["message_count"])
        arguments: dict[str, Any] | None = {"ref": biggest["session_id"], "limit": 500}
        pages, largest, records = 0, 0, 0
        t0 = time.perf_counter()
        while arguments is not None:
            text = _text(await session.call_tool("show_session", arguments))
            largest = max(largest, len(text.encode()))
            data = json.loads(text)
            records += len(data["records"])
            cut = data.get("response_truncated")
            arguments = cut["next"]["arguments"] if cut and "next" in cut else None
            if arguments is None and data.get("next_offset") is not None:
                arguments = {"ref": biggest["session_id"], "offset": data["next_offset"]}
            pages += 1
        out["show_session largest conversation"] = {
            "session": biggest["session_id"],
            "records": records,
            "total_records": data["total_records"],
            "pages": pages,
            "largest_response_bytes": largest,
            "seconds": round(time.perf_counter() - t0, 2),
        }
    out["refs"] = refs
    return out


def _cli(env: dict[str, str], runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    refs: dict[str, list[str]] = {}
    for query in QUERIES:
        samples = []
        for _ in range(runs):
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "agentdex", "search", query, "-n", "20", "--json"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            samples.append(time.perf_counter() - t0)
        refs[query] = [r["ref"] for r in json.loads(done.stdout)["results"]]
        out[f"cli search {query!r} median_ms (new process each)"] = round(
            statistics.median(samples) * 1000, 1
        )
    out["refs"] = refs
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    args = parser.parse_args()
    projects = args.corpus / "claude-code" / "projects"
    if not projects.is_dir():
        sys.exit(f"no corpus at {projects}")
    with tempfile.TemporaryDirectory() as tmp:
        home, data = Path(tmp) / "home", Path(tmp) / "data"
        shutil.copytree(projects, home / ".claude" / "projects")
        env = _env(home, data)
        via_mcp = asyncio.run(_mcp(env, args.runs))
        via_cli = _cli(env, max(1, args.runs // 3))
    same = via_mcp.pop("refs") == via_cli.pop("refs")
    print(json.dumps({**via_mcp, **via_cli, "same_refs_as_cli": same}, indent=2))


if __name__ == "__main__":
    main()
