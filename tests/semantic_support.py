"""A small history for search by meaning: a few conversations a person would recall
in other words (the full labelled set is bench/semantic_set.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mcp_support import write_claude_session

THROTTLE = "5e3a0000-0000-4000-8000-000000000001"
MIGRATION = "5e3a0000-0000-4000-8000-000000000002"
DOCKER = "5e3a0000-0000-4000-8000-000000000003"
PHOTOS = "5e3a0000-0000-4000-8000-000000000004"
NOTES = "5e3a0000-0000-4000-8000-000000000005"
TWIN = "5e3a0000-0000-4000-8000-000000000006"
# a conversation whose messages say nothing of what it was about; its title does
TITLED = "5e3a0000-0000-4000-8000-0000000000aa"
TITLE = "Sourdough starter feeding schedule for the bakery"
TITLE_QUERY = "bread yeast culture timetable"

CONVERSATIONS: dict[str, list[tuple[str, str]]] = {
    THROTTLE: [
        ("user", "The billing sync job fails overnight with HTTP 429 from the payments provider."),
        (
            "assistant",
            "The provider answers 429 Too Many Requests with a Retry-After header and we retried"
            " in a tight loop. I added exponential backoff with jitter and honour Retry-After.",
        ),
    ],
    MIGRATION: [
        ("user", "Deploy hung on the migration adding fulfilled_at with a default to orders."),
        (
            "assistant",
            "ADD COLUMN with a volatile default rewrites the table under an exclusive lock. I"
            " split it: add the column nullable, backfill in batches, set lock_timeout.",
        ),
    ],
    DOCKER: [
        ("user", "Our container image is 2.3 GB and pulls take forever on the build agents."),
        (
            "assistant",
            "I switched to a multi-stage build and copy only dist/ into nginx:alpine; the image"
            " is now 48 MB.",
        ),
    ],
    PHOTOS: [
        ("user", "Photos taken with phones appear sideways after upload."),
        (
            "assistant",
            "Phones store an EXIF orientation tag; ImageOps.exif_transpose applies it before"
            " resizing.",
        ),
    ],
    NOTES: [
        ("user", "Add a nullable notes column to the orders table and expose it in the API."),
        ("assistant", "Migration 0042 adds orders.notes; the serializer accepts it."),
    ],
    TWIN: [
        # the same prompt as NOTES, word for word: one embedding serves both
        ("user", "Add a nullable notes column to the orders table and expose it in the API."),
        ("assistant", "Done, with a test for the PATCH endpoint."),
    ],
}


def write_history(home: Path) -> None:
    for n, (session, turns) in enumerate(CONVERSATIONS.items()):
        write_claude_session(
            home, session, home / "work" / f"p{n}", turns, start=f"2026-10-{n + 1:02d}T09:00"
        )


def write_titled(home: Path) -> Path:
    """TITLED: two turns that say nothing, then Claude's ``ai-title`` line with TITLE."""
    path = write_claude_session(
        home,
        TITLED,
        home / "work" / "titled",
        [("user", "ok, go ahead with what we agreed"), ("assistant", "Done, it is in place.")],
        start="2026-10-20T09:00",
    )
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"type": "ai-title", "sessionId": TITLED, "aiTitle": TITLE}) + "\n")
    return path


def slow_fill(batch: int, pause: float) -> subprocess.Popen[str]:
    """``embed_missing`` in a child process, ``batch`` records a commit and ``pause``
    seconds after each; it prints the records done so far (0 first) on stdout."""
    from hardening_support import child_env

    code = (
        "import time\n"
        "from agentdex.semantic import fill\n"
        f"fill.BATCH = {batch}\n"
        "from agentdex.api.semantic import embed_missing\n"
        "embed_missing(progress=lambda done, todo: "
        f"(print(done, flush=True), time.sleep({pause})))\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=child_env()
    )
