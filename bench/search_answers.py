"""Dump the JSON answers of a fixed query set (compare two checkouts' answers on one index).

    AGENTDEX_DATA_DIR=W AGENTDEX_CONFIG=W/no-config.toml PYTHONPATH=SRC \\
        python bench/search_answers.py HOME [--occurring] [--stop] > answers.json
    python bench/search_answers.py --compare A.json B.json [--allow candidates,blocks_scanned]

The 22 queries of the s5-lexb set (the bench_search classes at 1 GB and
variations: case, -w, time order, fields, NOT, short words) plus three
regexes (``token``, ``Kafka|worker`` ignoring case, the class regex matching
case), with a fixed ``now``, ``refresh_first=False`` and ``limit=20``; each
answer's ``stats.seconds``/``refresh`` dropped. ``--compare`` prints SAME or
DIFF per query (results, highlights, status, every other stats field; the
stats fields that differ are listed either way; ``--allow`` names stats fields that
may differ, e.g. when a plan looks up more words: fewer candidates, same answers).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("zq1000067", {}),
    ('"buffer commit sedistimel"', {}),
    ("function", {}),
    ("the", {}),
    ("buffer (commit|zzq)", {"regex": True}),
    ("agent:codex since:2026-10-01 timeout", {}),
    ("Function", {}),
    ("time out", {}),
    ("agent:claude-code error", {}),
    ("role:user function", {}),
    ("function", {"word": True}),
    ("function", {"sort": "time"}),
    ("timeout -agent:codex", {}),
    ("agent:codex timeout", {"limit": 50}),
    ("since:2026-10-15 function", {}),
    ("unc", {}),
    ("kind:tool_call timeout", {}),
    ("time", {"limit": 5}),
    ("agent:codex the", {}),
    ("project:alpha function", {}),
    ("buffer", {"case": "sensitive"}),
    ("fun", {}),
    ("token", {"regex": True}),
    ("Kafka|worker", {"regex": True, "case": "insensitive"}),
    ("buffer (commit|zzq)", {"regex": True, "case": "sensitive"}),
]


#: ``--stop``: stop words (index format 7 leaves them out of the postings) alone, in
#: phrases, with filters, NOT, -w, case, regexes, time order and exact counts
STOP: list[tuple[str, dict[str, Any]]] = [
    ("that", {}),
    ("await", {"limit": 50}),
    ('"in the"', {}),
    ('"the file"', {}),
    ('"return none"', {}),
    ('"error in the"', {}),
    ("in the file", {}),
    ("agent:codex that", {}),
    ("role:user the error", {}),
    ("with timeout", {}),
    ('"to the"', {"sort": "time"}),
    ("the -agent:codex", {}),
    ("timeout -the", {}),
    ("self", {"word": True}),
    ("Def", {"case": "sensitive"}),
    ("return|await", {"regex": True}),
    ("he", {}),
    ('"retry the"', {"exact_total": True}),
    ("kind:tool_call that", {"exact_total": True}),
]


def occurring() -> list[tuple[str, dict[str, Any]]]:
    """The ``--occurring`` queries: bench_semantic's, their first and last halves, at two
    page sizes, and by time."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_semantic import OCCURRING

    out: list[tuple[str, dict[str, Any]]] = []
    for query in OCCURRING:
        words = query.split()
        half = len(words) // 2
        for text in (query, " ".join(words[: half + 1]), " ".join(words[half:])):
            out.append((text, {}))
        out.append((query, {"limit": 100}))
        out.append((query, {"sort": "time"}))
    return out


def dump(home: str, extra: bool, stop: bool = False) -> None:
    from agentdex.api import search as api

    out = []
    for query, options in QUERIES + (occurring() if extra else []) + (STOP if stop else []):
        kwargs: dict[str, Any] = {
            "home": home,
            "refresh_first": False,
            "limit": 20,
            "now": 1795700000.0,
            **options,
        }
        answer = api.search(query, **kwargs).to_json()
        answer["stats"].pop("seconds", None)
        answer["stats"].pop("refresh", None)
        out.append({"q": query, "kw": options, "r": answer})
    print(json.dumps(out, sort_keys=True))


def compare(first: str, second: str, allowed: set[str]) -> None:
    """SAME or DIFF per query; ``allowed``: stats fields that may differ (listed, not DIFF)."""
    with open(first) as a, open(second) as b:
        pairs = list(zip(json.load(a), json.load(b), strict=True))
    for x, y in pairs:
        rx, ry = x["r"], y["r"]
        keys = (set(rx["stats"]) | set(ry["stats"])) - allowed
        differ = {k: (rx["stats"].get(k), ry["stats"].get(k)) for k in sorted(keys)}
        differ = {k: v for k, v in differ.items() if v[0] != v[1]}
        same = {k: v for k, v in rx.items() if k != "stats"} == {
            k: v for k, v in ry.items() if k != "stats"
        }
        moved = {k: (rx["stats"].get(k), ry["stats"].get(k)) for k in sorted(allowed)}
        moved = {k: v for k, v in moved.items() if v[0] != v[1]}
        print("SAME" if same and not differ else "DIFF", x["q"], x["kw"], "stats:", differ, moved)


def main() -> None:
    if sys.argv[1] == "--compare":
        # --compare A B [--allow candidates,blocks_scanned]: those stats may differ
        allowed = set(sys.argv[5].split(",")) if sys.argv[4:5] == ["--allow"] else set()
        compare(sys.argv[2], sys.argv[3], allowed)
    else:
        dump(sys.argv[1], "--occurring" in sys.argv[2:], "--stop" in sys.argv[2:])


if __name__ == "__main__":
    main()
