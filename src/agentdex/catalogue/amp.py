"""Amp (Sourcegraph): legacy local threads only; current versions keep threads in the cloud.

Closed source. The folder and shape come from public readers (kenn-io/agentsview
``internal/parser/amp.go``, ``types.go``: ``~/.local/share/amp/threads``, ``AMP_DIR``);
the crate ``txcript``'s ``harness::amp`` docs say CLI versions after early 2026 are
server-authoritative and no longer write ``threads/``.
"""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

ROWS = (
    StoreRow(
        agent="amp",
        store="amp.threads",
        holds="transcripts",
        format="json",
        root="amp_threads",
        patterns=("T-*.json",),
        parser="amp.thread_json.v1",
        env=("AMP_DIR",),
        locations={
            "linux": "${AMP_DIR:-~/.local/share/amp/threads}",
            "macos": "~/.local/share/amp/threads",
            "windows": "%USERPROFILE%\\.local\\share\\amp\\threads",
            "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/.local/share/amp/threads",
        },
        description="One JSON per thread (Anthropic-style messages), written by Amp CLI "
        "versions up to early 2026.",
        upstream="closed source; kenn-io/agentsview internal/parser/amp.go",
        note="Current Amp versions keep threads on ampcode.com only: nothing local to read "
        "(export them with `amp threads markdown`); only older installs left threads here.",
    ),
)

AGENT = Agent(
    id="amp",
    name="Amp",
    rows=ROWS,
    parsers={"amp.thread_json.v1": "agentdex.parsers.amp"},
    roots={"amp_threads": RootSpec(paths=("~/.local/share/amp/threads",), env=("AMP_DIR",))},
    resume=ResumeRow(
        agent="amp",
        note="Amp's threads are reopened from ampcode.com or `amp threads continue`; a legacy "
        "local thread is not known to the current CLI.",
    ),
)
