"""Roo Code stores: the VS Code extension's task folders (every edition, Cursor, WSL)."""

from agentdex.catalogue.cline import task_row
from agentdex.catalogue.resume import ResumeRow
from agentdex.catalogue.schema import Agent, RootSpec

ROWS = (
    task_row(
        "roo-code",
        "roo_tasks",
        "rooveterinaryinc.roo-cline",
        "Cline's task shape (Anthropic-style messages per task); cwd from the task's "
        "history_item.json (3.50+), else the environment details.",
        custom="the roo-cline.customStoragePath setting (VS Code user settings.json)",
    ),
)

AGENT = Agent(
    id="roo-code",
    name="Roo Code",
    rows=ROWS,
    parsers={"roo-code.api_history_json.v1": "agentdex.parsers.roo_code"},
    roots={
        "roo_tasks": RootSpec(
            resolver="agentdex.discovery.extension_roots:roo_tasks",
            env=("VSCODE_APPDATA",),
        )
    },
    resume=ResumeRow(
        agent="roo-code",
        note="Roo Code runs inside VS Code; a task is reopened from Roo Code's History view.",
    ),
)
