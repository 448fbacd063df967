"""Search results equal a brute-force scan of the same records (property-based).

Random records (unicode, NUL bytes, tiny blocks so the trigram signatures
prune across many blocks) go through the real pipeline: a real JSONL file,
discovery, the test parser, refresh. Random queries built from their words
and substrings (phrases, OR, NOT, parentheses, fields, -w, -i/-s, regex) are
compared, as result sets, to a straightforward oracle over the records.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agentdex.api import search as api
from agentdex.index import segments
from agentdex.search import plan as search_plan
from agentdex.search.query import And, Field, Node, Not, Or, Term, parse_query
from test_index_fixtures import ROWS, register, store_dir, write_file

WORDS = ["retry", "backoff", "Retry", "BACKOFF", "the", "tests", "fix", "ok", "a", "x1", "foo_bar"]
ODD = [
    "é",
    "É",
    "ß",
    "İ",
    "Σ",
    "ς",
    "K",
    "ſ",
    "日本",
    "🙂",
    "\x00",
    "\n",
    "  ",
    "-",
    "'",
    ".",
    "(",
    "?",
]
AGENT_SESSIONS = ["s-alpha", "s-beta", "t-gamma"]
CWDS = [
    None,
    "/nonexistent/proj",
    "/nonexistent/proj/sub",
    "/nonexistent/other",
    "/nonexistent/projx",
]

fragments = st.sampled_from(WORDS + ODD + [" "] * 6)
texts = st.lists(fragments, min_size=0, max_size=14).map("".join)
records = st.fixed_dictionaries(
    {
        "session": st.sampled_from(AGENT_SESSIONS),
        "role": st.sampled_from(["user", "assistant", "tool"]),
        "kind": st.sampled_from(["prompt", "message", "tool_result"]),
        "text": texts,
        "ts": st.one_of(st.none(), st.integers(1_700_000_000, 1_800_000_000)),
        "cwd": st.sampled_from(CWDS),
        "model": st.sampled_from([None, "gpt-5", "claude-opus"]),
        "branch": st.sampled_from([None, "main", "feat/x"]),
    }
)
corpora = st.lists(records, min_size=1, max_size=25)


def _sensitive(node: Node | None, case: str, regex: bool) -> bool:
    if case != "smart":
        return case == "sensitive"
    found = []

    def walk(n: Node) -> None:
        if isinstance(n, Term):
            found.append(re.sub(r"\\.", "", n.text) if regex else n.text)
        elif isinstance(n, Not):
            walk(n.child)
        elif isinstance(n, And | Or):
            for c in n.children:
                walk(c)

    if node is not None:
        walk(node)
    return any(t != t.lower() for t in found)


def _term(text: str, t: str, sensitive: bool, word: bool, regex: bool) -> bool:
    if regex:
        flags, body = re.match(r"^(\(\?[aiLmsux]+\))?(.*)$", t, re.S).groups()  # type: ignore[union-attr]
        pattern = f"{flags or ''}(?<!\\w)(?:{body})(?!\\w)" if word else t
        return re.search(pattern, text, 0 if sensitive else re.IGNORECASE) is not None
    hay, needle = (text, t) if sensitive else (text.lower(), t.lower())
    if word:
        return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", hay) is not None
    return needle in hay


def _field(rec: dict[str, Any], f: Field) -> bool:
    value = f.value
    column = {"session": "session", "project": "cwd", "cwd": "cwd", "path": "path"}.get(
        f.name, f.name
    )
    actual = rec.get(column)
    if f.name == "session":
        return str(actual).startswith(value)
    if f.name == "agent":
        return value == "claude-code"  # the test store's agent
    if f.name in ("role", "kind"):
        return actual == value
    if f.name in ("since", "until"):
        ts = rec.get("ts")
        assert f.time is not None
        return ts is not None and (ts >= f.time if f.name == "since" else ts <= f.time)
    if actual is None:
        return False
    if f.name in ("project", "cwd", "path", "worktree") and value.startswith("/"):
        prefix = value.rstrip("/") or "/"
        return actual == prefix or actual.startswith(prefix.rstrip("/") + "/")
    return value.lower() in str(actual).lower()


def oracle(recs: list[dict[str, Any]], query: str, case: str, word: bool, regex: bool) -> set:
    node = parse_query(query, regex=regex)
    assert node is not None
    sensitive = _sensitive(node, case, regex)

    def ev(n: Node, rec: dict[str, Any]) -> bool:
        if isinstance(n, Term):
            return _term(rec["text"], n.text, sensitive, word, regex)
        if isinstance(n, Field):
            return _field(rec, n)
        if isinstance(n, Not):
            return not ev(n.child, rec)
        if isinstance(n, And):
            return all(ev(c, rec) for c in n.children)
        assert isinstance(n, Or)
        return any(ev(c, rec) for c in n.children)

    return {(r["session"], f"line:{i + 1}") for i, r in enumerate(recs) if ev(node, r)}


def _quote(s: str) -> str:
    return '"' + s.replace('"', '\\"') + '"'


@st.composite
def queries(draw: st.DrawFn, recs: list[dict[str, Any]]) -> tuple[str, str, bool, bool]:
    corpus_text = " ".join(r["text"] for r in recs) or "retry"
    words = [w for w in re.split(r"[\s\x00()\"]+", corpus_text) if w and not w.startswith("-")]
    words = words or ["retry"]

    def atom() -> str:
        choice = draw(st.integers(0, 5))
        if choice == 0:
            return draw(st.sampled_from(words))
        if choice == 1:
            start = draw(st.integers(0, max(0, len(corpus_text) - 1)))
            length = draw(st.integers(1, 8))
            piece = corpus_text[start : start + length]
            return _quote(piece) if piece.strip('"') else "retry"
        if choice == 2:
            return draw(st.sampled_from(WORDS))
        if choice == 3:
            return draw(
                st.sampled_from(
                    [
                        "session:s-",
                        "role:user",
                        "kind:prompt",
                        "cwd:/nonexistent/proj",
                        "project:proj",
                        "model:GPT",
                        "branch:feat",
                        "since:2025-01-01",
                        "until:2025-06-30",
                        "agent:claude-code",
                    ]
                )
            )
        if choice == 4:
            return _quote(draw(st.sampled_from(words)) + " " + draw(st.sampled_from(words)))
        return draw(st.sampled_from(ODD[:8]))

    shape = draw(st.integers(0, 6))
    a, b, c = atom(), atom(), atom()
    shapes = [a, f"{a} {b}", f"{a} OR {b}", f"{a} -{b}", f"( {a} OR {b} ) {c}", f"NOT {a}"]
    query = [*shapes, f"{a} {b} {c}"][shape]
    case = draw(st.sampled_from(["smart", "insensitive", "sensitive"]))
    word = draw(st.booleans())
    return query, case, word, False


REGEXES = [
    "re.ry",
    "ba[ck]+off",
    r"\bfix\b",
    "^retry",
    "off$",
    "x1|ok",
    "(?i)RETRY",
    "é|ß",
    r"\d",
    "Σ",
    "k",
]


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    register()
    monkeypatch.setattr(segments, "BLOCK_BYTES", 48)


def _index(home: Path, root: Path, recs: list[dict[str, Any]]) -> None:
    write_file(store_dir(home) / "corpus.jsonl", recs)
    api.refresh(root, home=str(home), rows=ROWS)


def _engine_set(root: Path, query: str, case: str, word: bool, regex: bool) -> set:
    result = api.search(
        query,
        root=root,
        refresh_first=False,
        case=case,
        word=word,
        regex=regex,
        limit=None,
        dedup=False,
    )
    return {(r["session_id"], r["locator"]) for r in result.results}


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)
@given(data=st.data(), recs=corpora)
def test_search_equals_brute_force(home: Path, data: st.DataObject, recs: list[dict]) -> None:
    work = Path(tempfile.mkdtemp(dir=home))
    # how an AND weighs its next word once counted (plan.py's cost model): as measured;
    # every word pays (looked up, intersected with the cheapest counted one); and with
    # pairs too big to collect (the whole AND counted again); no word pays (verified);
    # words weighed before the first count pay (each a bit of its candidates' scores),
    # all of them, one (the others intersected after it), or more candidates than
    # expected (too many to collect: the words are counted with the AND later)
    costs = data.draw(
        st.sampled_from(
            [
                {},
                {"VERIFY_US": 1e12, "TOGETHER": 0.0},
                {"VERIFY_US": 1e12, "TOGETHER": 0.0, "PAIRED": 1},
                {"VERIFY_US": 0.0},
                {"VERIFY_US": 1e300, "TOGETHER": 1e-30},
                {"VERIFY_US": 1e300, "TOGETHER": 1e-30, "BITS": 1},
                {"VERIFY_US": 1e300, "TOGETHER": 1e-30, "COLLECT": 1},
            ]
        )
    )
    try:
        with contextlib.ExitStack() as stack:
            for name, value in costs.items():
                stack.enter_context(mock.patch.object(search_plan, name, value))
            _compare_queries(work, data, recs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _compare_queries(work: Path, data: st.DataObject, recs: list[dict]) -> None:
    """Random queries over ``recs`` indexed under ``work``: the engine's answers are the
    oracle's."""
    fake_home, root = work / "home", work / "index"
    _index(fake_home, root, recs)
    for _ in range(6):
        query, case, word, regex = data.draw(queries(recs))
        expected = oracle(recs, query, case, word, regex)
        assert _engine_set(root, query, case, word, regex) == expected, (query, case, word)
    for pattern in data.draw(st.lists(st.sampled_from(REGEXES), min_size=1, max_size=3)):
        case = data.draw(st.sampled_from(["smart", "insensitive", "sensitive"]))
        word = data.draw(st.booleans())
        expected = oracle(recs, pattern, case, word, True)
        assert _engine_set(root, pattern, case, word, True) == expected, (pattern, case, word)


