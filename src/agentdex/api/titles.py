"""A conversation's title: never a harness line, a command echo or a model's preamble.

What agents store as a title, and the first thing a person typed, are often not
a title at all on a real home: Claude Code writes ``Claude AI usage limit
reached|1753131600`` as a session summary, Aider logs ``pwd``, ``Y`` and ``N``
as prompts, a reasoning model opens with ``<think>``. :func:`choose` takes, in
order, the agent's own title, the first real prompt, the first reply, and at
last a description of the conversation (agent, project, start), so no
conversation is left without one. :func:`clean` is the one judge of a line.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

#: How long a title may be (longer ones are cut with an ellipsis).
MAX_CHARS = 80

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_OPEN_THINK = re.compile(r"^\s*<(think|thinking|reasoning)>", re.I)
#: Tags harnesses wrap around what they inject (Claude Code's slash commands, hooks).
_HARNESS_TAGS = re.compile(
    r"<(command-name|command-message|command-args|command-contents|local-command-stdout|"
    r"local-command-stderr|local-command-caveat|system-reminder|user-prompt-submit-hook|"
    r"bash-input|bash-stdout|bash-stderr)>.*?</\1>",
    re.S,
)
#: Lines a harness or an API writes, never a person: limits, errors, interruptions.
_HARNESS = re.compile(
    r"usage limit reached|\|\d{9,}\s*$|^(api error\b|error:|request timed out|request was aborted"
    r"|\[request interrupted|interrupted by user|no response requested|caveat:"
    r"|this session is being continued from|add file to the chat\?|warning:)"
    r"|\(y\)es/\(n\)o",
    re.I,
)
#: Aider chat modes: what follows is the request itself.
_MODE = re.compile(r"^/(ask|code|architect|context|copy-context|chat-mode \w+)\s+", re.I)
#: The start of a shell command typed at an agent's prompt (with shell syntax after it).
_SHELL = re.compile(
    r"^(cd|ls|pwd|chmod|chown|git|npm|npx|pnpm|yarn|pip|python3?|make|docker|curl|wget|cat|"
    r"echo|mkdir|rm|cp|mv|for|export|source|sudo|brew|apt|ssh|zsh|bash|sh|go|cargo|node)\b"
)
#: Markdown marks before a line's words (a heading, a quote, a list item).
_MARKS = re.compile(r"^[#>*\-\s]+")
#: A word of two letters or more (a title has two at least).
_WORD = re.compile(r"[^\W\d_]{2,}")
#: Four letters of a script written without spaces (Chinese, Japanese): a sentence, not an echo.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{4}")
_SHELL_SYNTAX = re.compile(r"[;|&$`*]|~/|\s-{1,2}\w|\s\+\w|^\S+$")


def clean(text: str | None, *, typed: bool) -> str | None:
    """``text`` as a title (one line, at most :data:`MAX_CHARS`), or None when it is none.

    ``typed``: the text is a prompt, so a command echo (one word: ``pwd``, ``Y``,
    ``ncontinue``; a slash command; a shell command) does not name the conversation.
    An agent's own title may be one word (``jcode-fork-adoption-plan``).

    >>> clean("Claude AI usage limit reached|1753131600", typed=False) is None
    True
    >>> clean("<think>The user wants</think> Fix the flaky test", typed=False)
    'Fix the flaky test'
    >>> [clean(t, typed=True) for t in ("pwd", "Y", "chmod +x ~/a/*.sh", "/add **")]
    [None, None, None, None]
    >>> clean("/ask why does   the retry\\nloop spin?", typed=True)
    'why does the retry loop spin?'
    """
    if not text:
        return None
    text = _THINK.sub(" ", text)
    if _OPEN_THINK.match(text):
        return None  # an unclosed preamble: nothing after it is the title
    text = _HARNESS_TAGS.sub(" ", text)
    line = _MARKS.sub("", " ".join(text.split()))
    if not line or _HARNESS.search(line) or _is_json(line):
        return None
    if typed:
        line = _MODE.sub("", line)
        spaced = " " in line and len(_WORD.findall(line)) >= 2
        if line.startswith(("/", "!")) or not (spaced or _CJK.search(line)):
            return None  # a command, a y/n answer, one word (`pwd`, `ncontinue`)
        if _SHELL.match(line) and _SHELL_SYNTAX.search(line):
            return None
    return line if len(line) <= MAX_CHARS else line[: MAX_CHARS - 1] + "…"


def _is_json(line: str) -> bool:
    if not line.startswith(("{", "[")):
        return False
    import json

    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def choose(
    own: str | None,
    prompts: Iterable[str],
    replies: Iterable[str] = (),
    *,
    agent: str,
    project: str | None = None,
    first_ts: float | None = None,
) -> str:
    """The title: the agent's own, else the first real prompt, else the first reply, else
    ``<agent> chat in <project>, <start>`` (so every conversation has one)."""
    title = clean(own, typed=False)
    if title:
        return title
    for prompt in prompts:
        title = clean(prompt, typed=True)
        if title:
            return title
    for reply in replies:
        title = clean(reply, typed=False)
        if title:
            return title
    return described(agent, project, first_ts)


def described(agent: str, project: str | None, first_ts: float | None) -> str:
    """A conversation named by where and when: ``aider chat in afi-core, 2025-07-16 20:10``."""
    parts = [f"{agent} chat"]
    if project:
        parts.append(f"in {os.path.basename(project.rstrip('/')) or project}")
    title = " ".join(parts)
    if first_ts is not None:
        title += ", " + datetime.fromtimestamp(first_ts, UTC).strftime("%Y-%m-%d %H:%M")
    return title


def indexed_title(agent: str, session_id: str, home: str | None) -> str | None:
    """The title the index gives a conversation it holds; None without an index or when it
    does not hold the conversation (a title is a nicety: never fail on it)."""
    from agentdex.api.conversations import conversation_title
    from agentdex.api.index import reader
    from agentdex.errors import AgentdexError

    try:
        with reader(None, home) as engine:
            if (
                engine is not None
                and engine.db.execute(
                    "SELECT 1 FROM records WHERE agent = ? AND session_id = ? LIMIT 1",
                    (agent, session_id),
                ).fetchone()
            ):
                return conversation_title(engine, agent, session_id)
    except (AgentdexError, OSError, sqlite3.Error):
        pass
    return None


def title_of(agent: str, session_id: str, records: list[dict[str, Any]], home: str | None) -> str:
    """The title of a conversation read in full (``show``): the index's when it holds the
    conversation, else chosen the same way from ``records`` (their JSON form)."""
    from agentdex.api._order import record_place
    from agentdex.records import parse_timestamp

    title = indexed_title(agent, session_id, home)
    if title:
        return title
    stamps = [t for t in (parse_timestamp(r.get("timestamp")) for r in records) if t is not None]
    return choose(
        None,
        (r["text"] for r in records if r["kind"] == "prompt"),
        (r["text"] for r in records if r["kind"] == "message" and r["role"] == "assistant"),
        agent=agent,
        project=record_place(records)[0],
        first_ts=min(stamps) if stamps else None,
    )
