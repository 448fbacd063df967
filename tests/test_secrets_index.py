"""Index-time redaction: switching it on masks what an older index and archive kept.

An archive written with ``[privacy] redact = false`` keeps a conversation
whose transcript is then deleted (so only the archive holds it, raw prompt
line included). Turning redaction on rebuilds the index with a message and
rewrites the archive once: no file under the data dir holds the secret any
more, and search, ``archive export`` and ``agentdex secrets`` show the label.
An index of the previous format is rebuilt with a message saying why.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from conftest import CliResult

SESSION = "5ec2e700-2222-4222-8333-444455556666"
TOKEN = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _write(home: Path) -> Path:
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    lines = [
        {"type": "ai-title", "sessionId": SESSION, "aiTitle": f"use {TOKEN}"},
        {
            "type": "user",
            "sessionId": SESSION,
            "cwd": str(home),
            "timestamp": "2026-11-20T10:00:00Z",
            "uuid": "u1",
            "message": {"role": "user", "content": f"my token is {TOKEN} keep it"},
        },
    ]
    path = folder / f"{SESSION}.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def _stored(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())


def test_turning_redaction_on_masks_the_index_and_the_archive(
    home: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    config = Path(os.environ["AGENTDEX_CONFIG"])
    data_dir = Path(os.environ["AGENTDEX_DATA_DIR"])
    config.write_text("[privacy]\nredact = false\n")
    source = _write(home)
    assert run_cli("index").returncode == 0
    assert TOKEN.encode() in _stored(data_dir)  # kept as is: the user's choice
    source.unlink()  # only the archive holds the conversation now
    assert run_cli("index").returncode == 0
    config.write_text("")
    indexed = run_cli("index")
    assert indexed.returncode == 0, indexed.stderr
    assert "[privacy] redact is now true" in indexed.stderr and "rebuilding" in indexed.stderr
    assert TOKEN.encode() not in _stored(data_dir)
    found = json.loads(run_cli("search", "token", "--json").stdout)
    [hit] = found["results"]
    assert hit["source_gone"] and "[REDACTED:github-token]" in hit["text"]
    out = tmp_path / "archive.jsonl"
    assert run_cli("archive", "export", "-o", str(out)).returncode == 0
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert "[REDACTED:github-token]" in row["raw"] and TOKEN not in out.read_text()
    json.loads(row["raw"])  # still the JSON line the agent wrote, masked
    listed = json.loads(run_cli("conversations", "--json").stdout)
    assert listed["conversations"][0]["title"] == "use [REDACTED:github-token]"
    secrets = json.loads(run_cli("secrets", "--json").stdout)
    assert [f["kind"] for f in secrets["findings"]] == ["github-token"]
    config.write_text("[privacy]\nredact = false\n")
    again = run_cli("index")
    assert "[privacy] redact is now false" in again.stderr
    assert TOKEN.encode() not in _stored(data_dir)  # masked for good in the archive


def test_an_index_of_the_previous_format_is_rebuilt_with_the_reason(
    home: Path, run_cli: Callable[..., CliResult]
) -> None:
    _write(home)
    assert run_cli("index").returncode == 0
    data_dir = Path(os.environ["AGENTDEX_DATA_DIR"])
    [db_path] = list(data_dir.rglob("gen-*/index.db"))
    with sqlite3.connect(db_path) as db:
        db.execute("UPDATE meta SET value = 'agentdex-index-3' WHERE key = 'format'")
    for manifest in data_dir.rglob("refresh-manifest.json"):
        manifest.unlink()  # an older agentdex's manifest has another fingerprint
    rebuilt = run_cli("index")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "written by an older agentdex (agentdex-index-3" in rebuilt.stderr
    assert "secrets in transcripts are now masked" in rebuilt.stderr
    assert TOKEN not in run_cli("search", "token", "--json").stdout
