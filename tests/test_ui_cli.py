"""``agentdex ui`` as a real process: the login link, the browser it opens, the port it
falls back to, what it refuses."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO
from urllib.parse import unquote

import httpx
import pytest

from ui_support import SRC

pytestmark = pytest.mark.serial


@contextmanager
def running(*args: str, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    full_env = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentdex", "ui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
    )
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _line(stream: IO[str] | None) -> str:
    assert stream is not None
    return stream.readline()


def test_json_line_and_the_login_link_work_once(home: Path) -> None:
    with running("--no-open", "--port", "0", "--json") as proc:
        info = json.loads(_line(proc.stdout))
        assert info["url"].startswith("http://127.0.0.1:") and info["opened"] is False
        assert "token" not in info  # the link logs in; the token stays in its 0600 file
        token_file = Path(info["token_path"])
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        code = info["page"].split("#login=", 1)[1]
        with httpx.Client(base_url=info["url"], timeout=10) as client:
            assert client.get("/").status_code == 200
            first = client.post("/ui/login", json={"code": code})
            assert first.json() == {"token": token_file.read_text().strip()}
            assert client.post("/ui/login", json={"code": code}).status_code == 401


def test_human_output_prints_the_link_not_the_token(home: Path) -> None:
    with running("--no-open", "--port", "0") as proc:
        first, second = _line(proc.stdout), _line(proc.stdout)
        assert first.startswith("agentdex UI at http://127.0.0.1:")
        assert second.startswith("open: http://127.0.0.1:") and "#login=" in second
        more = _line(proc.stdout) + _line(proc.stdout)
        token = Path(more.split("stored in ")[1].split(")")[0]).read_text().strip()
        assert token not in first + second + more


def test_ref_opens_that_conversation(home: Path) -> None:
    ref = "3b5e9c2a@line:9"
    with running(ref, "--no-open", "--port", "0", "--json") as proc:
        page = json.loads(_line(proc.stdout))["page"]
        assert unquote(page.split("&next=", 1)[1]) == f"/c/{ref}"


def test_opens_the_default_browser(home: Path, tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o755)
    with running("--port", "0", "--json", env={"BROWSER": str(browser)}) as proc:
        info = json.loads(_line(proc.stdout))
        assert info["opened"] is True
        deadline = time.monotonic() + 20
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert opened.read_text().strip() == info["page"]


def test_a_taken_default_port_falls_back_an_explicit_one_fails(home: Path) -> None:
    blocker = socket.socket()
    try:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        taken = blocker.getsockname()[1]
        explicit = subprocess.run(
            [sys.executable, "-m", "agentdex", "ui", "--no-open", "--port", str(taken)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(SRC)},
            timeout=60,
        )
        assert explicit.returncode == 4 and "cannot bind" in explicit.stderr  # in use: conflict
        assert "Traceback" not in explicit.stderr
    finally:
        blocker.close()
    occupied = socket.socket()
    try:
        try:
            occupied.bind(("127.0.0.1", 8765))
            occupied.listen(1)
        except OSError:
            pass  # someone else holds 8765: the fallback is exercised all the same
        with running("--no-open", "--json") as proc:
            url = json.loads(_line(proc.stdout))["url"]
            assert not url.endswith(":8765")
    finally:
        occupied.close()


def test_non_loopback_host_is_refused(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("ui", "--host", "0.0.0.0", "--no-open")
    assert result.returncode == 2 and "--allow-remote" in result.stderr
