"""Snippets of tool calls read as text, not JSON escapes (issue 26 item 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agentdex.search.snippets import highlight_patterns, make_snippet, readable_call
from corpus_support import cli, render_corpus_home


def test_a_call_reads_as_its_name_and_arguments() -> None:
    text = 'Bash {"command":"pytest -q -k \\"case_5\\"\\necho \\"done\\"","description":"Run"}'
    assert (
        readable_call(text) == 'Bash command: pytest -q -k "case_5"\necho "done" description: Run'
    )
    assert (
        readable_call('write_file({"file_path":"Cargo.toml"})')
        == "write_file file_path: Cargo.toml"
    )
    assert readable_call('shell {"command":["bash","-lc","sed -n 1,40p a.rs"]}') == (
        "shell command: bash -lc sed -n 1,40p a.rs"
    )
    assert readable_call('TodoWrite {"todos":[{"content":"a b","status":"done"}]}') == (
        "TodoWrite todos: content: a b status: done"
    )
    assert readable_call("Edit {not json}") == "Edit {not json}"  # left as it is
    assert readable_call("Running the tests $ pytest") == "Running the tests $ pytest"


def test_the_snippet_of_a_call_has_no_escapes_and_its_highlights_land() -> None:
    text = 'Edit {"old_string":"- [ ] **NICE-4:** a\\n- [ ] **NICE-7:** Sti \\"b\\"","all":false}'
    patterns = highlight_patterns(["NICE-7"], regex=False, sensitive=False)
    snippet, spans = make_snippet(text, patterns, kind="tool_call")
    assert "\\n" not in snippet and '\\"' not in snippet and "all:" not in snippet
    assert [snippet[a:b] for a, b in spans] == ["NICE-7"]
    raw, _ = make_snippet(text, patterns)  # another kind keeps its text as it is
    assert "\\n" in raw


def test_no_escapes_in_tool_call_snippets_on_the_real_home(tmp_path: Path) -> None:
    _home, env = render_corpus_home(tmp_path / "home", messages=20)
    out = cli(env, "search", "kind:tool_call", "the", "--json", "-n", "200")
    results = json.loads(out.stdout)["results"]
    assert len(results) > 50
    escaped = re.compile(r'\\[n"t]')
    for r in results:  # each snippet is cut from the decoded call (escapes only where typed)
        decoded = " ".join(readable_call(r["text"]).split())
        assert r["snippet"].strip("…") in decoded, r["snippet"]
    raw_escapes = [r for r in results if escaped.search(" ".join(r["text"].split())[:400])]
    assert raw_escapes  # the corpus has calls whose JSON holds escapes ...
    assert sum(bool(escaped.search(r["snippet"])) for r in results) < len(raw_escapes) / 4
