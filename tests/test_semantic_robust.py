"""Search by meaning under bad conditions: no network, a missing or altered model, odd
queries, a kill in the middle of embedding, a full disk; and lexical stays light."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hardening_support import child_env
from semantic_support import PHOTOS, slow_fill, write_history


def _semantic_db(home: Path) -> Path:
    return next((home.parent / "agentdex-data").rglob("semantic")) / "vectors.db"


def test_embedding_runs_with_no_network_at_all(tmp_path: Path) -> None:
    """In a network namespace with no interface but loopback down: nothing can be fetched."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("unshare -n is not permitted here (needs root or user namespaces)")
    code = (
        "from agentdex.semantic.model import embedder\n"
        "v = embedder().embed(['the upstream service is throttling us'])\n"
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('192.0.2.1', 443), timeout=1)\n"
        "    print('network reachable')\n"
        "except OSError:\n"
        "    print('no network', v.shape)\n"
    )
    done = subprocess.run(
        [unshare, "-n", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no network (1, 384)"


def test_the_runtime_keeps_its_telemetry_off(tmp_path: Path) -> None:
    """onnxruntime >= 1.29 starts a telemetry uploader on Linux unless told not to: it
    writes a device id and an event cache under ``~/.cache/Microsoft`` at once, then
    looks up its collector host. agentdex turns it off, so neither file appears."""
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **child_env(),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "ORT_DISABLE_TELEMETRY": "0",  # agentdex decides, whatever the caller's env says
    }
    code = (
        "import os\n"
        "from agentdex.semantic.model import embedder\n"
        "v = embedder().embed(['the upstream service is throttling us'])\n"
        "print(v.shape, os.environ['ORT_DISABLE_TELEMETRY'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(1, 384) 1"
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert written == [], written


def test_help_and_lexical_search_never_load_the_runtime(home: Path) -> None:
    write_history(home)
    code = (
        "import atexit, sys, runpy\n"
        "atexit.register(lambda: print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers')"
        " if m in sys.modules), file=sys.stderr))\n"
        "sys.argv = ['agentdex'] + sys.argv[1:]\n"
        "runpy.run_module('agentdex', run_name='__main__')\n"
    )
    for args in (["--help"], ["search", "backoff", "--json"], ["search", "--lexical", "x"]):
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            env=child_env(),
            timeout=120,
            check=False,
        )
        assert done.stderr.strip().splitlines()[-1] == "[]", (args, done.stderr)


def test_a_missing_or_altered_model_is_one_line_and_lexical_keeps_working(
    home: Path, run_cli: Any, tmp_path: Path
) -> None:
    write_history(home)
    assert run_cli("index", "--semantic").returncode == 0
    from agentdex.semantic.model import model_file

    altered = tmp_path / "model.onnx"
    data = bytearray(model_file().read_bytes())
    data[len(data) // 2] ^= 0xFF
    altered.write_bytes(bytes(data))
    for path, reason in (
        (tmp_path / "absent.onnx", "embedding model not found at"),
        (altered, "does not match its pinned sha256"),
    ):
        env = {"AGENTDEX_MODEL_PATH": str(path)}
        hybrid = run_cli("search", "--json", "backoff", env=env)
        assert hybrid.returncode == 0, hybrid.stderr
        data_json = json.loads(hybrid.stdout)
        assert data_json["stats"]["search_mode"] == "lexical"
        assert reason in data_json["stats"]["warnings"][0]
        assert data_json["results"][0]["why"]["terms"] == ["backoff"]
        semantic = run_cli("search", "--semantic", "backoff", env=env)
        assert semantic.returncode == 1
        lines = semantic.stderr.strip().splitlines()
        assert len(lines) == 1 and reason in lines[0], semantic.stderr
        assert "Traceback" not in semantic.stderr
        doctor = json.loads(run_cli("doctor", "--json", env=env).stdout)
        assert reason in doctor["semantic"]["problem"]
        embed = run_cli("index", "--semantic", env=env)
        assert "Traceback" not in embed.stderr


@pytest.mark.parametrize(
    "query",
    [
        "дедлок при миграции базы",  # non-English
        "数据库 迁移 锁",
        "🔥🐛 deploy broke 💥",
        "a",
        "x" * 3900,  # near the query length limit
    ],
)
def test_odd_queries_answer_without_errors(home: Path, run_cli: Any, query: str) -> None:
    write_history(home)
    assert run_cli("index", "--semantic").returncode == 0
    for mode in ("--semantic", "--lexical", "--json"):
        done = run_cli("search", mode, "--json", query)
        assert done.returncode in (0, 1), done.stderr
        assert "Traceback" not in done.stderr
        json.loads(done.stdout)


def test_empty_and_huge_queries_are_usage_errors(home: Path, run_cli: Any) -> None:
    write_history(home)
    assert run_cli("index", "--semantic").returncode == 0
    huge = run_cli("search", "--semantic", "y" * 100_000)
    assert huge.returncode == 2
    assert huge.stderr.strip().splitlines() == [
        "agentdex: query too long (100000 characters; at most 4000)"
    ]
    assert run_cli("search", "--semantic", "").returncode == 2
    fields_only = json.loads(run_cli("search", "--semantic", "--json", "agent:codex").stdout)
    assert fields_only["results"] == []
    assert fields_only["stats"]["notes"] == ["nothing to search by meaning: the query has no words"]


def test_a_killed_fill_resumes_where_it_stopped(home: Path, run_cli: Any) -> None:
    write_history(home)
    assert run_cli("index").returncode == 0
    # batches of 2 records, a pause after each: the kill lands between commits
    proc = slow_fill(2, 0.5)
    assert proc.stdout is not None
    done = 0
    deadline = time.monotonic() + 120
    while done < 4 and time.monotonic() < deadline:
        done = int(proc.stdout.readline() or 0)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert 4 <= done < 12
    db = sqlite3.connect(_semantic_db(home))
    kept = db.execute("SELECT count(*) FROM members").fetchone()[0]
    db.close()
    assert kept >= 4
    again = json.loads(run_cli("index", "--semantic", "--json").stdout)["semantic"]
    assert again["run"]["embedded_before"] == kept
    assert again["run"]["records_done"] == 12 - kept
    assert again["embedded"] == again["eligible"] == 12


def test_a_full_disk_while_writing_vectors_keeps_the_index_usable(home: Path, run_cli: Any) -> None:
    write_history(home)
    assert run_cli("index").returncode == 0
    # about 40 KB is free for vectors.db and its journal: the first batches fit, not all
    limited = subprocess.run(
        [
            "bash",
            "-c",
            'ulimit -f 40 && exec "$0" -c "$1"',
            sys.executable,
            "from agentdex.semantic import fill\nfill.BATCH = 1\n"
            "import sys\nfrom agentdex.cli import main\n"
            "sys.argv = ['agentdex', 'index', '--semantic']\nmain()\n",
        ],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=180,
        check=False,
    )
    assert limited.returncode == 1, limited.stderr
    lines = limited.stderr.strip().splitlines()
    assert len(lines) == 1, limited.stderr
    assert lines[0].startswith("agentdex: "), lines
    assert lines[0].endswith(
        " while writing vectors; the embeddings committed so far are kept"
        " and lexical search is unaffected"
    ), lines
    lexical = json.loads(run_cli("search", "--json", "exif_transpose").stdout)
    assert lexical["results"][0]["session_id"] == PHOTOS
    again = json.loads(run_cli("index", "--semantic", "--json").stdout)["semantic"]
    assert again["embedded"] == again["eligible"] == 12
    semantic = json.loads(
        run_cli("search", "--semantic", "--json", "pictures rotated wrongly").stdout
    )
    assert semantic["results"][0]["session_id"] == PHOTOS
    assert os.path.getsize(_semantic_db(home)) > 0
