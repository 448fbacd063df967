"""Dump the JSON answers of a fixed query set (compare two checkouts' answers on one index).

    AGENTDEX_DATA_DIR=W AGENTDEX_CONFIG=W/no-config.toml PYTHONPATH=SRC \\
        python bench/search_answers.py HOME > answers.json
    python bench/search_answers.py --compare A.json B.json

The 22 queries of the s5-lexb set (the bench_search classes at 1 GB and
variations: case, -w, time order, fields, NOT, short words) plus three
regexes (``token``, ``Kafka|worker`` ignoring case, the class regex matching
case), with a fixed ``now``, ``refresh_first=False`` and ``limit=20``; each
answer's ``stats.seconds``/``refresh`` dropped. ``--compare`` prints SAME or
DIFF per query (results, highlights, status, every other stats field; the
stats fields that differ are listed either way).
"""

from __future__ import annotations

import json
import sys
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


def dump(home: str) -> None:
    from agentdex.api import search as api

    out = []
    for query, options in QUERIES:
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


def compare(first: str, second: str) -> None:
    with open(first) as a, open(second) as b:
        pairs = list(zip(json.load(a), json.load(b), strict=True))
    for x, y in pairs:
        rx, ry = x["r"], y["r"]
        keys = set(rx["stats"]) | set(ry["stats"])
        differ = {k: (rx["stats"].get(k), ry["stats"].get(k)) for k in sorted(keys)}
        differ = {k: v for k, v in differ.items() if v[0] != v[1]}
        same = {k: v for k, v in rx.items() if k != "stats"} == {
            k: v for k, v in ry.items() if k != "stats"
        }
        print("SAME" if same and not differ else "DIFF", x["q"], x["kw"], "stats:", differ)


def main() -> None:
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        dump(sys.argv[1])


if __name__ == "__main__":
    main()
