"""Teach schema-driven fuzzers (schemathesis) agentdex's custom string formats.

``format: agentdex-query`` marks a query in the agentdex query language
(``docs/query-language.md``), a grammar no JSON Schema pattern can state. A
fuzzer that does not know the format treats it as any string and then
"finds" malformed queries that the API rightly answers with a documented
400. (A time of the context history, ``at``/``from``/``to``, is a regular
language: its ``pattern`` in the schema states every accepted form.) Load
with ``SCHEMATHESIS_HOOKS=schemathesis_hooks`` (this folder on ``PYTHONPATH``);
``tests/test_openapi_contract.py`` does.

Generated queries cover words, exclusions, phrases, ``OR`` and field
filters, and stay valid with ``regex=true`` too (plain words are regexes).
"""

from __future__ import annotations

import schemathesis
from hypothesis import strategies as st

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8).filter(
    lambda w: w.upper() not in {"OR", "AND", "NOT"}
)
_FILTER = st.one_of(
    st.sampled_from(["claude-code", "codex", "gemini-cli", "cursor", "aider"]).map(
        lambda a: f"agent:{a}"
    ),
    st.sampled_from(["user", "assistant", "tool", "system"]).map(lambda r: f"role:{r}"),
    st.sampled_from(["prompt", "message", "tool_call"]).map(lambda k: f"kind:{k}"),
    st.sampled_from(["7d", "12h", "2w", "today", "2026-01-31"]).map(lambda t: f"since:{t}"),
)
_POSITIVE = st.one_of(
    _WORD,
    st.lists(_WORD, min_size=2, max_size=3).map(lambda ws: '"' + " ".join(ws) + '"'),
    st.tuples(_WORD, _WORD).map(lambda ab: f"{ab[0]} OR {ab[1]}"),
)
QUERY = st.tuples(
    _POSITIVE,
    st.lists(st.one_of(_WORD, _WORD.map(lambda w: f"-{w}"), _FILTER), max_size=3),
).map(lambda parts: " ".join([parts[0], *parts[1]]))

schemathesis.openapi.format("agentdex-query", QUERY)
