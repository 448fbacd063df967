"""Authentication before work, bounded bodies, one header rule, slow clients cut off.

In-process checks use the real app (``TestClient``); the memory and
slow-connection checks run real servers on 127.0.0.1 and stop by themselves.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from agentdex.asgi import build_app
from agentdex.http.auth import MAX_BODY_BYTES, AuthGate, authorized, token_matches
from agentdex.http.connections import protocol_class
from hardening_support import served

TOKEN = "t0ken-for-tests"
GOOD = {"Authorization": f"Bearer {TOKEN}"}
#: a route of every kind: GET, POST with a JSON body, the MCP endpoint
PROTECTED = (
    ("GET", "/api/v0/context/sources"),
    ("POST", "/api/v0/context/sources"),
    ("POST", "/api/v0/sessions"),
    ("GET", "/api/v0/search?q=x"),
    ("POST", "/mcp"),
)


@pytest.fixture
def client(home: Path) -> Iterator[TestClient]:
    with TestClient(build_app(TOKEN, home=str(home), cwd=str(home))) as test_client:
        yield test_client


def test_token_comparison_takes_any_bytes() -> None:
    assert token_matches(TOKEN, f"Bearer {TOKEN}") and token_matches(TOKEN, f"bearer  {TOKEN} ")
    assert not token_matches(TOKEN, "Bearer été")  # non-ASCII: wrong, not an exception
    assert not token_matches(TOKEN, b"Bearer \xff\xfe")
    assert not token_matches("tökén", "Bearer tökén".encode("latin-1"))
    assert token_matches("tökén", "Bearer tökén")
    one = [(b"authorization", f"Bearer {TOKEN}".encode())]
    assert authorized(TOKEN, one)
    assert not authorized(TOKEN, one + one)  # two headers: refused whatever they say
    assert not authorized(TOKEN, [*one, (b"Authorization", b"Bearer wrong")])


def test_no_token_is_401_before_the_body_is_read(client: TestClient) -> None:
    for method, path in PROTECTED:
        answer = client.request(method, path, content=b"{not even json")
        assert answer.status_code == 401, (method, path, answer.text)
        assert answer.headers["www-authenticate"] == "Bearer"
        assert answer.json()["error"] == "UNAUTHORIZED"


def test_malformed_and_non_ascii_tokens_are_401_never_500(client: TestClient) -> None:
    bad_values = [
        "Bearer été".encode(),
        b"Bearer \xff\x00\x01",
        b"Bearer",
        b"Bearer ",
        b"\xe2\x98\x83",
        ("Bearer " + "x" * 8000).encode(),
        f"Basic {TOKEN}".encode(),
        TOKEN.encode(),
    ]
    for value in bad_values:
        for method, path in PROTECTED:
            answer = client.request(method, path, headers=[(b"authorization", value)])
            assert answer.status_code == 401, (value[:20], path, answer.text)


def test_two_authorization_headers_get_one_answer_everywhere(client: TestClient) -> None:
    right, wrong = f"Bearer {TOKEN}".encode(), b"Bearer wrong"
    for pair in ((right, wrong), (wrong, right), (right, right)):
        headers = [(b"authorization", value) for value in pair]
        for method, path in PROTECTED:
            answer = client.request(method, path, headers=headers)
            assert answer.status_code == 401, (pair, path)


def test_bodies_over_the_limit_are_413_on_every_route(client: TestClient) -> None:
    too_big = b"x" * (MAX_BODY_BYTES + 1)
    for method, path in PROTECTED:
        answer = client.request(method, path, content=too_big, headers=GOOD)
        assert answer.status_code == 413, (method, path)
        assert answer.json()["error"] == "TOO_LARGE"

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b"y" * 65536

    answer = client.post("/api/v0/sessions", content=chunks(), headers=GOOD)
    assert answer.status_code == 413
    fine = client.post("/api/v0/context/sources", json={"path": "/nonexistent/x"}, headers=GOOD)
    assert fine.status_code == 403  # within the limit the route itself answers (not allowed)


def test_interactive_docs_are_off_and_openapi_is_public(client: TestClient) -> None:
    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        assert client.get(path, headers=GOOD).status_code == 404
        assert client.get(path).status_code == 401
    schema = client.get("/openapi.json")
    assert schema.status_code == 200 and "/api/v0/search" in schema.json()["paths"]
    assert "cdn" not in schema.text.lower()


@contextmanager
def uvicorn_in_thread(app: Any, *, header_timeout: float) -> Iterator[int]:
    """A real uvicorn server on 127.0.0.1 with agentdex's connection limits; yields its port."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(
        app, log_level="critical", http=protocol_class(header_timeout), lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _closed_by_peer(conn: socket.socket) -> bool:
    try:
        return conn.recv(1024) == b""
    except (ConnectionResetError, TimeoutError):
        return False


async def _ok_app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def test_slow_headers_are_cut_off() -> None:
    with uvicorn_in_thread(_ok_app, header_timeout=1.0) as port:
        tricklers = []
        for _ in range(40):
            conn = socket.create_connection(("127.0.0.1", port), timeout=5)
            conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            tricklers.append(conn)
        for _ in range(3):  # a byte every half second: never a complete request
            time.sleep(0.5)
            for conn in tricklers:
                with suppress(OSError):
                    conn.sendall(b"X")
        time.sleep(0.5)
        assert all(_closed_by_peer(conn) for conn in tricklers)
        for conn in tricklers:
            conn.close()
        answer = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)  # others still served
        assert answer.status_code == 200 and answer.text == "ok"


def test_a_body_that_trickles_is_408() -> None:
    gate = AuthGate(_ok_app, TOKEN, body_timeout=1.0)
    with uvicorn_in_thread(gate, header_timeout=30.0) as port:
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)
        conn.sendall(
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
            + f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
            + b"0123456789"
        )
        started = time.monotonic()
        reply = conn.recv(4096)
        assert reply.startswith(b"HTTP/1.1 408"), reply
        assert time.monotonic() - started < 5
        conn.close()


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.serial
def test_an_unauthenticated_gigabyte_costs_the_server_nothing(home: Path) -> None:
    with served() as info:
        pid = info["pid"]
        port = int(info["url"].rsplit(":", 1)[1])
        before = _rss_kib(pid)
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)
        conn.sendall(
            b"POST /api/v0/context/sources HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n"
        )
        sent = 0
        chunk = b"x" * (1 << 20)
        try:
            while sent < 256 * (1 << 20):  # the server answers and closes long before
                conn.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        conn.settimeout(10)
        try:
            reply = conn.recv(4096)
        except OSError:
            reply = b""
        conn.close()
        assert sent < 256 * (1 << 20), "the server kept reading an unauthenticated body"
        if reply:
            assert reply.startswith(b"HTTP/1.1 401"), reply[:100]
        grown = _rss_kib(pid) - before
        assert grown < 32 * 1024, f"server grew by {grown} KiB"
        headers = {"Authorization": f"Bearer {info['token']}"}
        assert (
            httpx.get(f"{info['url']}/api/v0/context/sources", headers=headers).status_code == 200
        )


def test_ipv6_loopback_url_is_printed_once_bracketed() -> None:
    try:
        probe = socket.socket(socket.AF_INET6)
        probe.bind(("::1", 0))
        probe.close()
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    for host in ("[::1]", "::1"):
        with served("--host", host) as info:
            assert info["url"].startswith("http://[::1]:") and "[[" not in info["url"]
            assert httpx.get(info["openapi"], timeout=10).status_code == 200
