"""What a piece of Cline user-role text is: typed text, a tool result, or harness text.

Cline sends everything back to the model as *user* messages: the person's
words, tool results and its own reminders. Only the person's words are
wrapped, always in one of four tags (``<task>`` for the first request,
``<feedback>``, ``<answer>`` to a follow-up question, ``<user_message>``
on resume or in plan mode), so the tags decide what is a prompt:

* ``<environment_details>`` blocks are injected context: dropped.
* A text that opens with a tool-result header (``[read_file for 'a.ts']
  Result:``, ``[attempt_completion] Result:``; the quoted part may hold
  ``]`` or wrap onto further lines) or says a tool was not executed is a
  tool result. Typed text Cline appends to one (feedback on a completion
  or a denied tool, an answer to a question) is a prompt of its own; only
  a tag that *ends* the result counts (before what its ``@`` mentions
  attached), so a file read that happens to contain ``<task>`` is not a
  prompt.
* What an ``@`` mention attached (``<file_content>``, ``<folder_content>``,
  ``<url_content>``, ``<workspace_diagnostics>``, ``<terminal_output>``,
  ``<git_working_state>``, ``<git_commit>``: Cline appends these after the
  whole text, so after the closing tag) is context, and tags inside it are
  not typed text.
* Anything else outside the four tags is Cline's harness (``[TASK
  RESUMPTION] ...``, ``[ERROR] You did not use a tool ...``, ``# TODO LIST
  UPDATE REQUIRED``, ``# task_progress RECOMMENDED``, the wrapper sentence
  around feedback): kept as ``system``/``message`` (searchable, never a
  prompt).
"""

from __future__ import annotations

import re

from agentdex.records import Kind, Role

#: Tags whose body is what the person typed.
USER_TAGS = ("task", "feedback", "answer", "user_message")
_USER_TAG = re.compile(
    r"<(?P<tag>task|feedback|answer|user_message)>(?P<body>.*?)</(?P=tag)>", re.DOTALL
)
#: What ``@`` mentions attach (Cline's ``parseMentions`` appends them to the text).
_MENTIONED = re.compile(
    r"<(?P<m>file_content|folder_content|url_content|workspace_diagnostics|terminal_output"
    r"|git_working_state|git_commit)\b[^>]*>.*?</(?P=m)>",
    re.DOTALL,
)
_ENVIRONMENT = re.compile(r"<environment_details>.*?(?:</environment_details>|\Z)", re.DOTALL)
#: ``[tool_name ...] Result:`` at the start; the description is non-greedy up to the
#: first ``] Result:``, so ``]`` and line breaks inside quotes do not end it.
_TOOL_RESULT = re.compile(r"\A\s*\[(?P<tool>[a-z][a-z0-9_]*)\b(?P<desc>.*?)\] Result:", re.DOTALL)
_NOT_EXECUTED = re.compile(r"\A\s*Tool \[[^\]\n]+\] was not executed\b")
#: Cline appends this to a reply the person (or an API error) cut short.
INTERRUPTED = re.compile(r"\s*\[Response interrupted by [^\]\n]*\]\s*\Z")

Part = tuple[Role, Kind, str]


def without_environment(text: str) -> str:
    """``text`` with the injected ``<environment_details>`` blocks removed."""
    return _ENVIRONMENT.sub("", text)


def _typed_matches(text: str) -> list[re.Match[str]]:
    """User-tag matches outside what mentions attached."""
    files = [m.span() for m in _MENTIONED.finditer(text)]
    return [
        m
        for m in _USER_TAG.finditer(text)
        if not any(start <= m.start() < end for start, end in files)
    ]


def tool_name(text: str) -> str | None:
    """The tool a tool-result text answers (``None`` when it is not one)."""
    found = _TOOL_RESULT.match(text)
    if found:
        return found.group("tool")
    return "not-executed" if _NOT_EXECUTED.match(text) else None


def user_text_parts(raw: str, *, tool_result: bool = False) -> list[Part]:
    """The records one user text gives, in order (``tool_result``: it is a tool result block)."""
    text = without_environment(raw).strip()
    if not text:
        return []
    is_result = tool_result or tool_name(text) is not None
    typed = _typed_matches(text)
    if is_result:
        typed = [m for m in typed[-1:] if not _MENTIONED.sub("", text[m.end() :]).strip()]
    rest = text
    for match in reversed(typed):
        rest = rest[: match.start()] + rest[match.end() :]
    rest = rest.strip()
    parts: list[Part] = []
    if rest:
        parts.append(("tool", "tool_result", rest) if is_result else ("system", "message", rest))
    parts.extend(("user", "prompt", body) for m in typed if (body := m.group("body").strip()))
    return parts
