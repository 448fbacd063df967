"""Recall by meaning on the labelled set (bench/semantic_set.py): lexical, semantic, hybrid.

    python bench/semantic_eval.py                       # the three modes through agentdex
    python bench/semantic_eval.py --models              # the candidate models, semantic only
    python bench/semantic_eval.py --json out.json
    python bench/semantic_eval.py --floors 0.15,0.2,0.25,0.3    # the similarity floor
    python bench/semantic_eval.py --titles              # with titles embedded and without

The set's conversations (targets and distractors) are written as Claude Code
transcripts into a temporary home, indexed and embedded by agentdex itself,
and every query runs through ``agentdex.api.search.search`` in each mode. A
query scores by the rank of its conversation among the distinct conversations
of the results (hit@1, hit@5, MRR over the first 20 results). ``PHRASES`` are
exact phrases: the hybrid mode must rank their conversation first.

``--floors`` scores semantic and hybrid once per minimum similarity of a
match by meaning (``agentdex.api.semantic.MIN_SIMILARITY``), and runs
``NONSENSE`` queries (words no conversation holds, meaning nothing) to count
how many still get results: the floor is chosen where nonsense answers
nothing and the labelled set loses nothing.

``--titles`` gives every conversation its title (``TITLES``, written as Claude
Code's ``ai-title`` line), embeds the records first with titles left out
(``agentdex.semantic.fill.EMBED_TITLES``, off for this measurement only) and
scores semantic and hybrid, then fills again with titles on (that second fill
embeds the titles alone: its time and the store's growth are what titles cost)
and scores them again.

``--models`` compares embedding models on the same records without the index:
every prompt and reply is embedded, a conversation scores the best similarity
of its records. The runner-up needs its wheel unpacked somewhere
(``--l3-path`` to ``paraphrase-MiniLM-L3-v2.onnx``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from semantic_set import CONVERSATIONS, PHRASES, QUERIES, TITLES

#: queries that mean nothing: a search for them should answer "no results"
NONSENSE = [
    "zzqqxx",
    "asdfghjkl",
    "qwpoeiruty zxmvn",
    "xyzzy plugh",
    "blorp fnord",
    "aaaaaaaaaa",
    "kjh kjh kjh",
    "zzqqxx wwvvyy",
    "lorem ipsum dolor",
    "\U0001f984\U0001f984\U0001f984",
]


def session_id(cid: str) -> str:
    number = int(cid[1:]) + (0 if cid[0] == "c" else 500)
    return f"5e3a0000-0000-4000-8000-{number:012d}"


def write_home(home: Path, titles: bool = False) -> None:
    """Every conversation as a Claude Code transcript under ``home`` (with ``titles``,
    each ends with an ``ai-title`` line holding its title from ``TITLES``)."""
    for cid, (project, day, turns) in CONVERSATIONS.items():
        sid = session_id(cid)
        cwd = f"/home/dev/{project}"
        folder = home / ".claude" / "projects" / cwd.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        lines, parent = [], None
        for i, (role, text) in enumerate(turns):
            uuid = f"{sid[:8]}-{cid}-{i:04d}"
            content: Any = text if role == "user" else [{"type": "text", "text": text}]
            message: dict[str, Any] = {"role": role, "content": content}
            if role == "assistant":
                message.update(model="claude-test", id=f"msg_{cid}_{i}", type="message")
            month = 10 if day >= 1 else 11
            lines.append(
                {
                    "type": role,
                    "uuid": uuid,
                    "parentUuid": parent,
                    "isSidechain": False,
                    "sessionId": sid,
                    "cwd": cwd,
                    "gitBranch": "main",
                    "version": "2.0.0",
                    "timestamp": f"2026-{month:02d}-{day:02d}T10:{i:02d}:00.000Z",
                    "message": message,
                }
            )
            parent = uuid
        if titles:
            lines.append({"type": "ai-title", "sessionId": sid, "aiTitle": TITLES[cid]})
        (folder / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def conversation_rank(results: list[dict[str, Any]], target: str) -> int | None:
    """1-based rank of ``target``'s conversation among the distinct ones in ``results``."""
    seen: list[str] = []
    for r in results:
        if r["session_id"] not in seen:
            seen.append(r["session_id"])
    sid = session_id(target)
    return seen.index(sid) + 1 if sid in seen else None


def scores(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks)
    return {
        "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3),
        "hit@5": round(sum(1 for r in ranks if r is not None and r <= 5) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r) / n, 3),
    }


