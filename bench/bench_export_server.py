"""Memory of a real ``agentdex serve`` while 10 clients export a 50 MB conversation at once.

Issue 22's bench: builds one long Claude Code conversation (``--mb`` of
JSONL, default 50: prompts, Markdown replies with code, tool calls and
results, one planted AWS key) in a temporary home, indexes it, starts
``agentdex serve --port 0`` on 127.0.0.1 (its own token, ``--src`` code;
``--max-exports`` sets how many exports it renders at once), then runs
``--rounds`` rounds of ``--clients`` concurrent
``GET /api/v0/export/<id>?format=<fmt>`` requests with the token (a client
answered 429 waits its ``Retry-After`` and asks again, as a real one would). The
server's resident memory is sampled from ``/proc/<pid>/status`` every 20 ms
(and its ``VmHWM``, the kernel's own peak, is read at the end); after each
round the bench waits ``--settle`` seconds and reads ``VmRSS`` again
("after"). Every client reads its body in 64 KB pieces and keeps only its
size and SHA-256: all bodies must be identical, the planted key must not be
in them (masked at index time, ``[privacy] redact``), and a request without
the token must get 401. The server is stopped and the home removed at the
end, whatever happens; only 127.0.0.1 is ever contacted.

    python bench/bench_export_server.py                    # this checkout
    python bench/bench_export_server.py --src /tmp/old/src # another one
    python bench/bench_export_server.py --max-exports 10   # no queue for 10 clients

The server's idle embedding fill is off (``AGENTDEX_BACKGROUND_EMBED=0``):
it would compete for the same memory and cores. Not a test: the numbers
depend on the machine (docs/performance.md, docs/security.md).
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
SESSION = "50500000-1111-4222-8333-444455556666"
#: an AWS access key id in the shape the detector knows (never a real one)
PLANTED = "AKIA" + "Q3MZ7BENCH2X4R8W"
MASKED = b"[REDACTED:aws-access-key-id]"
#: the Retry-After of every 429 the clients were answered (then waited and asked again)
BUSY: list[int] = []
WORDS = tuple(
    [
        "retry",
        "config",
        "parser",
        "index",
        "export",
        "stream",
        "memory",
        "server",
        "token",
        "budget",
        "record",
        "conversation",
        "archive",
        "worker",
        "thread",
        "client",
        "request",
        "response",
        "header",
        "chunk",
    ]
)


def _prose(rng: random.Random, size: int) -> str:
    """About ``size`` characters of words, ten to a line."""
    words = rng.choices(WORDS, k=max(1, size // 7))
    return "\n".join(" ".join(words[at : at + 10]) for at in range(0, len(words), 10))


def _said(role: str, content: Any) -> dict[str, Any]:
    return {"role": role, "content": content}


def write_conversation(home: Path, megabytes: float) -> Path:
    """One Claude Code transcript of about ``megabytes`` MB under ``home``."""
    project = home / "work" / "shop"
    project.mkdir(parents=True)
    folder = home / ".claude" / "projects" / "-work-shop"
    folder.mkdir(parents=True)
    path = folder / f"{SESSION}.jsonl"
    rng = random.Random(22)
    target = int(megabytes * 1_000_000)
    written = 0
    index = 0
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            stamp = (
                f"2026-11-20T{10 + index // 3600 % 10:02d}:{index // 60 % 60:02d}:{index % 60:02d}Z"
            )
            base = {"sessionId": SESSION, "cwd": str(project), "timestamp": stamp}
            base["uuid"] = f"u{index}"
            step = index % 4
            line: dict[str, Any]
            if step == 0:
                text = f"step {index}: " + _prose(rng, 300)
                if index == 400:
                    text += f"\nuse aws_access_key_id = {PLANTED} for the upload"
                line = {**base, "type": "user", "message": {"role": "user", "content": text}}
            elif step == 1:
                call = {
                    "type": "tool_use",
                    "id": f"t{index}",
                    "name": "Bash",
                    "input": {"command": f"pytest -q tests/test_{index}.py"},
                }
                content = [{"type": "text", "text": _prose(rng, 1500)}, call]
                line = {
                    **base,
                    "type": "assistant",
                    "message": {"role": "assistant", "content": content},
                }
            elif step == 2:
                result = {"type": "tool_result", "tool_use_id": f"t{index - 1}"}
                result["content"] = _prose(rng, 4000)
                line = {**base, "type": "user", "message": {"role": "user", "content": [result]}}
            else:
                reply = (
                    "## Done\n\n```python\n" + _prose(rng, 800) + "\n```\n\n" + _prose(rng, 1500)
                )
                line = {
                    **base,
                    "type": "assistant",
                    "message": {"role": "assistant", "content": reply},
                }
            data = json.dumps(line) + "\n"
            out.write(data)
            written += len(data.encode("utf-8"))
            index += 1
    return path


def _status(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of ``pid``, in bytes."""
    values: dict[str, int] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for row in status:
            name, _, rest = row.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[name] = int(rest.split()[0]) * 1024
    return values


