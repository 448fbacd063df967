"""Benchmark: resolve time of a synthetic workspace and live-update latency.

Run from the worktree root:  PYTHONPATH=src python bench/context_resolve.py
Builds everything in a temporary directory (HOME included); reads nothing else.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path


def build(root: Path, dirs: int, files: int, skipped: int) -> None:
    for i in range(dirs):
        d = root / f"pkg{i // 100}" / f"mod{i % 100}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "code.py").write_text("x = 1\n")
        if i < files:
            (d / "AGENTS.md").write_text(f"# Module {i}\n" + "rule\n" * 50)
    for i in range(skipped):
        (root / "node_modules" / f"dep{i}" / "lib").mkdir(parents=True, exist_ok=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HOME"] = str(Path(tmp) / "home")
        os.environ["AGENTDEX_DATA_DIR"] = str(Path(tmp) / "data")
        os.environ["AGENTDEX_CONFIG"] = str(Path(tmp) / "config.toml")
        from agentdex.api import context as api

        ws = Path(tmp) / "ws"
        build(ws, dirs=2000, files=400, skipped=5000)
        times = []
        for _ in range(5):
            start = time.perf_counter()
            snap = api.snapshot(str(ws))
            times.append(time.perf_counter() - start)
        print(
            f"resolve: 2000 dirs, 400 AGENTS.md, 5000 skipped node_modules dirs: "
            f"median {statistics.median(times) * 1000:.0f} ms "
            f"({snap['resource_count']} resources, {snap['total_payload_bytes']} bytes)"
        )

        latencies = []
        with api.watch(str(ws)) as live:  # default 250 ms debounce
            for i in range(5):
                version = live.version
                start = time.perf_counter()
                (ws / "pkg0" / "mod0" / "AGENTS.md").write_text(f"# edit {i}\n")
                got = live.wait(version, timeout=10)
                assert got is not None
                latencies.append(time.perf_counter() - start)
        print(
            f"live update (write -> new version, 250 ms debounce, same tree): "
            f"median {statistics.median(latencies) * 1000:.0f} ms, "
            f"max {max(latencies) * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
