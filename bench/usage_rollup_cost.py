"""What the usage rollups cost a cold build's writer, counted statement by statement.

    python bench/usage_rollup_cost.py HOME --data DIR

Builds HOME's index once, cold (``agentdex index`` in this process, parse workers as
usual), with :meth:`agentdex.index.usage.UsageTable._rollup` timed per table in CPU
seconds of the writer's thread (``time.thread_time``: what the statement cost, not
how long it waited for a core, so a loaded machine changes the numbers little), and
:meth:`~agentdex.index.usage.UsageTable.settle` as a whole. Prints one JSON document:
those seconds, the build's wall and CPU seconds (this process and its children).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--data", type=Path, required=True, help="a data dir (emptied first)")
    args = parser.parse_args()
    shutil.rmtree(args.data, ignore_errors=True)
    args.data.mkdir(parents=True)
    os.environ.update(AGENTDEX_DATA_DIR=str(args.data), AGENTDEX_BACKGROUND_BUILD="0")
    os.environ.pop("AGENTDEX_CONFIG", None)

    from agentdex.cli import main as cli
    from agentdex.index import usage

    spent: dict[str, float] = {"usage_rollup": 0.0, "usage_contexts": 0.0, "settle": 0.0}
    counts = {"rollup_calls": 0}

    def timed_rollup(
        self: usage.UsageTable, where: str, args: tuple[object, ...], sign: int
    ) -> None:
        counts["rollup_calls"] += 1
        for name, upsert in zip(("usage_rollup", "usage_contexts"), usage._UPSERTS, strict=True):
            started = time.thread_time()
            self.db.execute(upsert.format(sign=sign, where=where), args)
            spent[name] += time.thread_time() - started

    settle = usage.UsageTable.settle

    def timed_settle(self: usage.UsageTable) -> None:
        started = time.thread_time()
        settle(self)
        spent["settle"] += time.thread_time() - started

    usage.UsageTable._rollup = timed_rollup
    usage.UsageTable.settle = timed_settle
    wall = time.perf_counter()
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    real_stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the build's own JSON
    try:
        cli(["--home", str(args.home), "index", "--json"])
    except SystemExit as done:
        if done.code not in (0, None):
            raise
    finally:
        sys.stdout.close()
        sys.stdout = real_stdout
    wall = time.perf_counter() - wall
    own2, children2 = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    writer_cpu = own2.ru_utime - own.ru_utime + own2.ru_stime - own.ru_stime
    worker_cpu = children2.ru_utime - children.ru_utime + children2.ru_stime - children.ru_stime
    print(json.dumps({
        "home": str(args.home),
        "wall_s": round(wall, 2),
        "cpu_s": {"this_process": round(writer_cpu, 2), "children": round(worker_cpu, 2)},
        "thread_cpu_s": {k: round(v, 3) for k, v in spent.items()},
        **counts,
        "load_average": os.getloadavg(),
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
