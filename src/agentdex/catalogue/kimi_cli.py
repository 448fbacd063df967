"""Kimi CLI stores (``${KIMI_SHARE_DIR:-~/.kimi}``, the same on every OS).

MoonshotAI/kimi-cli @ 4a550eff: ``src/kimi_cli/share.py`` (the share dir),
``metadata.py`` (``kimi.json``, ``sessions/<md5(work dir)>``), ``session.py``,
``soul/context.py``, ``wire/file.py``, ``session_state.py``,
``ui/shell/prompt.py`` (``user-history``).
"""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

_ENV = ("KIMI_SHARE_DIR",)
_LOC = {
    "linux": "${KIMI_SHARE_DIR:-~/.kimi}",
    "macos": "${KIMI_SHARE_DIR:-~/.kimi}",
    "windows": "%KIMI_SHARE_DIR% or %USERPROFILE%\\.kimi",
    "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/.kimi",
}
_UP = "MoonshotAI/kimi-cli src/kimi_cli/"


def _row(
    store: str,
    holds: str,
    patterns: tuple[str, ...],
    parser: str,
    *,
    description: str,
    upstream: str,
    format: str = "jsonl",
    times: str = "recorded",
) -> StoreRow:
    return StoreRow(
        agent="kimi-cli",
        store=store,
        holds=holds,
        format=format,
        root="kimi",
        patterns=patterns,
        parser=parser,
        env=_ENV,
        locations=_LOC,
        description=description,
        upstream=upstream,
        times=times,
    )


ROWS = (
    _row(
        "kimi-cli.wire",
        "transcripts",
        ("sessions/*/*/wire.jsonl", "sessions/*/*/subagents/*/wire.jsonl"),
        "kimi-cli.wire_jsonl.v1",
        description="2025-11-26 on: {timestamp, message: {type, payload}} per UI message "
        "(TurnBegin, ContentPart, ToolCall, ToolResult, StatusUpdate...); cwd from kimi.json.",
        upstream=_UP + "wire/file.py, wire/types.py",
    ),
    _row(
        "kimi-cli.context",
        "transcripts",
        ("sessions/*/*/context*.jsonl", "sessions/*/*.jsonl"),
        "kimi-cli.context_jsonl.v1",
        description="The model's context, rotated on /clear, compaction and revert; read only "
        "for sessions without a wire log (before 2025-11-26). No times.",
        upstream=_UP + "soul/context.py",
        times="file-mtime",
    ),
    _row(
        "kimi-cli.titles",
        "titles",
        ("sessions/*/*/state.json", "sessions/*/*/metadata.json"),
        "kimi-cli.state_json.v1",
        format="json",
        description="custom_title (state.json) or the older metadata.json title.",
        upstream=_UP + "session_state.py",
    ),
    _row(
        "kimi-cli.user_history",
        "prompt log",
        ("user-history/*.jsonl",),
        "kimi-cli.user_history_jsonl.v1",
        description="The shell's prompt recall list per work dir ({content} per line), no times.",
        upstream=_UP + "ui/shell/prompt.py",
        times="file-mtime",
    ),
)

AGENT = Agent(
    id="kimi-cli",
    name="Kimi CLI",
    rows=ROWS,
    parsers={row.parser: "agentdex.parsers.kimi_cli" for row in ROWS if row.parser},
    roots={"kimi": RootSpec(paths=("~/.kimi",), env=_ENV)},
    resume=ResumeRow(
        agent="kimi-cli",
        argv=("kimi", "--session", "{session_id}"),
        stores=("kimi-cli.wire", "kimi-cli.context"),
        note="Kimi finds a session only under the work dir it was started in, so the command "
        "runs there.",
        source="MoonshotAI/kimi-cli src/kimi_cli/cli/__init__.py: `--session, --resume, -S, -r` "
        "'Resume a session. With ID: resume that session'; Session.find(work_dir, id) looks "
        "under that work dir's md5 folder.",
    ),
)
