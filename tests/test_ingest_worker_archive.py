"""Parse workers prepare the archive's part of each record (its key, a prompt's source line,
read and masked) so the writer need not: the archive they give is the one the writer
alone gives, and a prompt's kept line is masked either way."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import CliResult

SESSION = "5ec2e700-3333-4222-8333-444455556666"
TOKEN = "gh" + "p_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def _line(kind: str, uuid: str, text: str, home: Path, minute: int) -> dict[str, object]:
    return {
        "type": kind,
        "sessionId": SESSION,
        "cwd": str(home),
        "timestamp": f"2026-11-20T10:{minute:02d}:00Z",
        "uuid": uuid,
        "message": {"role": kind, "content": text},
    }


def _write(home: Path) -> None:
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    lines = [
        _line("user", "u1", f"deploy with {TOKEN} please", home, 0),
        _line("assistant", "a1", "done, the wombat is deployed", home, 1),
        _line("user", "u2", "and a second prompt about numbats", home, 2),
    ]
    path = folder / f"{SESSION}.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    # a forked copy of the first exchange: the same records, archived once
    (folder / "fork.jsonl").write_text("\n".join(json.dumps(line) for line in lines[:2]) + "\n")


def _archive(run_cli: Callable[..., CliResult], data: Path, out: Path, workers: str) -> list[Any]:
    env = {
        "AGENTDEX_DATA_DIR": str(data),
        "AGENTDEX_INDEX_WORKERS": workers,
        "AGENTDEX_INDEX_PARALLEL_MIN_BYTES": "0",  # workers even for this small home
    }
    indexed = run_cli("index", "--json", env=env)
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["refresh"]["workers"] == int(workers)
    exported = run_cli("archive", "export", "-o", str(out), env=env)
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for row in rows:
        row.pop("archived_at", None)  # when it was archived: differs between the two runs
    return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True))


def test_workers_give_the_archive_the_writer_gives(
    home: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    _write(home)
    by_workers = _archive(run_cli, tmp_path / "w", tmp_path / "w.jsonl", "2")
    by_writer = _archive(run_cli, tmp_path / "s", tmp_path / "s.jsonl", "0")
    assert by_workers == by_writer
    assert len(by_workers) == 3  # the fork's copies are archived once
    prompts = [row for row in by_workers if row.get("raw")]
    assert len(prompts) == 2
    masked = next(row for row in prompts if "deploy" in row["text"])
    assert "[REDACTED:github-token]" in masked["raw"] and TOKEN not in masked["raw"]
    assert json.loads(masked["raw"])["uuid"] == "u1"  # the line the agent wrote, masked
    assert TOKEN not in (tmp_path / "w.jsonl").read_text()
