"""Factory Droid stores (``~/.factory/sessions``).

Droid is closed source. Where it keeps sessions and in what shape is known from public
readers written against real machines (Dicklesworthstone/franken_agent_detection
``src/connectors/factory.rs``, jazzyalex/agent-sessions ``DroidSessionParser.swift``, the
droid_dash and tokscale usage readers); the home folder and the resume command are in
Factory's own docs (Factory-AI/factory ``docs/cli/configuration/settings.mdx``,
``docs/reference/cli-reference.mdx``). See ``docs/agents.md``.
"""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

ROWS = (
    StoreRow(
        agent="factory-droid",
        store="factory-droid.sessions",
        holds="transcripts",
        format="jsonl",
        root="factory",
        patterns=("sessions/*/*.jsonl", "sessions/*.jsonl"),
        parser="factory-droid.session_jsonl.v1",
        locations={
            "linux": "~/.factory",
            "macos": "~/.factory",
            "windows": "%USERPROFILE%\\.factory",
            "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/.factory",
        },
        description=(
            "sessions/<cwd with / as ->/<id>.jsonl: a session_start line (id, title, cwd), "
            "then message lines with Anthropic-style content blocks; <id>.settings.json "
            "beside it: model and the session's running token totals."
        ),
        upstream="closed source; public readers: franken_agent_detection "
        "src/connectors/factory.rs, agent-sessions DroidSessionParser.swift",
    ),
)

AGENT = Agent(
    id="factory-droid",
    name="Factory Droid",
    rows=ROWS,
    parsers={"factory-droid.session_jsonl.v1": "agentdex.parsers.factory_droid"},
    roots={"factory": RootSpec(paths=("~/.factory",))},
    resume=ResumeRow(
        agent="factory-droid",
        argv=("droid", "--resume", "{session_id}"),
        stores=("factory-droid.sessions",),
        note="Droid also has `droid resume <id>` and `droid --fork <id>` (a copy).",
        source="Factory-AI/factory docs/reference/cli-reference.mdx: `droid --resume "
        "[sessionId]` (alias -r; no id resumes the last modified session).",
    ),
)