def test_many_blocks_prune_and_stay_exact(home: Path, tmp_path: Path) -> None:
    """Hundreds of tiny blocks: selective terms scan few blocks and still match the oracle."""
    recs = [
        {
            "session": f"s{i % 7}",
            "role": "user",
            "kind": "prompt",
            "ts": 1_750_000_000 + i,
            "text": f"record {i} " + ("needle-{i}" if i % 97 == 0 else "hay " * (i % 5)),
        }
        for i in range(600)
    ]
    for i in range(0, 600, 97):
        recs[i]["text"] = f"record {i} uniqueneedle{i}"
    _index(home, tmp_path / "idx", recs)
    for query in ["uniqueneedle", "uniqueneedle194", "record 5", "hay -record", "needle OR hay"]:
        result = api.search(
            query, root=tmp_path / "idx", refresh_first=False, limit=None, dedup=False
        )
        got = {(r["session_id"], r["locator"]) for r in result.results}
        assert got == oracle(recs, query, "smart", False, False), query
    selective = api.search("uniqueneedle194", root=tmp_path / "idx", refresh_first=False)
    assert selective.stats["blocks"] > 100
    assert selective.stats["blocks_scanned"] <= 5
    assert [r["text"] for r in selective.results] == ["record 194 uniqueneedle194"]


