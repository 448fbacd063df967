"""An agentdex plug-in for "Jotter", a (made-up) coding agent, in one file.

Jotter keeps one JSON Lines file per session in ``~/.jotter/sessions/`` (or
``$JOTTER_HOME/sessions/``). The first line describes the session, the rest
are turns::

    {"type": "session", "id": "s1", "cwd": "/home/me/app", "version": "0.3.1"}
    {"type": "user", "text": "add a login page", "ts": "2026-11-02T09:00:00Z"}
    {"type": "assistant", "text": "Done.", "ts": "...", "model": "jot-1"}
    {"type": "tool", "name": "shell", "input": {"cmd": "ls"}, "output": "app.py"}

Register it in the plug-in's ``pyproject.toml``::

    [project.entry-points."agentdex.agents"]
    jotter = "agentdex_jotter:AGENT"
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from agentdex.plugin import (
    Agent,
    Diagnostics,
    JsonlReader,
    ParseCursor,
    ParserSpec,
    Record,
    ResumeRow,
    RoleCounts,
    RootSpec,
    SourceRef,
    StoreRow,
    add_role,
    parse_timestamp,
)


def parse(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    """One record per turn; a tool line gives a call and its result."""
    session, cwd, version = ref.path.stem, None, None
    for line in JsonlReader(ref.path, diagnostics):
        item = line.value if isinstance(line.value, dict) else {}
        kind, text = item.get("type"), item.get("text")
        at = f"line:{line.lineno}"
        base = {
            "agent": ref.agent,
            "store": ref.store,
            "source_path": str(ref.path),
            "session_id": session,
            "timestamp": parse_timestamp(item.get("ts")),
            "cwd": cwd,
            "host": ref.host,
        }
        if kind == "session":
            session = str(item.get("id") or session)
            cwd, version = item.get("cwd"), item.get("version")
        elif kind == "user" and isinstance(text, str):
            cursor.units += 1
            yield Record(**base, locator=at, role="user", kind="prompt", text=text)
        elif kind == "assistant" and isinstance(text, str):
            cursor.units += 1
            yield Record(
                **base,
                locator=at,
                role="assistant",
                kind="message",
                text=text,
                model=item.get("model"),
            )
        elif kind == "tool":
            cursor.units += 1
            call = f"{item.get('name')} {item.get('input')}"
            yield Record(**base, locator=at, role="assistant", kind="tool_call", text=call)
            yield Record(
                **base,
                locator=f"{at}/result",
                role="tool",
                kind="tool_result",
                text=str(item.get("output", "")),
            )
        else:  # format drift: reported once per kind, name and version, never silently
            diagnostics.unrecognised(
                "record type", kind, version=version, path=ref.path, locator=at
            )


def _lines(path: Path) -> Iterator[dict[str, object]]:
    for line in JsonlReader(path, Diagnostics()):
        if isinstance(line.value, dict):
            yield line.value


def count_raw(path: Path) -> int:
    """Independent count for ``agentdex audit``: the turn lines (a tool line is one)."""
    return sum(1 for item in _lines(path) if item.get("type") in ("user", "assistant", "tool"))


def count_roles(path: Path) -> RoleCounts:
    """Independent count of what a person typed and what the agent answered."""
    counts: RoleCounts = {}
    session = path.stem
    for item in _lines(path):
        if item.get("type") == "session":
            session = str(item.get("id") or session)
        elif item.get("type") == "user":
            add_role(counts, session, "prompts")
        elif item.get("type") == "assistant":
            add_role(counts, session, "replies")
    return counts


PARSERS = (
    ParserSpec(
        id="jotter.session_jsonl.v1", parse=parse, count_raw=count_raw, count_roles=count_roles
    ),
)

AGENT = Agent(
    id="jotter",
    name="Jotter",
    rows=(
        StoreRow(
            agent="jotter",
            store="jotter.sessions",
            holds="transcripts",
            format="jsonl",
            root="jotter",
            patterns=("sessions/*.jsonl",),
            parser="jotter.session_jsonl.v1",
            env=("JOTTER_HOME",),
            locations={
                "linux": "~/.jotter",
                "macos": "~/.jotter",
                "windows": "%USERPROFILE%\\.jotter",
            },
            description="One JSON Lines file per session; the first line describes it.",
        ),
    ),
    parsers={"jotter.session_jsonl.v1": __name__},
    roots={"jotter": RootSpec(paths=("~/.jotter",), env=("JOTTER_HOME",))},
    resume=ResumeRow(
        agent="jotter",
        argv=("jotter", "--resume", "{session_id}"),
        stores=("jotter.sessions",),
        source="jotter --help",
    ),
)
