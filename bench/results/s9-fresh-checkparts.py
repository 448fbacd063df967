"""Time the refresh check's parts in-process (warm), medians of N runs.

python bench/results/s9-fresh-checkparts.py WORK HOME [N]
"""

import os
import statistics
import sys
import time
from pathlib import Path

import orjson


def main() -> None:
    work, home = Path(sys.argv[1]), sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 21
    os.environ["AGENTDEX_DATA_DIR"] = str(work / "agentdex-data")
    os.environ["AGENTDEX_CONFIG"] = str(work / "no-config.toml")
    from agentdex.index.store import index_root
    from agentdex.ingest import manifest
    from agentdex.paths import changed_signatures

    root = Path(index_root(None, home=home))
    parts: dict[str, list[float]] = {
        name: [] for name in ("read", "parse", "fingerprint", "stats", "check")
    }
    for _ in range(runs):
        marks = [time.perf_counter()]
        raw = (root / manifest.MANIFEST).read_bytes()
        marks.append(time.perf_counter())
        data = orjson.loads(raw)
        marks.append(time.perf_counter())
        manifest.fingerprint(home)
        marks.append(time.perf_counter())
        list(changed_signatures(data["paths"]))
        marks.append(time.perf_counter())
        manifest.check(root, home)
        marks.append(time.perf_counter())
        for times, start, end in zip(parts.values(), marks, marks[1:], strict=False):
            times.append(1000 * (end - start))
    medians = {name: round(statistics.median(times), 2) for name, times in parts.items()}
    print(home, "paths", len(data["paths"]), "bytes", len(raw), medians)


if __name__ == "__main__":
    main()