def test_unicode_case_edge_cases(home: Path, tmp_path: Path) -> None:
    texts = [
        "ΑΣ",
        "Σ",
        "straße",
        "STRASSE",
        "İstanbul",
        "\u212aelvin",
        "ſecret",
        "a\x00b",
        "日本語",
    ]
    recs = [{"session": "s", "role": "user", "kind": "prompt", "text": t} for t in texts]
    _index(home, tmp_path / "idx", recs)
    cases = itertools.product(
        [
            "σ",
            "Σ",
            "ας",
            "straße",
            "strasse",
            "istanbul",
            "i̇stanbul",
            "kelvin",
            "secret",
            "a\x00b",
            "本",
            "ß",
        ],
        ["smart", "insensitive", "sensitive"],
        [False, True],
    )
    for needle, case, word in cases:
        query = _quote(needle)
        got = _engine_set(tmp_path / "idx", query, case, word, False)
        assert got == oracle(recs, query, case, word, False), (needle, case, word)
    for pattern in ["k", "s", "i", "kelvin", "secret", "(?i)SECRET"]:
        for case in ("insensitive", "sensitive"):
            got = _engine_set(tmp_path / "idx", pattern, case, False, True)
            assert got == oracle(recs, pattern, case, False, True), (pattern, case)


@pytest.mark.parametrize(
    "costs",
    [
        {},
        {"VERIFY_US": 1e300, "TOGETHER": 1e-30},
        {"VERIFY_US": 1e300, "TOGETHER": 1e-30, "BITS": 1},
        {"VERIFY_US": 1e300, "TOGETHER": 1e-30, "COLLECT": 1},
        {"VERIFY_US": 1e12, "TOGETHER": 0.0},
    ],
)
def test_words_of_an_and_narrow_exactly(home: Path, tmp_path: Path, costs: dict) -> None:
    """Every AND of two or three words (each inside other words too: ``retry`` in
    ``retrying``) over records holding some of them: whichever way the planner narrows
    the candidates (bits of the first count, pairs, verification), the oracle's answer."""
    words = ["retry", "backoff", "jitter", "loop", "table"]
    recs = [
        {
            "session": "s-alpha",
            "role": "user",
            "kind": "prompt",
            "text": " ".join(
                (w if (i >> k) & 1 else "") + ("ing" if (i >> (k + 5)) & 1 else "")
                for k, w in enumerate(words)
            ),
        }
        for i in range(0, 1024, 7)
    ]
    _index(home, tmp_path / "idx", recs)
    queries = [" ".join(c) for n in (2, 3) for c in itertools.permutations(words, n)]
    with contextlib.ExitStack() as stack:
        for name, value in costs.items():
            stack.enter_context(mock.patch.object(search_plan, name, value))
        for query in queries:
            got = _engine_set(tmp_path / "idx", query, "smart", False, False)
            assert got == oracle(recs, query, "smart", False, False), query
