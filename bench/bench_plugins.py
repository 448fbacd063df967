#!/usr/bin/env python3
"""Start-up cost of the ``agentdex.agents`` door: median wall time of fresh processes.

Compares, with third-party plug-ins off (``AGENTDEX_PLUGINS=0``: the built-ins
only, no entry-point scan) and on (a scan of the installed distributions'
entry points, plus one plug-in installed in a temporary site folder the way
pip leaves a wheel): ``agentdex --help`` (never loads the catalogue), loading
the catalogue alone, and ``agentdex sources --no-check`` on an empty home.

    python bench/bench_plugins.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
EXAMPLE = REPO / "examples" / "plugin" / "agentdex_jotter.py"


def _site(base: Path) -> Path:
    site = base / "site"
    info = site / "agentdex_jotter-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: agentdex-jotter\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[agentdex.agents]\njotter = agentdex_jotter:AGENT\n")
    shutil.copy(EXAMPLE, site / "agentdex_jotter.py")
    return site


def _time(cmd: list[str], runs: int, env: dict[str, str]) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
        )
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        site = _site(base)
        common = dict(
            os.environ, HOME=str(home), AGENTDEX_DATA_DIR=str(base / "data"), AGENTDEX_WSL="0"
        )
        modes = {
            "off (AGENTDEX_PLUGINS=0)": dict(common, PYTHONPATH=str(SRC), AGENTDEX_PLUGINS="0"),
            "on, none installed": dict(common, PYTHONPATH=str(SRC), AGENTDEX_PLUGINS="1"),
            "on, one installed": dict(
                common, PYTHONPATH=f"{SRC}{os.pathsep}{site}", AGENTDEX_PLUGINS="1"
            ),
        }
        commands = {
            "agentdex --help": [py, "-m", "agentdex", "--help"],
            "load the catalogue": [
                py, "-c", "import agentdex.catalogue as c; c.CATALOGUE",
            ],
            "agentdex sources --no-check": [py, "-m", "agentdex", "sources", "--no-check"],
        }  # fmt: skip
        print(f"median of {args.runs} runs, milliseconds")
        print(f"  {'':<30}" + "".join(f"{name:>28}" for name in modes))
        for label, cmd in commands.items():
            cells = [_time(cmd, args.runs, env) * 1000 for env in modes.values()]
            print(f"  {label:<30}" + "".join(f"{c:>28.1f}" for c in cells))


if __name__ == "__main__":
    main()
