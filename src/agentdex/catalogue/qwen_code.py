"""Qwen Code stores (``~/.qwen``, or ``$QWEN_RUNTIME_DIR`` for the session files)."""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

ROWS = (
    StoreRow(
        agent="qwen-code",
        store="qwen-code.chats",
        holds="transcripts",
        format="jsonl",
        root="qwen",
        patterns=("projects/*/chats/*.jsonl", "tmp/*/chats/*.jsonl"),
        parser="qwen-code.chat_jsonl.v1",
        env=("QWEN_RUNTIME_DIR",),
        locations={
            "linux": "~/.qwen",
            "macos": "~/.qwen",
            "windows": "%USERPROFILE%\\.qwen",
            "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/.qwen",
        },
        description=(
            "One ChatRecord per line (uuid/parentUuid tree, Gemini Content parts, "
            "usageMetadata); projects/<sanitized cwd>/chats/, tmp/<hash>/chats/ before 0.1x."
        ),
        upstream="QwenLM/qwen-code packages/core/src/services/chatRecordingService.ts",
    ),
)

AGENT = Agent(
    id="qwen-code",
    name="Qwen Code",
    rows=ROWS,
    parsers={"qwen-code.chat_jsonl.v1": "agentdex.parsers.qwen_code"},
    roots={"qwen": RootSpec(paths=("~/.qwen",), env=("QWEN_RUNTIME_DIR",))},
    resume=ResumeRow(
        agent="qwen-code",
        argv=("qwen", "--resume", "{session_id}"),
        stores=("qwen-code.chats",),
        note="Qwen Code keeps sessions per project, so the command runs in the project directory.",
        source="Qwen Code CLI options: `qwen --resume <session-id>` (`-r`; no id opens a "
        "picker); sessions are found through the project's folder (SessionService).",
    ),
)
