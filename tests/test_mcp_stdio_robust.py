"""MCP over stdio answers malformed lines as JSON-RPC 2.0 asks, and keeps going."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

from agentdex.mcp.stdio import INVALID_REQUEST, PARSE_ERROR, check_line
from hardening_support import child_env

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
#: (line, code, id in the answer)
MALFORMED: list[tuple[str, int, Any]] = [
    ("not json at all", PARSE_ERROR, None),
    ('{"jsonrpc": "2.0", "id": 1, "method": "ping"', PARSE_ERROR, None),
    ('[{"jsonrpc": "2.0", "id": 2, "method": "ping"}]', INVALID_REQUEST, None),
    ("[]", INVALID_REQUEST, None),
    ('{"id": 3, "method": "ping"}', INVALID_REQUEST, 3),
    ('{"jsonrpc": "1.0", "id": "four", "method": "ping"}', INVALID_REQUEST, "four"),
    ('{"jsonrpc": "2.0", "id": null, "method": "ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc": "2.0", "id": true, "method": "ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc": "2.0", "id": 6, "method": 7}', INVALID_REQUEST, 6),
    ('{"jsonrpc": "2.0", "id": 8}', INVALID_REQUEST, 8),
    ('"a string"', INVALID_REQUEST, None),
]


def test_check_line_accepts_what_mcp_sends() -> None:
    for good in (
        json.dumps(INIT),
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        '{"jsonrpc": "2.0", "id": "x", "result": {}}',
        '{"jsonrpc": "2.0", "id": 9, "error": {"code": 1, "message": "m"}}',
    ):
        assert check_line(good) is None, good
    for line, code, request_id in MALFORMED:
        problem = check_line(line)
        assert problem is not None and problem[0] == code and problem[2] == request_id, line


def test_stdio_answers_each_malformed_line_and_the_next_request() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentdex", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    timer = threading.Timer(60, proc.kill)  # a hang fails the test instead of the run
    timer.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None

        def send(line: str) -> None:
            assert proc.stdin is not None
            proc.stdin.write(line + "\n")
            proc.stdin.flush()

        def receive() -> dict[str, Any]:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line, "the server closed stdout"
            answer: dict[str, Any] = json.loads(line)
            return answer

        send(json.dumps(INIT))
        assert receive()["id"] == 0
        send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        for line, code, request_id in MALFORMED:
            send(line)
            send("")  # blank lines are skipped, not answered
            answer = receive()
            assert answer["jsonrpc"] == "2.0", line
            assert answer["error"]["code"] == code, (line, answer)
            assert answer["id"] == request_id, (line, answer)
            send(json.dumps({"jsonrpc": "2.0", "id": 100, "method": "ping"}))
            assert receive() == {"jsonrpc": "2.0", "id": 100, "result": {}}, line
        tools = {"jsonrpc": "2.0", "id": 101, "method": "tools/list"}
        send(json.dumps(tools))
        assert receive()["id"] == 101
    finally:
        timer.cancel()
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=20)
    assert proc.returncode == 0
    assert "Traceback" not in (proc.stderr.read() if proc.stderr else "")


def test_requests_sent_right_before_end_of_input_are_answered(run_cli: Any) -> None:
    lines = [json.dumps({"jsonrpc": "2.0", "id": n, "method": "bogus"}) for n in range(1, 6)]
    for _ in range(3):  # it used to lose the last answers some of the time
        done = run_cli("mcp", input="not json\n" + "\n".join(lines) + "\n", timeout=60)
        assert done.returncode == 0, done.stderr
        answers = [json.loads(line) for line in done.stdout.splitlines()]
        assert [a["id"] for a in answers] == [None, 1, 2, 3, 4, 5]
        assert [a["error"]["code"] for a in answers] == [PARSE_ERROR] + [-32601] * 5
