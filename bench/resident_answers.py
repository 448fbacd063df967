#!/usr/bin/env python3
"""Same answers from the resident searcher as from the search's own process, at scale.

    python bench/resident_answers.py CORPUS --work DIR [--python PATH] [--src SRC]

For every query of ``bench_semantic.OCCURRING`` and ``QUERIES``, in hybrid and
lexical mode: one fresh ``agentdex search --json -n 20`` with the resident
searcher off (``AGENTDEX_RESIDENT_SEARCH=0``: the search runs in its process)
and one answered by the resident (its request count must grow by one), the
clock pinned (``AGENTDEX_NOW``: recency ranks the same). The two JSON documents
must be equal but for timings (every ``*seconds`` field). ``DIR`` is a work dir
as ``bench_semantic.py`` uses it (an index in ``DIR/data``; it is only read).
Prints one JSON report; exits 1 when any answer differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_semantic import OCCURRING, QUERIES, env_for

SRC = Path(__file__).resolve().parents[1] / "src"
STATUS = "import json; from agentdex.api import search_resident as s; print(json.dumps(s.{}()))"


def untimed(value: Any) -> Any:
    """``value`` without its timings (they differ from run to run)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if not k.endswith("seconds")}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--src", type=Path, default=SRC)
    args = parser.parse_args()
    env = env_for(args.corpus.absolute(), args.work.absolute(), args.src.absolute())
    env.update(AGENTDEX_NOW="2026-11-27T00:00:00Z", AGENTDEX_RESIDENT_EMBEDDER="1")
    on = {**env, "AGENTDEX_RESIDENT_SEARCH": "1"}
    off = {**env, "AGENTDEX_RESIDENT_SEARCH": "0"}

    def search(query: list[str], which: dict[str, str]) -> tuple[int, Any]:
        argv = [args.python, "-m", "agentdex", "search", "--json", "-n", "20", *query]
        done = subprocess.run(argv, env=which, capture_output=True, text=True, check=False)
        return done.returncode, json.loads(done.stdout)

    def resident(op: str) -> dict[str, Any]:
        done = subprocess.run(
            [args.python, "-c", STATUS.format(op)],
            env=on,
            capture_output=True,
            text=True,
            check=True,
        )
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer if isinstance(answer, dict) else {"stopped": answer}

    search([OCCURRING[0]], on)  # starts the residents (the searcher after it answered)
    give_up = time.monotonic() + 60
    while not resident("status").get("running") and time.monotonic() < give_up:
        time.sleep(0.2)
    report: dict[str, Any] = {"same": 0, "different": [], "not_served": []}
    try:
        for query in [*OCCURRING, *QUERIES]:
            for mode in ([], ["--lexical"]):
                itself = search([*mode, query], off)
                before = resident("status").get("requests", 0)
                served = search([*mode, query], on)
                if resident("status").get("requests", 0) != before + 1:
                    report["not_served"].append([*mode, query])
                if (itself[0], untimed(itself[1])) == (served[0], untimed(served[1])):
                    report["same"] += 1
                else:
                    report["different"].append([*mode, query])
    finally:
        report["stopped"] = resident("stop")
    print(json.dumps(report, indent=1))
    return 1 if report["different"] or report["not_served"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
