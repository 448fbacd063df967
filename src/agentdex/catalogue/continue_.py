"""Continue stores (``${CONTINUE_GLOBAL_DIR:-~/.continue}/sessions``): IDE extensions and ``cn``."""

from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow

_LOC = {
    "linux": "~/.continue",
    "macos": "~/.continue",
    "windows": "%USERPROFILE%\\.continue",
    "wsl": "${AGENTDEX_WSL_USERS_ROOT:-/mnt/c/Users}/*/.continue",
}
_ENV = ("CONTINUE_GLOBAL_DIR",)

ROWS = (
    StoreRow(
        agent="continue",
        store="continue.sessions",
        holds="transcripts",
        format="json",
        root="continue",
        patterns=("sessions/*.json",),
        exclude=("sessions.json",),
        parser="continue.session_json.v1",
        env=_ENV,
        locations=_LOC,
        description=(
            "One Session per file (history of ChatHistoryItem); no message times: the "
            "index's dateCreated, else the file's mtime."
        ),
        upstream="continuedev/continue core/index.d.ts, core/util/paths.ts",
        times="partly file-mtime",
    ),
    StoreRow(
        agent="continue",
        store="continue.index",
        holds="index",
        format="json",
        root="continue",
        patterns=("sessions/sessions.json",),
        parser="continue.sessions_index.v1",
        env=_ENV,
        locations=_LOC,
        description="Session list (titles, dateCreated, plain-path workspace); no records.",
    ),
)

AGENT = Agent(
    id="continue",
    name="Continue",
    rows=ROWS,
    parsers={
        "continue.session_json.v1": "agentdex.parsers.continue_",
        "continue.sessions_index.v1": "agentdex.parsers.continue_",
    },
    roots={"continue": RootSpec(paths=("~/.continue",), env=_ENV)},
    resume=ResumeRow(
        agent="continue",
        note="Continue sessions are reopened from the extension's session history (the `cn` "
        "CLI resumes only its last session).",
    ),
)