class Sampler(threading.Thread):
    """The highest ``VmRSS`` of ``pid`` seen since the last :meth:`reset`."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.02):
            try:
                self.peak = max(self.peak, _status(self.pid)["VmRSS"])
            except OSError:
                return

    def reset(self) -> None:
        self.peak = _status(self.pid)["VmRSS"]


def fetch(url: str, path: str, token: str | None) -> tuple[int, int, str]:
    """GET ``path`` from the server at ``url``: status, body bytes, body SHA-256."""
    parts = urlsplit(url)
    assert parts.hostname == "127.0.0.1", url  # loopback only
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        digest = hashlib.sha256()
        size = 0
        planted = masked = False
        tail = b""
        while piece := response.read(65536):
            planted = planted or PLANTED.encode() in tail + piece
            masked = masked or MASKED in tail + piece
            tail = piece[-64:]
            digest.update(piece)
            size += len(piece)
        if planted:
            raise SystemExit("the planted key came out of an export: redaction failed")
        if response.status == 200 and path.startswith("/api/v0/export/") and not masked:
            raise SystemExit(f"no {MASKED.decode()} in the export: where did the key go?")
        if response.status == 429:  # busy: a real client waits as told and asks again
            return 429, int(response.getheader("Retry-After") or "1"), ""
        return response.status, size, digest.hexdigest()
    finally:
        connection.close()


def at_once(clients: int, url: str, route: str, token: str) -> list[tuple[int, int, str]]:
    """``clients`` requests of ``route`` at once, each on its own thread and connection."""
    results: list[tuple[int, int, str]] = []
    lock = threading.Lock()

    def client() -> None:
        for _ in range(100):
            answer = fetch(url, route, token)
            if answer[0] != 429:
                break
            with lock:
                BUSY.append(answer[1])
            time.sleep(answer[1])
        with lock:
            results.append(answer)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def child_env(home: Path, src: Path) -> dict[str, str]:
    """A clean environment: nothing of the caller's (no agent folder, no data dir) leaks in."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "AGENTDEX_DATA_DIR": str(home / ".local/share/agentdex"),
        "AGENTDEX_CONFIG": str(home / ".config/agentdex/config.toml"),
        "AGENTDEX_BACKGROUND_EMBED": "0",
        "AGENTDEX_BACKGROUND_BUILD": "0",
        "AGENTDEX_WSL": "0",
        "AGENTDEX_PLUGINS": "0",
        "PYTHONPATH": str(src),
    }


