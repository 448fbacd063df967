"""Real transcripts (the shared corpus) through the real pipeline: search == brute force."""

from __future__ import annotations

import random
import re
import shutil
from collections import Counter
from pathlib import Path

from agentdex.api import search as api
from agentdex.discovery import discover
from agentdex.parsers import ParseCursor, run
from agentdex.readers import Diagnostics


def test_real_claude_transcripts_match_a_brute_force_scan(corpus: Path, home: Path) -> None:
    shutil.copytree(corpus / "claude-code" / "projects", home / ".claude" / "projects")
    stats = api.refresh(home=str(home))
    assert stats.records_added > 1000 and stats.files_failed == 0
    records = [
        r
        for source in discover(str(home)).sources
        if source.row.parser
        for r in run(source, ParseCursor(), Diagnostics())
    ]
    assert len(records) == stats.records_added
    rng = random.Random(7)
    words = [w for r in rng.sample(records, 60) for w in re.findall(r"\w{3,}", r.text)[:2]]
    queries = [*rng.sample(words, 20), "the", "ok", "import", "Error", "{"]
    for query in queries:
        sensitive = query != query.lower()  # smart case
        expected = Counter(
            (r.source_path, r.locator, r.kind)
            for r in records
            if (query in r.text if sensitive else query in r.text.lower())
        )
        quoted = '"' + query.replace('"', '\\"') + '"'
        result = api.search(quoted, refresh_first=False, limit=None, dedup=False)
        got = Counter((x["source_path"], x["locator"], x["kind"]) for x in result.results)
        assert got == expected, query
