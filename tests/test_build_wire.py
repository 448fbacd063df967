"""The cold build's per-record shortcuts store what the plain way stores: the record a
parse worker sends (a plain tuple, the lower-cased bytes left out when they are the
postings text's UTF-8), a prompt's source line read a page first, and the archive of a
new machine looking up only keys its writer may have added."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdex.archive.writer import FIRST_READ, RAW_MAX, read_raw_line
from agentdex.index.segments import prepare
from agentdex.ingest.pipeline import ArchiveParts, from_wire
from agentdex.records import Record
from conftest import CliResult

TEXTS = [
    "Plain ASCII reply",
    "Ünïcödé and 한국어 text (its UTF-8 holds the byte 0xED)",
    "a lone surrogate \udcff in a transcript",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_record_sent_by_a_worker_is_the_record_prepared_here(text: str, tmp_path: Path) -> None:
    record = Record(
        agent="claude-code",
        store="claude-code.projects",
        session_id="s1",
        role="user",
        kind="prompt",
        timestamp=1767323045.5,
        text=text,
        locator="line:3",
        offset=-1,
        source_path=str(tmp_path / "none.jsonl"),
    )
    here = prepare(record)
    parts = ArchiveParts(str(tmp_path / "none.jsonl"), jsonl=False, redact=True)
    wire = parts.add_to(here)
    (sent,) = from_wire([wire])
    assert sent == here._replace(key=sent.key, raw=None)
    assert sent.key is not None
    assert (wire[1] is None) == (b"\xed" not in here.lower)
    assert sent.cols[3:] == (1767323045500, 3 << 1)  # whole ms and line:3 as integers


def test_a_prompt_line_longer_than_the_first_read_is_kept_whole(tmp_path: Path) -> None:
    short = json.dumps({"type": "user", "text": "hi"}).encode()
    long = json.dumps({"type": "user", "text": "x" * (FIRST_READ * 3)}).encode()
    too_long = json.dumps({"type": "user", "text": "y" * RAW_MAX}).encode()
    envelope = len(json.dumps({"type": "user", "text": ""}))
    exact = json.dumps({"type": "user", "text": "z" * (FIRST_READ - envelope)}).encode()
    assert len(exact) == FIRST_READ  # its line end is the first byte past the first read
    last = json.dumps({"type": "user", "text": "no line end"}).encode()
    lines = [short, long, too_long, exact, short]
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n" + last)
    fd = os.open(path, os.O_RDONLY)
    try:
        offset = 0
        for line in lines:
            got = read_raw_line(fd, offset, redact=False)
            assert got == (None if len(line) > RAW_MAX else line)
            offset += len(line) + 1
        assert read_raw_line(fd, offset, redact=False) == last
    finally:
        os.close(fd)


def _line(n: int, session: str) -> str:
    return json.dumps(
        {
            "type": "user" if n % 2 else "assistant",
            "sessionId": session,
            "cwd": "/work/app",
            "timestamp": f"2026-11-20T10:{n // 60 % 60:02d}:{n % 60:02d}Z",
            "uuid": f"u{n}",
            "message": {"role": "user" if n % 2 else "assistant", "content": f"message {n}"},
        }
    )


def test_a_new_archive_keeps_each_record_once_across_batches(
    home: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    session = "5ec2e700-3333-4222-8333-444455556677"
    lines = [_line(n, session) for n in range(1300)]  # past two archive batches (500)
    (folder / f"{session}.jsonl").write_text("\n".join(lines) + "\n")
    # copies of records already archived, in later batches (a fork, a repeated line)
    (folder / "fork.jsonl").write_text("\n".join(lines[:700] + lines[100:900]) + "\n")
    data = tmp_path / "data"
    indexed = run_cli("index", "--json", env={"AGENTDEX_DATA_DIR": str(data)})
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["refresh"]["records_added"] == 1300 + 1500
    (archive,) = data.glob("homes/*/index/archive/archive.db")
    with sqlite3.connect(archive) as db:
        entries, keys, ids = db.execute(
            "SELECT count(*), count(DISTINCT key), max(id) - min(id) + 1 FROM entries"
        ).fetchone()
    assert entries == keys == ids == 1300