def run(args: argparse.Namespace) -> int:
    mib = 1024 * 1024
    scratch = Path(tempfile.mkdtemp(prefix="agentdex-bench-export-"))
    proc: subprocess.Popen[str] | None = None
    try:
        home = scratch / "home"
        path = write_conversation(home, args.mb)
        config = home / ".config" / "agentdex" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text("# the defaults: [privacy] redact = true\n", encoding="utf-8")
        env = child_env(home, args.src.resolve())
        if args.max_exports is not None:
            env["AGENTDEX_MAX_EXPORTS"] = str(args.max_exports)
        print(f"conversation: {path.stat().st_size / 1e6:.1f} MB of JSONL", flush=True)
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "agentdex", "index", "--json"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"indexed in {time.perf_counter() - started:.1f} s", flush=True)
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentdex", "serve", "--port", "0", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=home,
        )
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        url, token, pid = info["url"], info["token"], proc.pid
        route = f"/api/v0/export/{SESSION}?format={args.format}"
        status, _, _ = fetch(url, route, None)
        if status != 401:
            raise SystemExit(f"an export without the token answered {status}, not 401")
        status, _, _ = fetch(url, "/api/v0/limits", token)
        idle = _status(pid)["VmRSS"]
        print(f"server pid {pid} at {url}: idle {idle / mib:.0f} MiB (401 without the token)")
        sampler = Sampler(pid)
        sampler.start()
        rounds: list[dict[str, float]] = []
        for number in range(1, args.rounds + 1):
            sampler.reset()
            BUSY.clear()
            began = time.perf_counter()
            results = at_once(args.clients, url, route, token)
            took = time.perf_counter() - began
            peak = sampler.peak
            time.sleep(args.settle)
            after = _status(pid)["VmRSS"]
            statuses = {status for status, _, _ in results}
            bodies = {(size, digest) for _, size, digest in results}
            if statuses != {200} or len(bodies) != 1 or len(results) != args.clients:
                raise SystemExit(f"round {number}: statuses {statuses}, {len(bodies)} bodies")
            size = next(iter(bodies))[0]
            print(
                f"round {number}: {args.clients} exports of {size / 1e6:.1f} MB ({args.format})"
                f" in {took:.1f} s; server RSS peak {peak / mib:.0f} MiB,"
                f" after {after / mib:.0f} MiB ({args.settle:g} s later);"
                f" {len(BUSY)} answers 429 (the client waited, asked again)",
                flush=True,
            )
            rounds.append(
                {"peak": peak, "after": after, "seconds": took, "bytes": size, "busy": len(BUSY)}
            )
        sampler.stop.set()
        hwm = _status(pid)["VmHWM"]
        peaks = [r["peak"] for r in rounds]
        afters = [r["after"] for r in rounds]
        print(
            f"summary ({args.rounds} rounds of {args.clients}, src {args.src}):"
            f" idle {idle / mib:.0f} MiB, peak median {statistics.median(peaks) / mib:.0f} MiB"
            f" (max {max(peaks) / mib:.0f}, VmHWM {hwm / mib:.0f}),"
            f" after median {statistics.median(afters) / mib:.0f} MiB"
            f" (last {afters[-1] / mib:.0f}),"
            f" round time median {statistics.median(r['seconds'] for r in rounds):.1f} s"
        )
        if args.json:
            summary = {"idle": idle, "hwm": hwm, "rounds": rounds, "src": str(args.src)}
            print(json.dumps(summary))
        return 0
    finally:
        if proc is not None:
            proc.terminate()
            with suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=15)
            proc.kill()  # nothing when it has ended
            proc.wait(timeout=5)
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50, help="conversation size (JSONL MB)")
    parser.add_argument("--clients", type=int, default=10, help="exports at once")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--format", choices=("md", "html", "json"), default="md")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds before 'after'")
    parser.add_argument("--src", type=Path, default=REPO / "src", help="code the server runs")
    parser.add_argument(
        "--max-exports", type=int, help="the server's AGENTDEX_MAX_EXPORTS (default: its own)"
    )
    parser.add_argument("--json", action="store_true", help="also print the numbers as JSON")
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
