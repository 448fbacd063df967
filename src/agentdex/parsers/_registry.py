"""Parser registry: versioned parser ids to the module that implements them.

Modules are imported on first use, so start-up pays only for the parsers a
command touches. Each module exposes ``PARSERS: tuple[ParserSpec, ...]``;
duplicate ids are rejected when a module is loaded.
"""

from __future__ import annotations

import importlib

from agentdex.parsers.base import ParserSpec

#: parser id -> module implementing it
PARSER_MODULES: dict[str, str] = {
    "claude-code.transcript_jsonl.v1": "agentdex.parsers.claude_code",
    "claude-code.history_jsonl.v1": "agentdex.parsers.claude_code",
    "codex.rollout_jsonl.v1": "agentdex.parsers.codex",
    "codex.rollout_json.v1": "agentdex.parsers.codex",
    "codex.history_jsonl.v1": "agentdex.parsers.codex",
    "gemini-cli.chat.v1": "agentdex.parsers.gemini_cli",
    "gemini-cli.logs_json.v1": "agentdex.parsers.gemini_cli",
    "vscode-copilot.chat_session.v1": "agentdex.parsers.vscode_copilot",
    "vscode-copilot.inline_history.v1": "agentdex.parsers.vscode_copilot",
    "claude-code.store_sqlite.v1": "agentdex.parsers.claude_store",
    "codex.session_index_jsonl.v1": "agentdex.parsers.codex_titles",
    "codex.state_sqlite.v1": "agentdex.parsers.codex_titles",
    "cursor.state_vscdb.v1": "agentdex.parsers.cursor",
    "cursor-cli.transcript_jsonl.v1": "agentdex.parsers.cursor_cli",
    "cursor-cli.prompt_history_json.v1": "agentdex.parsers.cursor_cli",
    "opencode.sqlite.v1": "agentdex.parsers.opencode",
    "opencode.storage_json.v1": "agentdex.parsers.opencode",
    "cline.api_history_json.v1": "agentdex.parsers.cline",
    "aider.chat_history_md.v1": "agentdex.parsers.aider",
    "aider.input_history.v1": "agentdex.parsers.aider",
    "pi.session_jsonl.v1": "agentdex.parsers.pi",
    "grok.chat_history_jsonl.v1": "agentdex.parsers.grok",
    "grok.prompt_history_jsonl.v1": "agentdex.parsers.grok",
    "grok.subagent_json.v1": "agentdex.parsers.grok",
    "antigravity-cli.history_jsonl.v1": "agentdex.parsers.antigravity_cli",
    "antigravity-cli.transcript_jsonl.v1": "agentdex.parsers.antigravity_cli",
    "copilot-cli.events_jsonl.v1": "agentdex.parsers.copilot_cli",
    "copilot-cli.history_session_json.v1": "agentdex.parsers.copilot_cli",
    "copilot-cli.command_history_json.v1": "agentdex.parsers.copilot_cli",
}

_LOADED: dict[str, ParserSpec] = {}


def get_parser(parser_id: str) -> ParserSpec:
    """The spec for ``parser_id`` (KeyError when no module provides it)."""
    spec = _LOADED.get(parser_id)
    if spec is not None:
        return spec
    module_name = PARSER_MODULES[parser_id]
    module = importlib.import_module(module_name)
    for candidate in module.PARSERS:
        existing = _LOADED.get(candidate.id)
        if existing is not None and existing is not candidate:
            raise ValueError(f"parser id {candidate.id} registered twice")
        _LOADED[candidate.id] = candidate
    if parser_id not in _LOADED:
        raise KeyError(f"{module_name} does not define parser {parser_id}")
    return _LOADED[parser_id]
