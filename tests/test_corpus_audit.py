"""``agentdex audit`` on a home built from the shared corpus: no problem, and the figures the
corpus MANIFEST states independently come out of the parsers."""

from __future__ import annotations

import json
from pathlib import Path

from corpus_support import cli, render_corpus_home

#: MANIFEST §3: input-history entries per Aider project.
AIDER_INPUT_ENTRIES = {"mozgoslav": 24, "afi-core": 90, "zen-mcp-server": 8}
#: MANIFEST §6: event user_message lines of the agrep Codex rollouts that have them.
CODEX_EVENT_PROMPTS = {"rollout-2026-01-02T10-00-00-22222222-2222-4222-8222-222222222222.jsonl": 2}


def test_audit_of_the_corpus_home_matches_the_manifest(tmp_path: Path) -> None:
    home, env = render_corpus_home(tmp_path / "home", messages=40)
    done = cli(env, "audit", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    totals = report["totals"]
    assert totals["problems"] == totals["role_mismatches"] == totals["drift"] == 0
    assert totals["units"] == totals["raw"] and totals["prompts"] == totals["raw_prompts"]
    assert totals["replies"] == totals["raw_replies"]
    by_file = {Path(s["path"]).relative_to(home).as_posix(): s for s in report["sources"]}
    inputs = {
        Path(p).parent.name: s["units"]
        for p, s in by_file.items()
        if s["store"] == "aider.input_history"
    }
    assert inputs == AIDER_INPUT_ENTRIES
    for name, prompts in CODEX_EVENT_PROMPTS.items():
        (source,) = [s for p, s in by_file.items() if p.endswith(name)]
        assert source["roles"]["prompts"] == source["roles"]["raw_prompts"] == prompts
