"""Benchmark: how big the context history gets, and what recording costs.

Run from the worktree root:

    PYTHONPATH=src python bench/context_history.py [--changes 1000] [--index-home HOME]

Builds a realistic workspace in a temporary directory (HOME included; reads
nothing else but this checkout's docs/*.md, used as real Markdown prose for
the instruction and skill texts): a git repository with 3,000 source
directories and a skipped node_modules, 13 instruction files, 6 project
skills, an MCP config, and user-level ~/.claude, ~/.codex and ~/.claude.json
(300 KB, as Claude keeps it). Then it measures:

* one snapshot with history off, one with history on (content unchanged:
  only ``last_seen`` moves), and the stat-fingerprint check that
  ``agentdex index`` uses instead of resolving;
* N random changes (edits to AGENTS.md and skills, skills added and
  removed, MCP servers added, and rewrites with identical content), each
  followed by a snapshot: the database size after, per version.

``--index-home`` (a home written by bench/generate_corpus.py) also times the
``agentdex index`` pass over an index of that home (its workspaces do not
exist on this machine, so this is the query and the checks, not resolves).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def prose() -> str:
    return "\n".join(p.read_text() for p in sorted(DOCS.glob("*.md")))


class Texts:
    """Slices of real Markdown, so compression and dedup see real text."""

    def __init__(self, rng: random.Random) -> None:
        self.text = prose()
        self.rng = rng

    def take(self, size: int) -> str:
        start = self.rng.randrange(0, max(1, len(self.text) - size))
        return self.text[start : start + size]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def skill(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name} steps\n---\n# {name}\n{body}"


def build(ws: Path, home: Path, texts: Texts) -> None:
    (ws / ".git").mkdir(parents=True)
    for i in range(3000):
        d = ws / "src" / f"pkg{i // 100}" / f"mod{i % 100}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "code.py").write_text("x = 1\n")
    for i in range(3000):
        (ws / "node_modules" / f"dep{i}" / "lib").mkdir(parents=True, exist_ok=True)
    write(ws / "AGENTS.md", "# Shop\n" + texts.take(8000))
    write(ws / "CLAUDE.md", "# Claude\n" + texts.take(3000))
    write(ws / "GEMINI.md", "# Gemini\n" + texts.take(1000))
    write(ws / ".github" / "copilot-instructions.md", texts.take(2000))
    for name in ("style", "tests", "release"):
        write(ws / ".cursor" / "rules" / f"{name}.mdc", texts.take(1500))
    for pkg in range(6):
        write(ws / "src" / f"pkg{pkg}" / "AGENTS.md", f"# pkg{pkg}\n" + texts.take(1500))
    for name in ("deploy", "migrate-db", "triage", "bench", "docs", "review"):
        write(ws / ".claude" / "skills" / name / "SKILL.md", skill(name, texts.take(3000)))
    servers = {f"srv{i}": {"command": f"srv{i}", "env": {"TOKEN": "x"}} for i in range(4)}
    write(ws / ".mcp.json", json.dumps({"mcpServers": servers}))
    write(home / ".claude" / "CLAUDE.md", "# Me\n" + texts.take(2000))
    for name in ("commit", "pr", "explain", "refactor"):
        write(home / ".claude" / "skills" / name / "SKILL.md", skill(name, texts.take(2500)))
    write(home / ".codex" / "AGENTS.md", "# Codex\n" + texts.take(1500))
    state = {"projects": {f"/p/{i}": {"history": texts.take(300)} for i in range(1000)}}
    write(home / ".claude.json", json.dumps({"mcpServers": servers, **state}))


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def db_bytes(path: Path) -> int:
    """The database's size on disk once checkpointed (what stays when agentdex is idle)."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()  # the last connection closing also removes -wal and -shm
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def change(ws: Path, rng: random.Random, texts: Texts, step: int) -> str:
    """One random edit of the kinds people make; returns its kind."""
    roll = rng.random()
    skills = sorted((ws / ".claude" / "skills").iterdir())
    if roll < 0.55:
        lines = (ws / "AGENTS.md").read_text().splitlines(keepends=True)
        lines[rng.randrange(1, len(lines))] = f"- rule {step}: {texts.take(60).strip()}\n"
        (ws / "AGENTS.md").write_text("".join(lines))
        return "edit AGENTS.md"
    if roll < 0.75:
        target = rng.choice(skills) / "SKILL.md"
        target.write_text(target.read_text() + f"\nstep {step}: {texts.take(80)}\n")
        return "edit a skill"
    if roll < 0.85:
        if len(skills) > 4 and rng.random() < 0.5:
            gone = rng.choice(skills)
            for f in gone.iterdir():
                f.unlink()
            gone.rmdir()
            return "remove a skill"
        name = f"skill-{step}"
        write(ws / ".claude" / "skills" / name / "SKILL.md", skill(name, texts.take(2500)))
        return "add a skill"
    if roll < 0.90:
        doc = json.loads((ws / ".mcp.json").read_text())
        doc["mcpServers"][f"added{step}"] = {"url": f"http://127.0.0.1:{step}"}
        (ws / ".mcp.json").write_text(json.dumps(doc))
        return "add an MCP server"
    (ws / "AGENTS.md").write_text((ws / "AGENTS.md").read_text())  # same content again
    return "rewrite unchanged"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--index-home", type=Path, default=None)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home, ws = base / "home", base / "repo"
        os.environ.update(
            HOME=str(home),
            AGENTDEX_DATA_DIR=str(base / "data"),
            AGENTDEX_CONFIG=str(base / "config.toml"),
        )
        from agentdex.api import context as api
        from agentdex.api import context_history
        from agentdex.context import recording
        from agentdex.context.caps import DEFAULT_LIMITS
        from agentdex.context.history import HistoryStore, history_path
        from agentdex.context.sources import scan_roots

        texts = Texts(rng)
        build(ws, home, texts)
        time.sleep(2.1)  # let every mtime age past the racy window, as on a real disk
        first = api.snapshot(str(ws), now=1.0)
        one_version = db_bytes(history_path())
        print(
            f"workspace: {first['resource_count']} resources, "
            f"{first['total_payload_bytes'] / 1024:.0f} KiB of text; "
            f"history after the first version: {one_version / 1024:.0f} KiB"
        )
        config = base / "config.toml"
        off_times, on_times = [], []
        for _ in range(15):  # alternate, so load on a shared machine hits both alike
            config.write_text("[context]\nhistory = false\n")
            off_times.append(median_ms(lambda: api.snapshot(str(ws)), 1))
            config.unlink()
            on_times.append(median_ms(lambda: api.snapshot(str(ws)), 1))
        off, on = statistics.median(off_times), statistics.median(on_times)

        def check() -> None:
            with HistoryStore() as store:
                roots = scan_roots(str(ws), limits=DEFAULT_LIMITS)
                seen = recording.observe(
                    store, str(ws), roots, DEFAULT_LIMITS, at=2.0, recorded_by="b"
                )
                assert not seen.resolved, "fingerprint should have matched"

        api.snapshot(str(ws), now=2.0)  # fingerprint taken now that nothing is racy
        fast = median_ms(check, 15)
        print(
            f"snapshot, history off: {off:.0f} ms; history on, unchanged: {on:.0f} ms; "
            f"fingerprint check (index, nothing changed): {fast:.1f} ms  (medians of 15)"
        )

        kinds: dict[str, int] = {}
        record_times = []
        for step in range(args.changes):
            kind = change(ws, rng, texts, step)
            kinds[kind] = kinds.get(kind, 0) + 1
            start = time.perf_counter()
            api.snapshot(str(ws), now=10.0 + step)
            record_times.append(time.perf_counter() - start)
        size = db_bytes(history_path())
        listing = context_history.versions(str(ws), now=1e9)
        with HistoryStore() as store:
            stats = store.stats()
        print(f"{args.changes} changes: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
        per_version = (size - one_version) / max(1, listing["total"] - 1) / 1024
        print(
            f"versions: {listing['total']}; history size: {size / 1024 / 1024:.2f} MiB "
            f"({per_version:.1f} KiB per new version); "
            f"snapshot + record median {statistics.median(record_times) * 1000:.0f} ms"
        )
        for kind, info in sorted(stats["objects"].items()):
            print(
                f"  {kind:6} {info['count']:6} objects, {info['raw_bytes'] / 1024:8.0f} KiB raw, "
                f"{info['stored_bytes'] / 1024:8.0f} KiB stored (zlib)"
            )
        if args.index_home is not None:
            index_pass(args.index_home)


def index_pass(corpus_home: Path) -> None:
    from agentdex.api import context_history
    from agentdex.api import search as api

    start = time.perf_counter()
    done = api.refresh(home=str(corpus_home))
    print(f"indexed {done.records_added} records in {time.perf_counter() - start:.0f} s")
    times = []
    for _ in range(5):
        start = time.perf_counter()
        stats = context_history.record_indexed_workspaces(home=str(corpus_home))
        times.append(time.perf_counter() - start)
    print(
        f"index pass over {stats['workspaces'] + stats['skipped']} distinct workspaces "
        f"({stats['skipped']} absent here): median {statistics.median(times) * 1000:.0f} ms of 5"
    )


if __name__ == "__main__":
    main()
