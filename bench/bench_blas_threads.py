"""The scan's one float product (4,000 x 384 @ 384) with numpy's BLAS on its default
threads against one thread, each in a fresh process (the setting only takes before numpy
loads): median wall and CPU over N products, and the process's thread count.

    python bench/bench_blas_threads.py [--runs 200] [--python PY]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

PROBE = r"""
import json, os, statistics, time
import numpy as np
rows = np.random.default_rng(1).standard_normal((4000, 384)).astype(np.float32)
query = np.ones(384, np.float32)
wall, cpu = [], []
for _ in range({runs}):
    t, c = time.perf_counter(), time.process_time()
    rows @ query
    wall.append(time.perf_counter() - t)
    cpu.append(time.process_time() - c)
print(json.dumps({{"wall_ms": statistics.median(wall) * 1e3,
                   "cpu_ms": statistics.median(cpu) * 1e3,
                   "threads": len(os.listdir("/proc/self/task"))}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    report = {}
    for name, extra in (("default", {}), ("one", {"OPENBLAS_NUM_THREADS": "1"})):
        done = subprocess.run(
            [args.python, "-c", PROBE.format(runs=args.runs)],
            env={**base, **extra},
            capture_output=True,
            text=True,
            check=True,
        )
        report[name] = json.loads(done.stdout)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