def score_modes(home: Path, modes: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    """hit@1/hit@5/MRR of every query in each of ``modes``, and the queries not ranked first."""
    from agentdex.api.search import search

    out: dict[str, Any] = {}
    misses: dict[str, Any] = {}
    for mode in modes:
        ranks = []
        misses[mode] = []
        for query, target in QUERIES:
            res = search(query, home=str(home), mode=mode, limit=20, refresh_first=False)
            rank = conversation_rank(res.results, target)
            ranks.append(rank)
            if rank != 1:
                misses[mode].append([query, target, rank])
        out[mode] = scores(ranks)
    return out, misses


def store_bytes(work: Path) -> int:
    """Bytes of the vector store (``<index dir>/semantic``: vectors.db and the flat files)."""
    folder = next((work / "data").rglob("semantic"))
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def run_titles(work: Path, home: Path) -> dict[str, Any]:
    """Semantic and hybrid recall with titles left out, then with them embedded; what
    the fill that embeds the titles costs (seconds, store bytes)."""
    from agentdex.api.semantic import embed_missing
    from agentdex.semantic import fill

    out: dict[str, Any] = {"titles": len(TITLES)}
    try:
        for titles, fill_name, side in (
            (False, "records_fill", "without"),
            (True, "titles_fill", "with"),
        ):
            fill.EMBED_TITLES = titles
            started = time.perf_counter()
            done = embed_missing(home=str(home))
            out[fill_name] = done.to_json() | {
                "seconds": round(time.perf_counter() - started, 3),
                "store_bytes": store_bytes(work),
            }
            out[side], out[f"misses_{side}"] = score_modes(home, ("semantic", "hybrid"))
    finally:
        fill.EMBED_TITLES = True
    return out


def run_modes(
    work: Path, floors: list[float] | None = None, titles: bool = False
) -> dict[str, Any]:
    home = work / "home"
    home.mkdir()
    write_home(home, titles)
    os.environ.update(
        HOME=str(home),
        AGENTDEX_DATA_DIR=str(work / "data"),
        AGENTDEX_CONFIG=str(work / "config.toml"),
        XDG_CONFIG_HOME=str(home / ".config"),
    )
    (work / "config.toml").write_text("")
    from agentdex.api.index import refresh
    from agentdex.api.search import search
    from agentdex.api.semantic import embed_missing

    refresh(home=str(home))
    if titles:
        return {"conversations": len(CONVERSATIONS), "queries": len(QUERIES)} | run_titles(
            work, home
        )
    started = time.perf_counter()
    filled = embed_missing(home=str(home))
    report: dict[str, Any] = {
        "conversations": len(CONVERSATIONS),
        "queries": len(QUERIES),
        "embedded": filled.to_json() | {"seconds": round(time.perf_counter() - started, 2)},
        "modes": {},
        "misses": {},
    }
    if floors:
        report["floors"] = run_floors(home, floors)
    report["modes"], report["misses"] = score_modes(home, ("lexical", "semantic", "hybrid"))
    phrase_ranks = []
    for phrase, target in PHRASES:
        res = search(phrase, home=str(home), mode="hybrid", limit=20, refresh_first=False)
        phrase_ranks.append(conversation_rank(res.results, target))
    report["phrases"] = {
        "n": len(PHRASES),
        "first": sum(1 for r in phrase_ranks if r == 1),
        "ranks": phrase_ranks,
    }
    return report


def run_floors(home: Path, floors: list[float]) -> dict[str, Any]:
    """Scores and nonsense answers per similarity floor (semantic and hybrid)."""
    import agentdex.api.semantic as semantic
    from agentdex.api.search import search

    saved = semantic.MIN_SIMILARITY
    out: dict[str, Any] = {}
    try:
        semantic.MIN_SIMILARITY = -1.0
        target_sims, nonsense_top = [], {}
        for query, target in QUERIES:
            res = search(query, home=str(home), mode="semantic", limit=100, refresh_first=False)
            sims = [
                r["why"]["similarity"] for r in res.results if r["session_id"] == session_id(target)
            ]
            target_sims.append(max(sims) if sims else None)
        for query in NONSENSE:
            res = search(query, home=str(home), mode="semantic", limit=1, refresh_first=False)
            nonsense_top[query] = res.results[0]["why"]["similarity"] if res.results else None
        found = sorted(s for s in target_sims if s is not None)
        out["target_similarity"] = {
            "min": found[0],
            "p10": found[len(found) // 10],
            "p50": found[len(found) // 2],
            "missing": len(target_sims) - len(found),
        }
        out["nonsense_top_similarity"] = nonsense_top
        for floor in floors:
            semantic.MIN_SIMILARITY = floor
            row: dict[str, Any] = {}
            for mode in ("semantic", "hybrid"):
                ranks = []
                for query, target in QUERIES:
                    res = search(query, home=str(home), mode=mode, limit=20, refresh_first=False)
                    ranks.append(conversation_rank(res.results, target))
                row[mode] = scores(ranks)
            answered = 0
            for query in NONSENSE:
                res = search(query, home=str(home), mode="hybrid", limit=20, refresh_first=False)
                answered += bool(res.results)
            row["nonsense_answered"] = f"{answered}/{len(NONSENSE)}"
            out[str(floor)] = row
    finally:
        semantic.MIN_SIMILARITY = saved
    return out


def run_models(l3_path: str | None) -> dict[str, Any]:
    from agentdex.semantic.model import MINILM_L6_DQ, MINILM_L6_INT8, PARAPHRASE_L3, Embedder

    records = [(cid, text) for cid, (_, _, turns) in CONVERSATIONS.items() for _, text in turns]
    out: dict[str, Any] = {}
    for spec, path in ((MINILM_L6_DQ, None), (MINILM_L6_INT8, None), (PARAPHRASE_L3, l3_path)):
        if spec is PARAPHRASE_L3 and not path:
            continue
        started = time.perf_counter()
        emb = Embedder(spec, path=Path(path) if path else None)
        load = time.perf_counter() - started
        started = time.perf_counter()
        matrix = emb.embed([t for _, t in records])
        per_text = (time.perf_counter() - started) / len(records)
        query_times, ranks = [], []
        for query, target in QUERIES:
            t0 = time.perf_counter()
            qv = emb.embed([query])[0]
            query_times.append(time.perf_counter() - t0)
            sims = matrix @ qv
            best: dict[str, float] = {}
            for (cid, _), s in zip(records, sims, strict=True):
                best[cid] = max(best.get(cid, -1.0), float(s))
            order = sorted(best, key=lambda c: -best[c])
            ranks.append(order.index(target) + 1)
        out[spec.id] = scores(ranks) | {
            "load_s": round(load, 3),
            "ms_per_text": round(per_text * 1000, 2),
            "query_ms_p50": round(sorted(query_times)[len(query_times) // 2] * 1000, 2),
            "model_mb": round(spec.size / 1e6, 1),
        }
    return out


def print_titles(report: dict[str, Any]) -> None:
    for side in ("without", "with"):
        for mode, row in report[side].items():
            cells = "  ".join(f"{k} {v:.3f}" for k, v in row.items())
            print(f"  titles {side:7} {mode:9} {cells}")
    for name in ("records_fill", "titles_fill"):
        run = report[name]
        print(
            f"  {name}: {run['seconds']:.2f} s, texts {run['texts_embedded']},"
            f" titles {run['titles_done']}, vectors {run['vectors']},"
            f" store {run['store_bytes']:,} bytes"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", action="store_true", help="compare candidate models")
    parser.add_argument("--l3-path", help="paraphrase-MiniLM-L3-v2.onnx from its wheel")
    parser.add_argument("--json", help="also write the report here")
    parser.add_argument("--floors", help="comma-separated similarity floors to score")
    parser.add_argument(
        "--titles", action="store_true", help="recall and cost with titles embedded and without"
    )
    args = parser.parse_args()
    if args.models:
        report = run_models(args.l3_path)
        for name, row in report.items():
            print(f"{name:28} " + "  ".join(f"{k} {v}" for k, v in row.items()))
    else:
        with tempfile.TemporaryDirectory(prefix="agentdex-semeval-") as tmp:
            floors = [float(f) for f in args.floors.split(",")] if args.floors else None
            report = run_modes(Path(tmp), floors, args.titles)
        print(f"{len(QUERIES)} queries over {len(CONVERSATIONS)} conversations")
        if args.titles:
            print_titles(report)
            if args.json:
                Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
            return 0
        for mode, row in report["modes"].items():
            cells = "  ".join(f"{k} {v:.3f}" for k, v in row.items())
            print(f"  {mode:9} {cells}")
        p = report["phrases"]
        print(f"  exact phrases ranked first by hybrid: {p['first']}/{p['n']}")
        if "floors" in report:
            print(json.dumps(report["floors"], indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
