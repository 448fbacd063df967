"""``agentdex serve``: loopback by default, token 0600, a real process on a free port."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agentdex.cli.serve import is_loopback
from context_helpers import SRC, write


def test_is_loopback() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "192.168.1.10", "::", "example.invalid"]))


def test_non_loopback_host_is_refused(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("serve", "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 2
    assert "--allow-remote" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.serial
def test_serve_real_process(tmp_path: Path) -> None:
    ws = (tmp_path / "ws").resolve()
    write(ws / "AGENTS.md", "# Served\n")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentdex",
            "serve",
            "--port",
            "0",
            "--json",
            "--workspace",
            str(ws),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        assert info["url"].startswith("http://127.0.0.1:")
        token_file = Path(info["token_path"])
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert token_file.read_text().strip() == info["token"]
        headers = {"Authorization": f"Bearer {info['token']}"}
        with httpx.Client(base_url=info["url"], timeout=10) as client:
            response = client.get("/api/v0/context/snapshot", headers=headers)
            assert response.status_code == 200
            assert response.json()["resources"][0]["source"] == str(ws / "AGENTS.md")
            assert client.get("/api/v0/context/snapshot").status_code == 401
            assert client.get("/openapi.json").json()["paths"]
            # DNS rebinding: a page at evil.example resolving to 127.0.0.1 gets nothing
            rebound = client.get(
                "/api/v0/context/snapshot", headers={**headers, "Host": "evil.example"}
            )
            assert rebound.status_code == 421 and rebound.json()["error"] == "MISDIRECTED"
            assert client.get("/openapi.json", headers={"Host": "evil.example"}).status_code == 421
            port = info["url"].rsplit(":", 1)[1]
            local = client.get(
                "/api/v0/context/snapshot", headers={**headers, "Host": f"localhost:{port}"}
            )
            assert local.status_code == 200
            with client.stream(
                "GET", "/api/v0/context/events", headers=headers, params={"max_events": 1}
            ) as stream:
                body = "".join(stream.iter_text())
            assert "event: snapshot" in body
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_gate_checks_the_host_only_when_bound_to_loopback() -> None:
    from fastapi.testclient import TestClient

    from agentdex.http.app import create_app

    auth = {"Authorization": "Bearer t0ken"}
    for loopback_only, testserver_status in ((True, 421), (False, 200)):
        app = create_app(token="t0ken", loopback_only=loopback_only)
        client = TestClient(app, base_url="http://testserver")
        assert client.get("/api/v0/sources", headers=auth).status_code == testserver_status
        local = TestClient(app, base_url="http://127.0.0.1:8765")
        assert local.get("/api/v0/sources", headers=auth).status_code == 200
        assert local.get("/api/v0/sources").status_code == 401  # the token still applies
        ipv6 = TestClient(app, base_url="http://[::1]:8765")
        assert ipv6.get("/api/v0/sources", headers=auth).status_code == 200
