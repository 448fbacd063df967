"""The resident embedder (semantic/resident.py): the model kept loaded between CLI searches.

Real processes over a real unix socket in the test's data dir; every test stops
the resident it started (and checks its process is gone), so nothing outlives
the test. conftest turns the resident off; these tests turn it on.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdex.semantic import sockets
from semantic_support import THROTTLE, write_history

QUERY = "where did we deal with the upstream service throttling us"


def _gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with contextlib.suppress(ChildProcessError):  # our own child: reap it
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    return False


@pytest.fixture
def resident(monkeypatch: pytest.MonkeyPatch, home: Path) -> Iterator[Any]:
    """The resident module with the embedder on; whatever it started is stopped after."""
    from agentdex.semantic import resident as module

    monkeypatch.setenv("AGENTDEX_RESIDENT_EMBEDDER", "1")
    monkeypatch.setenv("AGENTDEX_EMBEDDER_IDLE_SECONDS", "60")
    pids: list[int] = []
    module_status = module.status

    def status(*args: Any, **kwargs: Any) -> dict[str, Any]:
        info = module_status(*args, **kwargs)
        if info.get("pid"):
            pids.append(info["pid"])
        return info

    monkeypatch.setattr(module, "status", status)
    yield module
    info = module_status()
    if info.get("pid"):
        pids.append(info["pid"])
    module.stop()
    for pid in set(pids):
        if not _gone(pid, 15):
            os.kill(pid, 9)  # only the resident this test started
            pytest.fail(f"the resident {pid} did not exit when asked")


def test_resident_answers_the_same_vectors_from_a_private_socket(resident: Any) -> None:
    import numpy as np

    from agentdex.semantic.model import embedder

    texts = ["the upstream service is throttling us", "photos appear sideways"]
    vectors = resident.embed(texts)
    assert vectors is not None and vectors.shape == (2, 384)
    local = embedder().embed(texts)
    assert np.allclose(vectors, local, atol=1e-5)
    info = resident.status()
    assert info["running"] and info["requests"] == 1
    assert info["pid"] != os.getpid()
    assert 0 < info["rss_mb"] < 1000
    sock = Path(info["socket"])
    assert stat.S_ISSOCK(sock.stat().st_mode)
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    # a second call reuses it: no new process
    assert resident.embed(["again"]) is not None
    assert resident.status()["pid"] == info["pid"]
    assert resident.stop()
    assert _gone(info["pid"], 15)
    assert not sock.exists()
    assert resident.embed(["x"], start=False) is None  # nothing runs, none started


def test_resident_survives_garbage(resident: Any) -> None:
    assert resident.embed(["warm"]) is not None
    info = resident.status()
    for junk in (b"\xff\xff\xff\xffxx", b"\x00\x00\x00\x02[]", b"\x00\x00\x00\x03not"):
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        raw.settimeout(10)
        # through sockets.address as the client connects: a pytest tmp path plus the
        # socket name can pass the 108 bytes an AF_UNIX path may have
        with sockets.address(Path(info["socket"]).parent, Path(info["socket"]).name) as where:
            raw.connect(where)
        raw.sendall(junk)
        raw.shutdown(socket.SHUT_WR)
        try:
            answer = raw.recv(100)
        except ConnectionResetError:  # closed with our bytes unread
            answer = b""
        assert answer == b""  # dropped, nothing answered
        raw.close()
    bad = resident.connect(Path(info["socket"]).parent, Path(info["socket"]).name, 10)
    resident.send(bad, {"op": "embed", "model": "minilm-l6-v2-int8-dq", "texts": [1]})
    header, _ = resident.receive(bad)
    bad.close()
    assert header == {"ok": False, "error": "malformed embed request"}
    assert resident.embed(["still serving"]) is not None
    assert resident.status()["pid"] == info["pid"]


def test_resident_exits_when_idle(resident: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTDEX_EMBEDDER_IDLE_SECONDS", "1")
    assert resident.embed(["warm"]) is not None
    info = resident.status()
    if info["running"]:  # it may have left already on a slow machine
        assert info["idle_exit_seconds"] == 1
        assert _gone(info["pid"], 30)  # 1 s without a request: it leaves by itself
    assert not Path(info["socket"]).exists()
    assert resident.embed(["x"], start=False) is None


def test_a_corrupt_model_is_one_line_through_the_resident_too(
    resident: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.semantic.model import ModelUnavailable

    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a model")
    monkeypatch.setenv("AGENTDEX_MODEL_PATH", str(bad))
    with pytest.raises(ModelUnavailable) as caught:
        resident.embed(["x"])
    assert "does not match its pinned sha256" in caught.value.message
    assert "\n" not in caught.value.message
    # the resident that could not load the model does not stay
    deadline = time.monotonic() + 15
    while resident.status()["running"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not resident.status()["running"]


def test_cli_searches_share_one_resident(home: Path, run_cli: Any, resident: Any) -> None:
    write_history(home)
    assert run_cli("index", "--semantic", timeout=180).returncode == 0
    env = {"AGENTDEX_RESIDENT_EMBEDDER": "1"}
    first = run_cli("search", "--json", QUERY, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert data["stats"]["semantic"]["embedder"] == "resident"
    assert data["results"][0]["session_id"] == THROTTLE
    pid = resident.status()["pid"]
    second = json.loads(run_cli("search", "--json", QUERY, env=env).stdout)
    assert second["stats"]["semantic"]["embedder"] == "resident"
    assert resident.status()["pid"] == pid and resident.status()["requests"] == 2
    off_env = {"AGENTDEX_RESIDENT_EMBEDDER": "0"}
    off = json.loads(run_cli("search", "--json", QUERY, env=off_env).stdout)
    assert off["stats"]["semantic"]["embedder"] == "process"
    assert [r["ref"] for r in off["results"]] == [r["ref"] for r in second["results"]]
    doctor = json.loads(run_cli("doctor", "--json", env=env).stdout)["embedder"]
    assert doctor["running"] and doctor["pid"] == pid
    human = run_cli("doctor", env={**env, "COLUMNS": "200"})
    assert f"resident, pid {pid}" in human.stdout
    assert resident.stop()
    assert _gone(pid, 15)
    doctor = json.loads(run_cli("doctor", "--json", env=env).stdout)["embedder"]
    assert doctor["running"] is False


def test_resident_scans_a_vector_store_as_this_process_would(
    home: Path, run_cli: Any, resident: Any
) -> None:
    """``nearest``: the resident embeds the query and scans the store the client names;
    the same contents and cosines as a scan here. A fresh CLI search then never
    imports numpy (the vector half runs in the resident, beside the lexical half)."""
    from agentdex.index.store import Location, index_root
    from agentdex.semantic.model import embedder
    from agentdex.semantic.query import VectorIndex, best_rows

    write_history(home)
    assert run_cli("index", "--semantic", timeout=180).returncode == 0
    root = index_root(None)
    current = Location(root).current()
    assert current is not None
    light = VectorIndex.open(root, current.name, mapped=False)
    assert light is not None and light.rows is None and light.count > 0
    try:
        far = resident.nearest(QUERY, light.folder, light.vfile, light.count, 5)
        folder, vfile, count = light.folder, light.vfile, light.count
    finally:
        light.close()
    full = VectorIndex.open(root, current.name)
    assert full is not None and full.rows is not None
    try:
        local = best_rows(full.rows, embedder().embed([QUERY])[0], 5)
        local_near, local_members = full.records(local), full.members_count()
    finally:
        full.close()
    assert far is not None and list(far) == list(local)
    assert list(far.values()) == pytest.approx(list(local.values()), abs=1e-4)
    # ``records``: the same scan, then the records and titles holding what it found and
    # the member count, read by the resident (the search process opens no vector store)
    found = resident.records(QUERY, folder, current.name, 5)
    assert found is not None
    near, members = found
    assert members == local_members > 0
    assert [(n.rid, n.thash, n.ckey, n.title) for n in near] == [
        (n.rid, n.thash, n.ckey, n.title) for n in local_near
    ]
    assert [n.similarity for n in near] == pytest.approx(
        [n.similarity for n in local_near], abs=1e-4
    )
    assert resident.records(QUERY, folder, "gen-999999", 5) is None  # linked elsewhere
    assert resident.records(QUERY, folder.parent / "nowhere", current.name, 5) is None
    pid = resident.status()["pid"]
    # malformed requests and stores it cannot read are refused; it keeps serving
    base = {"op": "nearest", "model": "minilm-l6-v2-int8-dq", "text": QUERY, "top": 5}
    base |= {"store": str(folder), "vfile": vfile, "rows": count}
    for bad in (
        {"store": "relative/semantic"},
        {"vfile": "../../etc"},
        {"rows": -1},
        {"top": 0},
        {"text": 7},
        {"rows": count + 1_000},  # past the end of its files
    ):
        sock = resident.connect(resident.run_dir(), resident.socket_name(), 10)
        resident.send(sock, {**base, **bad})
        header, _ = resident.receive(sock)
        sock.close()
        assert header["ok"] is False, bad
    assert resident.nearest(QUERY, folder, vfile, count + 1_000, 5) is None
    asked = {"op": "records", "model": "minilm-l6-v2-int8-dq", "text": QUERY, "top": 5}
    asked |= {"store": str(folder), "generation": current.name}
    for bad in ({"store": "relative/semantic"}, {"generation": 3}, {"top": 0}, {"text": None}):
        sock = resident.connect(resident.run_dir(), resident.socket_name(), 10)
        resident.send(sock, {**asked, **bad})
        header, _ = resident.receive(sock)
        sock.close()
        assert header == {"ok": False, "error": "malformed records request"}, bad
    assert resident.nearest(QUERY, folder, vfile, count, 5) == pytest.approx(far, abs=1e-6)
    # a fresh CLI search asks the resident to scan and read the records: no numpy in
    # that process, and it never opens the vector store's SQLite
    probe = (
        "import runpy, sqlite3, sys\n"
        "opened = []\n"
        "connect = sqlite3.connect\n"
        "def spy(path, *a, **k):\n    opened.append(str(path))\n"
        "    return connect(path, *a, **k)\n"
        "sqlite3.connect = spy\n"
        f"sys.argv = ['agentdex', 'search', '--json', {QUERY!r}]\n"
        "try:\n    runpy.run_module('agentdex', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('vectors.db opened' if any(p.endswith('vectors.db') for p in opened)"
        " else 'no vectors.db', file=sys.stderr)\n"
        "print('numpy imported' if 'numpy' in sys.modules else 'no numpy', file=sys.stderr)\n"
    )
    env = {**os.environ, "AGENTDEX_RESIDENT_EMBEDDER": "1"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.stderr.strip().splitlines()[-2:] == ["no vectors.db", "no numpy"], done.stderr
    data = json.loads(done.stdout)
    assert data["stats"]["semantic"]["embedder"] == "resident"
    assert data["results"][0]["session_id"] == THROTTLE
    assert data["results"][0]["why"]["match"] in ("semantic", "both")
    assert resident.status()["pid"] == pid
