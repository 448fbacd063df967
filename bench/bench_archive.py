"""Archive benchmark: its size against the index for the same history, and what it costs.

    python bench/generate_corpus.py /tmp/c100 --size-mb 100
    python bench/bench_archive.py /tmp/c100 --work /tmp/adx-archive-bench [--runs 3]
        [--real /work/shared/corpus/claude-code]

Every agentdex step runs in a fresh subprocess (byte-compiled modules), each
with its own data dir and config file (``archive = false`` for the runs
without it):

* cold ``index`` with the archive off and on, ``--runs`` times each,
  alternating: seconds (median), index size, archive size (database and chunk
  file apart), records archived, and the archive/index ratio;
* the same content read again (every file replaced by a copy: new inode, so
  each is re-parsed whole): seconds, and how many bytes the archive grew;
* deleting a tenth of the transcripts: the refresh that keeps their records,
  then a rebuild (``--full``) that re-imports them from the archive, and a
  check that a search still finds a deleted record, marked ``source_gone``;
* a fresh-process ``agentdex search`` for one rare word after a no-change
  refresh check, archive off and on, in ``--runs`` x 10 pairs (alternating
  which goes first): medians, and the median of the paired differences;
* ``--real DIR``: a folder of real Claude Code project folders (the shared
  corpus) indexed with the archive on: index and archive sizes.

Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pathlib import Path
from typing import Any

from bench_search import dir_size

SRC = Path(__file__).resolve().parent.parent / "src"


def environment(work: Path, name: str, archive: bool) -> dict[str, str]:
    data = work / name
    config = work / f"{name}.toml"
    config.write_text("" if archive else "archive = false\n")
    env = dict(os.environ)
    env["AGENTDEX_DATA_DIR"] = str(data)
    env["AGENTDEX_CONFIG"] = str(config)
    env["PYTHONPATH"] = str(SRC)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def agentdex(env: dict[str, str], home: Path, *args: str) -> tuple[float, Any]:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "agentdex", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    seconds = time.perf_counter() - started
    if out.returncode not in (0, 7):
        raise RuntimeError(out.stderr[-2000:])
    return seconds, json.loads(out.stdout) if out.stdout.strip().startswith("{") else None


def sizes(env: dict[str, str]) -> dict[str, int]:
    root = Path(env["AGENTDEX_DATA_DIR"]) / "index"
    current = (root / "CURRENT").read_text().strip()
    archive = root / "archive"
    return {
        "index_bytes": dir_size(root / current),
        "archive_bytes": dir_size(archive),
        "archive_db_bytes": sum(p.stat().st_size for p in archive.glob("archive.db*")),
        "archive_chunk_bytes": sum(p.stat().st_size for p in archive.glob("chunks-*.blobs")),
    }


def rare_word(home: Path) -> str:
    counts: dict[str, int] = {}
    for path in sorted(home.rglob("*.jsonl")):
        for token in re.findall(rb"zq\d{7}\b", path.read_bytes()):
            counts[token.decode()] = counts.get(token.decode(), 0) + 1
    return sorted(token for token, n in counts.items() if n == 1)[0]


def cold_runs(home: Path, work: Path, runs: int) -> dict[str, Any]:
    report: dict[str, Any] = {"off": [], "on": []}
    for run in range(runs):
        for mode in ("off", "on"):
            env = environment(work, f"cold-{mode}-{run}", archive=mode == "on")
            shutil.rmtree(env["AGENTDEX_DATA_DIR"], ignore_errors=True)
            seconds, data = agentdex(env, home, "index", "--json")
            report[mode].append({"seconds": round(seconds, 2), **sizes(env), **_counts(data)})
    for mode in ("off", "on"):
        rows = report[mode]
        report[f"{mode}_median_seconds"] = statistics.median(r["seconds"] for r in rows)
        report[f"{mode}_median_index_bytes"] = statistics.median(r["index_bytes"] for r in rows)
    on = report["on"]
    report["on_median_archive_bytes"] = statistics.median(r["archive_bytes"] for r in on)
    report["archive_to_index"] = round(
        report["on_median_archive_bytes"] / report["on_median_index_bytes"], 3
    )
    report["archive_to_index_off_run"] = round(
        report["on_median_archive_bytes"] / report["off_median_index_bytes"], 3
    )
    report["seconds_ratio_on_to_off"] = round(
        report["on_median_seconds"] / report["off_median_seconds"], 3
    )
    return report


def _counts(data: Any) -> dict[str, Any]:
    refresh = data["refresh"] if data else {}
    return {
        "records_added": refresh.get("records_added"),
        "records_archived": refresh.get("records_archived"),
        "records_restored": refresh.get("records_restored"),
        "bytes_parsed": refresh.get("bytes_parsed"),
    }


def reread_and_delete(home: Path, work: Path) -> dict[str, Any]:
    """Re-read everything (same content), then delete a tenth of the transcripts."""
    copy = work / "home-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(home, copy)
    env = environment(work, "changes", archive=True)
    shutil.rmtree(env["AGENTDEX_DATA_DIR"], ignore_errors=True)
    agentdex(env, copy, "index", "--json")
    before = sizes(env)
    for path in sorted(copy.rglob("*.jsonl")):
        twin = path.with_name(path.name + ".tmp")
        twin.write_bytes(path.read_bytes())
        os.replace(twin, path)  # new inode: re-parsed whole
    seconds, data = agentdex(env, copy, "index", "--json")
    after = sizes(env)
    report: dict[str, Any] = {
        "reread_seconds": round(seconds, 2),
        "reread": _counts(data),
        "reread_archive_growth_bytes": after["archive_chunk_bytes"] - before["archive_chunk_bytes"],
        "reread_archive_db_growth_bytes": after["archive_db_bytes"] - before["archive_db_bytes"],
    }
    transcripts = sorted((copy / ".claude" / "projects").rglob("*.jsonl"))
    doomed = transcripts[:: max(1, len(transcripts) // max(1, len(transcripts) // 10))]
    doomed = doomed[: max(1, len(transcripts) // 10)]
    probe = None
    for line in doomed[0].read_text().splitlines():
        found = re.search(r"zq\d{7}", line)
        if found:
            probe = found.group(0)
            break
    for path in doomed:
        path.unlink()
    seconds, data = agentdex(env, copy, "index", "--json")
    report["deleted_files"] = len(doomed)
    report["delete_refresh_seconds"] = round(seconds, 2)
    report["delete_refresh"] = {**_counts(data), "files_removed": data["refresh"]["files_removed"]}
    seconds, data = agentdex(env, copy, "index", "--full", "--json")
    report["rebuild_seconds"] = round(seconds, 2)
    report["rebuild"] = _counts(data)
    report["sizes_after_rebuild"] = sizes(env)
    if probe is not None:
        _, found = agentdex(env, copy, "search", probe, "--json")
        report["deleted_probe"] = {
            "query": probe,
            "found": len(found["results"]),
            "source_gone": [r["source_gone"] for r in found["results"]],
        }
    return report


def search_overhead(home: Path, work: Path, runs: int) -> dict[str, Any]:
    word = rare_word(home)
    report: dict[str, Any] = {"query": word}
    for mode in ("off", "on"):
        env = environment(work, f"cold-{mode}-0", archive=mode == "on")
        agentdex(env, home, "index", "--json")  # the manifest for the no-change fast path
    samples: dict[str, list[float]] = {"off": [], "on": []}
    for pair in range(runs * 10):
        order = ("off", "on") if pair % 2 == 0 else ("on", "off")  # neither always goes first
        for mode in order:
            env = environment(work, f"cold-{mode}-0", archive=mode == "on")
            seconds, data = agentdex(env, home, "search", word, "--json", "--limit", "20")
            samples[mode].append(seconds)
            assert data["stats"]["refresh"]["files_parsed"] == 0
    for mode in ("off", "on"):
        report[f"{mode}_p50_ms"] = round(statistics.median(samples[mode]) * 1000, 1)
    differences = [on - off for on, off in zip(samples["on"], samples["off"], strict=True)]
    report["pairs"] = len(differences)
    report["median_on_minus_off_ms"] = round(statistics.median(differences) * 1000, 1)
    return report


def real_corpus(folder: Path, work: Path) -> dict[str, Any]:
    home = work / "real-home"
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(folder / "projects", home / ".claude" / "projects")
    env = environment(work, "real", archive=True)
    shutil.rmtree(env["AGENTDEX_DATA_DIR"], ignore_errors=True)
    seconds, data = agentdex(env, home, "index", "--json")
    report = {"seconds": round(seconds, 2), "store_bytes": dir_size(home), **sizes(env)}
    report.update(_counts(data))
    report["archive_to_index"] = round(report["archive_bytes"] / report["index_bytes"], 3)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--real", type=Path, default=None)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC)], check=True, env=env)
    report: dict[str, Any] = {
        "corpus": str(args.home),
        "corpus_bytes": dir_size(args.home),
        "cold_index": cold_runs(args.home, args.work, args.runs),
        "changes": reread_and_delete(args.home, args.work),
        "fresh_search": search_overhead(args.home, args.work, args.runs),
    }
    if args.real is not None:
        report["real_claude_code"] = real_corpus(args.real, args.work)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
