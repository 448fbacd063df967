"""Exports are streamed: read and rendered a record at a time, written as they go.

The same bytes as the whole document (JSON is checked against one ``orjson.dumps``
of the whole export, Markdown against ``rstrip`` of the joined chunks), nothing
read back before the header is out, memory that does not follow the
conversation's size (``tracemalloc`` over an export of a 6 MB conversation), the
temporary spool never named in a folder, and the HTTP route streaming with its
headers and errors decided before the first byte.
"""

from __future__ import annotations

import gc
import io
import json
import os
import random
import tempfile
import threading
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest
from fastapi.testclient import TestClient

from agentdex.api import export as api
from agentdex.api import export_render, gather
from agentdex.cli import export as cli_export
from agentdex.http.app import create_app
from test_resume import CLAUDE

AUTH = {"Authorization": "Bearer t0ken"}
BIG = "5e55e55e-1111-4222-8333-444455556666"


def _big_conversation(home: Path, records: int, text_bytes: int) -> int:
    """A Claude Code transcript of ``records`` messages of ``text_bytes`` each; its size."""
    project = home / "work" / "shop"
    project.mkdir(parents=True, exist_ok=True)
    slug = home / ".claude/projects/-work-shop"
    slug.mkdir(parents=True, exist_ok=True)
    rng = random.Random(5)
    words = ["retry", "config", "the", "parser", "index", "export", "stream", "memory"]
    path = slug / f"{BIG}.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for index in range(records):
            role = "user" if index % 2 == 0 else "assistant"
            text = " ".join(rng.choice(words) for _ in range(text_bytes // 6))[:text_bytes]
            line = {
                "type": role,
                "sessionId": BIG,
                "cwd": str(project),
                "timestamp": f"2026-11-20T10:{index // 60 % 60:02d}:{index % 60:02d}Z",
                "uuid": f"u{index}",
                "message": {"role": role, "content": f"{index}: {text}"},
            }
            out.write(json.dumps(line) + "\n")
    return path.stat().st_size


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_chunks_are_the_whole_document(rendered_sample: Path, fmt: str) -> None:
    home = str(rendered_sample)
    whole = api.conversation(CLAUDE, home)
    with api.open_export(CLAUDE, home, format=fmt) as stream:
        chunks = list(stream.chunks())
    assert len(chunks) > len(whole["records"])  # a chunk (at least) per record
    document = "".join(chunks)
    if fmt == "json":
        assert document == orjson.dumps(whole, option=orjson.OPT_INDENT_2).decode() + "\n"
    elif fmt == "md":
        assert document == export_render.markdown(whole)
        assert document.endswith("\n") and not document.endswith("\n\n")
    else:
        assert document == export_render.html(whole)


def test_json_chunks_of_no_record_are_orjson() -> None:
    header = {"agent": "x", "counts": {}, "redaction": None}
    document = "".join(export_render.json_chunks(header, iter([])))
    expected = orjson.dumps({**header, "records": []}, option=orjson.OPT_INDENT_2)
    assert document == expected.decode() + "\n"


@pytest.mark.parametrize("seed", range(20))
def test_rstripped_chunks_are_the_rstripped_document(seed: int) -> None:
    rng = random.Random(seed)
    pieces = ["a", " ", "\n", "\t", "b c", "\r\n", "", "  x  ", "\u3000"]
    chunks = ["".join(rng.choices(pieces, k=rng.randint(0, 4))) for _ in range(12)]
    assert "".join(export_render._rstripped(chunks)) == "".join(chunks).rstrip() + "\n"


def test_the_header_goes_out_before_any_record_is_read_back(
    rendered_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    real = gather.Spool.get
    monkeypatch.setattr(
        gather.Spool, "get", lambda self, at, size: reads.append(at) or real(self, at, size)
    )
    with api.open_export(CLAUDE, str(rendered_sample), format="md") as stream:
        reads.clear()  # (the title may read the first prompt back)
        chunks = stream.chunks()
        assert next(chunks).startswith("# ") and reads == []
        next(chunks)
        assert len(reads) == 1  # one record read, one rendered
        rest = list(chunks)
    assert len(reads) == len(stream.gathered.entries) and rest


def test_memory_does_not_follow_the_conversation(home: Path) -> None:
    size = _big_conversation(home, records=1200, text_bytes=5000)
    assert size > 6_000_000

    def export() -> int:
        with api.open_export(BIG, str(home), format="md") as stream:
            return sum(len(chunk) for chunk in stream.chunks())

    export()  # once first: the modules an export imports are not its memory
    tracemalloc.start()
    try:
        written = export()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert written > 6_000_000
    # the whole document alone would be more than 6 MB (it was 31 MB at peak before the
    # export streamed); a record is 5 KB, its entry a few hundred bytes
    assert peak < size / 4, f"peak {peak} bytes for a {size}-byte conversation"


def test_the_spool_is_never_named_in_a_folder(
    rendered_sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool_dir = tmp_path / "spool"
    spool_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool_dir))
    with api.open_export(CLAUDE, str(rendered_sample), format="md") as stream:
        fd = stream.gathered.spool._file.fileno()
        assert stat_mode(fd) == 0o600
        assert list(spool_dir.iterdir()) == []  # O_TMPFILE, or unlinked at once
        "".join(stream.chunks())
    with pytest.raises(OSError):
        os.fstat(fd)  # closed with the stream


def stat_mode(fd: int) -> int:
    return os.fstat(fd).st_mode & 0o777


def test_a_failed_export_leaves_no_spool_open(
    rendered_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[gather.Spool] = []
    real = gather.Spool.__init__

    def spy(self: gather.Spool) -> None:
        real(self)
        opened.append(self)

    monkeypatch.setattr(gather.Spool, "__init__", spy)
    with pytest.raises(Exception, match="no record at line:9999"):
        api.open_export(f"{CLAUDE}@line:9999", str(rendered_sample))
    with pytest.raises(Exception, match="no conversation"):
        api.open_export("no-such-conversation", str(rendered_sample))
    assert opened and all(spool._file.closed for spool in opened)


def test_http_export_streams_with_headers_and_errors_first(home: Path) -> None:
    _big_conversation(home, records=300, text_bytes=2000)
    app = create_app(token="t0ken")
    app.state.home = str(home)
    client = TestClient(app)
    with client.stream("GET", f"/api/v0/export/{BIG}", headers=AUTH) as response:
        assert response.status_code == 200
        assert "content-length" not in response.headers  # streamed, not sized in advance
        assert response.headers["cache-control"] == "no-store"
        assert response.headers["content-disposition"].endswith(f'filename="claude-code-{BIG}.md"')
        pieces = list(response.iter_raw())
    body = b"".join(pieces).decode()
    assert body == api.export(BIG, str(home)).content
    missing = client.get(f"/api/v0/export/{BIG}@line:99999", headers=AUTH)
    assert missing.status_code == 404 and "no record at line:99999" in missing.text


def test_stdout_on_a_terminal_is_safe_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    monkeypatch.setattr("sys.stdout", out)
    cli_export._to_stdout(iter(["a\r", "\nb\x1b]52;c;eA==\x07", "\r"]))
    assert out.getvalue() == "a\nb^[]52;c;eA==^G^M"


@pytest.fixture
def one_slot(monkeypatch: pytest.MonkeyPatch) -> threading.BoundedSemaphore:
    """The server's export slots cut to one, with a short queue."""
    from agentdex.http import export_api as route

    slots = threading.BoundedSemaphore(1)
    monkeypatch.setattr(route, "_slots", slots)
    monkeypatch.setattr(route, "QUEUE_SECONDS", 0.2)
    return slots


def _free(slots: threading.BoundedSemaphore) -> bool:
    if not slots.acquire(blocking=False):
        return False
    slots.release()
    return True


def test_http_exports_take_a_slot_and_give_it_back(
    rendered_sample: Path, one_slot: threading.BoundedSemaphore
) -> None:
    app = create_app(token="t0ken")
    app.state.home = str(rendered_sample)
    client = TestClient(app)
    assert one_slot.acquire(blocking=False)  # another export is running
    busy = client.get(f"/api/v0/export/{CLAUDE}", headers=AUTH)
    assert busy.status_code == 429 and busy.json()["error"] == "BUSY"
    assert int(busy.headers["Retry-After"]) >= 1
    one_slot.release()
    done = client.get(f"/api/v0/export/{CLAUDE}", headers=AUTH)
    assert done.status_code == 200 and done.text == api.export(CLAUDE, str(rendered_sample)).content
    assert _free(one_slot)  # given back after the body
    missing = client.get("/api/v0/export/no-such-conversation", headers=AUTH)
    assert missing.status_code == 404 and _free(one_slot)  # and after an error
    unauthorised = client.get(f"/api/v0/export/{CLAUDE}")
    assert unauthorised.status_code == 401 and _free(one_slot)


def test_a_response_dropped_before_its_body_gives_the_slot_back(
    rendered_sample: Path, one_slot: threading.BoundedSemaphore
) -> None:
    """A client gone before the body started: the response is dropped unread."""
    from agentdex.http import export_api as route

    request = SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(home=str(rendered_sample))))
    response = route.export(request, CLAUDE, format="md", redact=False, download=False)  # type: ignore[arg-type]
    assert not _free(one_slot)  # held while the response waits to be sent
    del response
    gc.collect()
    assert _free(one_slot)


def _small_files() -> None:
    """In the child: files may not grow past 100 KB (a full temporary folder), and going
    past it is an error (EFBIG), not the SIGXFSZ that would kill the process."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))


@pytest.mark.parametrize("command", ["export", "show"])
def test_a_full_temporary_folder_is_a_one_line_error(home: Path, command: str) -> None:
    import subprocess
    import sys

    from conftest import SRC_DIR

    _big_conversation(home, records=100, text_bytes=5000)  # 500 KB: the spool outgrows it
    result = subprocess.run(
        [sys.executable, "-m", "agentdex", command, BIG],
        env=dict(os.environ, PYTHONPATH=str(SRC_DIR)),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_small_files,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("agentdex: cannot keep the conversation's records in")
    assert len(result.stderr.strip().splitlines()) == 1 and "TMPDIR" in result.stderr
