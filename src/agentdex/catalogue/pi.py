"""Pi coding agent (and its omp fork) sessions."""

from agentdex.catalogue.resume import resume_row
from agentdex.catalogue.schema import Agent, StoreRow

ROWS = (
    StoreRow(
        agent="pi",
        store="pi.sessions",
        holds="transcripts",
        format="jsonl",
        root="pi_agent",
        patterns=("sessions/*/*.jsonl", "sessions/*/*/*.jsonl"),
        parser="pi.session_jsonl.v1",
        env=("PI_CODING_AGENT_DIR",),
        locations={"linux": "~/.pi/agent (omp: ~/.omp/agent)", "macos": "~/.pi/agent"},
        description="Header {type:session, id, cwd}; message/compaction/branch_summary entries.",
    ),
)

AGENT = Agent(
    id="pi",
    rows=ROWS,
    parsers={
        "pi.session_jsonl.v1": "agentdex.parsers.pi",
    },
    resume=resume_row("pi"),
)
