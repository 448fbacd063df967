"""How each agent reopens one of its conversations from a command line, as data.

``agentdex resume`` (``agentdex.api.resume``) fills a row's ``argv`` template
and runs it in the conversation's own directory. A row with an empty ``argv``
is an agent that cannot be resumed from a command line: it says why in
``note``. ``source`` records where the syntax comes from, so a reviewer can
check it when an agent changes its flags.

Placeholders in ``argv``: ``{session_id}`` (the agent's own conversation id,
as agentdex indexed it) and ``{source_path}`` (the transcript file, for agents
that open a session by path). Nothing else is substituted, and the argv is
never handed to a shell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: The placeholders a template may use.
PLACEHOLDERS = ("{session_id}", "{source_path}")


@dataclass(frozen=True, slots=True)
class ResumeRow:
    """The resume command of one agent.

    ``executables`` are alternative names of ``argv[0]`` (the first one found
    on PATH is run). ``stores`` are the stores whose conversation ids the agent
    itself can reopen: a conversation agentdex knows only from another store
    (a prompt log whose transcript is gone, an older format the current agent
    no longer reads) is reported as not resumable. ``store_notes`` add a
    warning for conversations found in one store (e.g. Codex's archive).
    """

    agent: str
    argv: tuple[str, ...] = ()
    executables: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()
    note: str = ""
    store_notes: Mapping[str, str] = field(default_factory=dict)
    source: str = ""

    @property
    def supported(self) -> bool:
        return bool(self.argv)


RESUME: tuple[ResumeRow, ...] = (
    ResumeRow(
        agent="claude-code",
        argv=("claude", "--resume", "{session_id}"),
        stores=("claude-code.projects", "claude-code.subagents"),
        note="Claude Code finds a session only from the directory it was started in "
        "(its project folder is named after that directory), so the command runs there.",
        source="Claude Code CLI reference: `claude --resume <session-id>` (`-r`); "
        "anthropics/claude-code issue 14252: resuming by id works only from the original "
        "directory. Sessions of the pre-JSONL `__store.db` era are not resumable.",
    ),
    ResumeRow(
        agent="codex",
        argv=("codex", "resume", "{session_id}"),
        stores=("codex.sessions", "codex.archived_sessions"),
        store_notes={
            "codex.archived_sessions": "this session is archived in Codex, which refuses to "
            "resume it until `codex unarchive {session_id}` is run",
        },
        source="Codex CLI `codex resume [SESSION_ID]` (`codex resume --help`; the "
        "@openai/codex session-management docs). Archived sessions: Codex's own error "
        "'session <id> is archived. Run `codex unarchive <id>`'. Legacy `rollout-*.json` "
        "sessions are not resumable by current Codex.",
    ),
    ResumeRow(
        agent="gemini-cli",
        argv=("gemini", "--resume", "{session_id}"),
        stores=("gemini-cli.chats",),
        note="Gemini CLI keeps sessions per project, so the command runs in the project directory.",
        source="Gemini CLI docs, cli/session-management: `gemini --resume <session UUID>` "
        "(`-r`; also an index or `latest`).",
    ),
    ResumeRow(
        agent="vscode-copilot",
        note="VS Code has no command line that reopens a chat session; open it from the "
        "Chat view's history in the workspace.",
    ),
    ResumeRow(
        agent="cursor",
        note="Cursor IDE chats are reopened from the IDE's chat history; Cursor has no "
        "command line for it.",
    ),
    ResumeRow(
        agent="cursor-cli",
        argv=("cursor-agent", "--resume", "{session_id}"),
        executables=("cursor-agent", "agent"),
        stores=("cursor-cli.transcripts",),
        source="Cursor CLI parameters: `cursor-agent --resume [chatId]`; newer installs "
        "name the binary `agent` (`agent --resume <chat-id>`). The agent-transcripts folder "
        "name is the chat id.",
    ),
    ResumeRow(
        agent="opencode",
        argv=("opencode", "--session", "{session_id}"),
        stores=("opencode.db", "opencode.storage"),
        source="OpenCode CLI docs (opencode.ai/docs/cli): TUI flag `--session, -s` "
        "'Session ID to continue'.",
    ),
    ResumeRow(
        agent="cline",
        argv=("cline", "--id", "{session_id}"),
        stores=("cline.sessions",),
        note="The Cline CLI reopens a session of the session store that the CLI, the desktop "
        "app and the VS Code extension (from 4.0) share; a task of the older task folders is "
        "reopened from Cline's History view in VS Code.",
        source="cline/cline apps/cli `--id <session-id>`: 'Resume an existing session by ID' "
        "(src/commands/program.ts; main.ts starts the interactive chat on it).",
    ),
    ResumeRow(
        agent="aider",
        note="Aider keeps one chat log per project, not sessions; "
        "`aider --restore-chat-history` reloads the project's whole log, not one "
        "conversation.",
    ),
    ResumeRow(
        agent="pi",
        argv=("pi", "--session", "{source_path}"),
        stores=("pi.sessions",),
        note="Pi opens a session by its file.",
        source="pi-mono coding-agent README, CLI options: `--session <path>` uses a specific "
        "session file (`--resume` opens a picker, `--continue` the latest).",
    ),
    ResumeRow(
        agent="grok",
        argv=("grok", "--resume", "{session_id}"),
        stores=("grok.sessions",),
        source="xAI Grok Build docs, features/sessions: `grok --resume <session-id>`.",
    ),
    ResumeRow(
        agent="antigravity-cli",
        argv=("agy", "--conversation", "{session_id}"),
        stores=("antigravity-cli.history", "antigravity-cli.transcripts"),
        source="`agy --help`: `--conversation` 'Resume a previous conversation by ID', as "
        "quoted by public integrations (not in published docs). Antigravity resumes from "
        "its own conversation database, so prompt-log ids count too.",
    ),
    ResumeRow(
        agent="copilot-cli",
        argv=("copilot", "--resume={session_id}"),
        stores=("copilot-cli.session_state",),
        source="GitHub Copilot CLI `copilot --resume [sessionId]`; on exit the CLI prints "
        "`copilot --resume=<id>` itself (github/copilot-cli issues 3458, 4397). The older "
        "history-session-state files are not resumable.",
    ),
    ResumeRow(
        agent="windsurf",
        note="Windsurf's Cascade history is encrypted and lives in the IDE; agentdex only "
        "lists it.",
    ),
)


def resume_row(agent: str) -> ResumeRow:
    """The row of ``agent`` (KeyError when unknown)."""
    for row in RESUME:
        if row.agent == agent:
            return row
    raise KeyError(agent)
