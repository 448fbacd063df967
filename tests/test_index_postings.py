"""The postings half of the index: recovery, term list, long tokens, old formats, first pages."""

from __future__ import annotations

import random
import sqlite3
import time
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentdex.api import search as api
from agentdex.index import postings
from agentdex.index.store import Location, index_root
from agentdex.search import run as search_run
from test_index_fixtures import ROWS, register, store_dir, write_file


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def rec(text: str, session: str = "s1", **extra: object) -> dict[str, object]:
    return {"session": session, "role": "user", "kind": "prompt", "text": text, **extra}


def refresh(home: Path) -> api.RefreshStats:  # type: ignore[name-defined]
    return api.refresh(home=str(home), rows=ROWS)


def found(query: str, **kw: object) -> list[str]:
    result = api.search(query, refresh_first=False, limit=None, dedup=False, **kw)  # type: ignore[arg-type]
    return sorted(r["text"] for r in result.results)


def meta(key: str) -> int:
    gen = Location(index_root()).current()
    assert gen is not None
    db = sqlite3.connect(gen / "index.db")
    try:
        return int(db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0])
    finally:
        db.close()


def test_substrings_phrases_and_words_come_from_the_postings(home: Path) -> None:
    write_file(
        store_dir(home) / "a.jsonl",
        [
            rec("autoretry with exponential backoff"),
            rec("retry-backoff: x = 1; foo.bar(baz)"),
            rec("café naïve 日本語 текст"),
            rec("nothing to see"),
        ],
    )
    refresh(home)
    assert found("retry") == [
        "autoretry with exponential backoff",
        "retry-backoff: x = 1; foo.bar(baz)",
    ]
    assert found('"try with expo"') == ["autoretry with exponential backoff"]
    assert found('"x = 1; fo"') == ["retry-backoff: x = 1; foo.bar(baz)"]
    assert found('"o.bar(b"') == ["retry-backoff: x = 1; foo.bar(baz)"]
    assert found("本語") == ["café naïve 日本語 текст"]
    assert found('"fé na"') == ["café naïve 日本語 текст"]
    assert found("retry", word=True) == ["retry-backoff: x = 1; foo.bar(baz)"]
    exact = api.search("backoff", refresh_first=False)
    assert exact.stats["total_exact"] and exact.stats["matched_records"] == 2


def test_new_words_are_searchable_right_after_an_append(home: Path) -> None:
    path = store_dir(home) / "a.jsonl"
    write_file(path, [rec("first words")] * 3)
    refresh(home)
    write_file(path, [rec("a quokkaflux appears")], mode="ab")
    stats = refresh(home)
    assert stats.files_resumed == 1
    assert found("okkaflu") == ["a quokkaflux appears"]
    gen = Location(index_root()).current()
    assert gen is not None and (gen / postings.VOCAB_DELTA).exists()
    assert meta("vocab_rid") == meta("postings_rid") == 5


def test_a_token_too_long_for_the_postings_is_still_found(home: Path) -> None:
    blob = "x" * 70_000 + "needle" + "y" * 10
    write_file(store_dir(home) / "a.jsonl", [rec(f"start {blob} end"), rec("plain text")])
    refresh(home)
    assert found("xneedley") == [f"start {blob} end"]
    assert found("needle") == [f"start {blob} end"]
    assert found("plain") == ["plain text"]


def test_a_writer_killed_between_its_commits_loses_nothing(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store_dir(home) / "a.jsonl"
    write_file(path, [rec("alpha one"), rec("alpha two")])
    refresh(home)
    write_file(path, [rec("alpha three"), rec("wombat")], mode="ab")

    def die(self: postings.PostingsWriter) -> None:
        raise KeyboardInterrupt  # the process ends after SQLite committed the batch

    with monkeypatch.context() as patch, pytest.raises(KeyboardInterrupt):
        patch.setattr(postings.PostingsWriter, "commit", die)
        refresh(home)
    # SQLite holds the new records; the postings do not: readers verify the tail directly
    assert meta("postings_rid") == 3
    assert found("alpha") == ["alpha one", "alpha three", "alpha two"]
    assert found("wombat") == ["wombat"]
    refresh(home)  # the next writer replays the batch into the postings
    assert meta("postings_rid") == 5
    assert found("wombat") == ["wombat"]
    result = api.search("alpha", refresh_first=False)
    assert result.stats["total_exact"] and result.stats["matched_records"] == 3


def test_an_index_in_the_old_format_is_rebuilt_with_one_line(home: Path) -> None:
    write_file(store_dir(home) / "a.jsonl", [rec("kept across formats")])
    refresh(home)
    gen = Location(index_root()).current()
    assert gen is not None
    db = sqlite3.connect(gen / "index.db")
    db.execute("UPDATE meta SET value = 'agentdex-index-2' WHERE key = 'format'")
    db.commit()
    db.close()
    warnings: list[str] = []
    stats = api.refresh(home=str(home), rows=ROWS, warn=warnings.append)
    assert stats.rebuilt
    assert len(warnings) == 1 and "older agentdex" in warnings[0]
    assert "\n" not in warnings[0]
    assert found("formats") == ["kept across formats"]


def test_the_first_page_is_the_exact_top_without_verifying_every_match(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    now = time.time()
    kinds = [("user", "prompt"), ("assistant", "message"), ("tool", "tool_result")]
    records = []
    for i in range(400):
        role, kind = rng.choice(kinds)
        filler = " ".join(
            rng.choice(["lorem", "ipsum", "dolor", "sit"]) for _ in range(rng.randint(1, 300))
        )
        records.append(
            {
                "session": f"s{i % 9}",
                "role": role,
                "kind": kind,
                "text": f"the record {i} {filler}",
                "ts": now - rng.uniform(0, 200 * 86400),
            }
        )
    write_file(store_dir(home) / "a.jsonl", records)
    refresh(home)
    whole = api.search("the", refresh_first=False, limit=15, exact_total=True)
    assert whole.stats["mode"] == "whole" and whole.stats["total_exact"]
    monkeypatch.setattr(search_run, "FULL_EXACT", 10)
    monkeypatch.setattr(search_run, "FULL_VERIFIED", 10)
    monkeypatch.setattr("agentdex.search.ranking.REFINE", 30)
    first = api.search("the", refresh_first=False, limit=15)
    assert first.stats["mode"] == "first-page"
    assert not first.stats["total_exact"] and first.stats["matched_records"] == 400
    assert first.stats["total"] >= 15
    ranked = api.search("the", refresh_first=False, limit=15, exact_total=True)
    assert [r["ref"] for r in first.results] == [r["ref"] for r in ranked.results]
    # a plan that needs verification (-w) streams the same candidates and takes the same page
    verified = api.search("the", word=True, refresh_first=False, limit=15)
    assert verified.stats["mode"] == "first-page" and verified.stats["matched_records"] is None
    assert [r["ref"] for r in verified.results] == [r["ref"] for r in ranked.results]
    by_time = api.search("record", refresh_first=False, limit=5, sort="time")
    newest = sorted(records, key=lambda r: -float(r["ts"]))[:5]  # type: ignore[arg-type]
    assert [r["text"] for r in by_time.results] == [r["text"] for r in newest]


def test_vocabulary_lookups(tmp_path: Path) -> None:
    terms = [("retry", 40), ("autoretry", 3), ("retrying", 7), ("backoff", 9), ("x1999", 1999)]
    postings.write_vocabulary(tmp_path, terms)
    postings.append_vocabulary(tmp_path, ["retrofit"])
    vocab = postings.Vocabulary(tmp_path)
    try:
        assert vocab.lookup("retr", starts=True, ends=False, limit=10) == (
            ["retrofit", "retry", "retrying"],
            40,
        )
        assert vocab.lookup("retry", starts=False, ends=True, limit=10) == (
            ["autoretry", "retry"],
            40,
        )
        assert vocab.lookup("try", starts=False, ends=False, limit=10)[0] == [
            "autoretry",
            "retry",
            "retrying",
        ]
        assert vocab.lookup("r", starts=False, ends=False, limit=2)[0] is None
        assert vocab.lookup("zzz", starts=False, ends=False, limit=5) == ([], 0)
        # digits of a record count are not part of any term
        assert vocab.lookup("99", starts=False, ends=False, limit=5) == (["x1999"], 1999)
        assert vocab.lookup("40", starts=False, ends=False, limit=5) == ([], 0)
        # expand also sums the terms' record counts (a delta term's unknown count as 1):
        # at most that many records hold the token, what the planner estimates with
        assert vocab.expand("try", starts=False, ends=False, limit=10) == (
            ["autoretry", "retry", "retrying"],
            40,
            50,
        )
        assert vocab.expand("retr", starts=True, ends=False, limit=10).total == 48
        assert vocab.expand("retrof", starts=False, ends=False, limit=10).total == 1
    finally:
        vocab.close()


_TERM = st.text(alphabet="ab0é日", min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(
    terms=st.dictionaries(_TERM, st.integers(0, 99), max_size=40),
    delta=st.lists(_TERM, max_size=3),
    token=_TERM,
    limit=st.integers(1, 6),
)
def test_a_sorted_list_finds_prefixes_as_the_scan_does(
    tmp_path_factory: pytest.TempPathFactory,
    terms: dict[str, int],
    delta: list[str],
    token: str,
    limit: int,
) -> None:
    """Bisection (sorted list) and the byte scan (the same terms unsorted) agree."""
    found = {}
    for order in ("sorted", "unsorted"):
        gen = tmp_path_factory.mktemp(order)
        items = sorted(terms.items())
        postings.write_vocabulary(gen, items if order == "sorted" else items[::-1])
        postings.append_vocabulary(gen, delta)
        vocab = postings.Vocabulary(gen)
        try:
            bisects = vocab.sorted_blob is not None
            assert bisects == (order == "sorted" or len(items) < 2)  # one term: both sorted
            found[order] = vocab.lookup(token, starts=True, ends=False, limit=limit)
            # the hex-only terms' section (a sorted list's second) is read only for a token
            # of hex digits: the substring and suffix scans find what the unsorted list has
            for starts, ends in ((False, False), (False, True)):
                found[(order, ends)] = vocab.lookup(token, starts=starts, ends=ends, limit=50)
        finally:
            vocab.close()
    expected = {t for t in [*terms, *delta] if t.startswith(token)}
    true_most = max((terms.get(t, 0) for t in expected), default=0)
    for terms_found, most in (found["sorted"], found["unsorted"]):
        if terms_found is None:  # stopped early: ``most`` is a lower bound of what it saw
            assert len(expected) > limit and most <= true_most
        else:
            assert set(terms_found) == expected and most == true_most
    assert found["sorted"][0] == found["unsorted"][0]
    for ends in (False, True):
        inside = {t for t in [*terms, *delta] if (t.endswith(token) if ends else token in t)}
        assert found[("sorted", ends)][0] == found[("unsorted", ends)][0] == sorted(inside)


@settings(max_examples=150, deadline=None)
@given(
    terms=st.dictionaries(_TERM, st.integers(0, 999), max_size=40),
    token=st.text(alphabet="ab0é", min_size=1, max_size=3),
    limit=st.integers(1, 50),
    window=st.integers(1, 9),
)
def test_a_scan_in_small_windows_finds_what_one_pass_finds(
    tmp_path_factory: pytest.TempPathFactory,
    terms: dict[str, int],
    token: str,
    limit: int,
    window: int,
) -> None:
    """The term list is read in windows (``postings._occurrences``): a hit across two
    windows, overlapping hits and hits in the record counts are found as in one pass, and
    the answer is the terms that hold the token (their counts, the limit) either way."""
    gen = tmp_path_factory.mktemp("windows")
    postings.write_vocabulary(gen, sorted(terms.items()))
    vocab = postings.Vocabulary(gen)
    try:
        for starts, ends in ((False, False), (False, True), (True, True)):
            whole = vocab.expand(token, starts=starts, ends=ends, limit=limit)
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(postings, "FIRST_WINDOW", window)
                patch.setattr(postings, "LAST_WINDOW", window * 4)
                small = vocab.expand(token, starts=starts, ends=ends, limit=limit)
            assert small == whole
            held = {
                t: c
                for t, c in terms.items()
                if (t == token if starts and ends else t.endswith(token) if ends else token in t)
            }
            if len(held) > limit:
                assert whole.terms is None
            else:
                assert whole.terms == sorted(held)
                assert whole.most == max(held.values(), default=0)
    finally:
        vocab.close()


def test_a_built_term_list_is_sorted_and_bisected(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.index import writer

    monkeypatch.setattr(writer, "VOCAB_DELTA_BYTES", 0)  # rebuild the list, as big builds do
    texts = [f"zeta{i} alpha{i % 7} 日本{i} 0x{i:04x} c0ffee{i}" for i in range(300)]
    write_file(store_dir(home) / "a.jsonl", [rec(t) for t in texts])
    refresh(home)
    gen = Location(index_root()).current()
    assert gen is not None
    listed = (gen / postings.VOCAB_FILE).read_bytes()
    *lines, mark = listed.splitlines()
    # two sorted sections: the terms of hex digits only (c0ffee12) after the others
    assert mark.startswith(postings.SPLIT_MARK)
    split = int(mark[len(postings.SPLIT_MARK) :])
    others = [line.split(b"\t", 1)[1] for line in listed[:split].splitlines()]
    hexes = [line.split(b"\t", 1)[1] for line in listed[split:].splitlines()[:-1]]
    assert hexes == sorted(hexes) and set(hexes) == {f"c0ffee{i}".encode() for i in range(300)}
    assert others == sorted(others) and len(others) + len(hexes) == len(set(lines))
    assert not any(set(name) <= set(b"0123456789abcdef") for name in others)
    vocab = postings.Vocabulary(gen)
    try:
        assert vocab.sorted_blob is not None
        assert vocab.lookup("alpha", starts=True, ends=False, limit=20)[0] == [
            f"alpha{i}" for i in range(7)
        ]
        assert vocab.lookup("c0ffee29", starts=True, ends=False, limit=20)[0] == sorted(
            ["c0ffee29", *[f"c0ffee{n}" for n in range(290, 300)]]
        )
        assert vocab.lookup("ffee3", starts=False, ends=True, limit=20)[0] == ["c0ffee3"]
        assert vocab.lookup("0x000", starts=True, ends=False, limit=20)[0] == [
            f"0x{i:04x}" for i in range(16)
        ]
        assert vocab.lookup("日本29", starts=True, ends=False, limit=20)[0] == [
            "日本29",
            *[f"日本{n}" for n in range(290, 300)],
        ]
    finally:
        vocab.close()
    hits = api.search('"alpha3 日本" zeta', refresh_first=False, limit=500)
    assert hits.stats["total"] == len([t for t in texts if "alpha3 日本" in t])


def test_the_full_term_list_covers_terms_starting_with_any_character(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.index import writer

    monkeypatch.setattr(writer, "VOCAB_DELTA_BYTES", 0)  # rebuild the list, as big builds do
    texts = ["日本語の説明", "café ßtraße", "Ωmega point", "9lives and ｆｕｌｌｗｉｄｔｈ"]
    write_file(store_dir(home) / "a.jsonl", [rec(t) for t in texts])
    refresh(home)
    gen = Location(index_root()).current()
    assert gen is not None and not (gen / postings.VOCAB_DELTA).exists()
    assert found("本語") == ["日本語の説明"]
    assert found("traß") == ["café ßtraße"]
    assert found("ωmeg") == ["Ωmega point"]
    assert found("lives") == ["9lives and ｆｕｌｌｗｉｄｔｈ"]
    assert found("ｗｉｄ") == ["9lives and ｆｕｌｌｗｉｄｔｈ"]


def test_cli_says_when_the_total_is_a_lower_bound(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from agentdex.cli import cli

    write_file(store_dir(home) / "a.jsonl", [rec(f"common word {i}") for i in range(30)])
    refresh(home)
    monkeypatch.setattr(search_run, "FULL_EXACT", 5)
    monkeypatch.setattr("agentdex.search.ranking.REFINE", 5)
    runner = CliRunner()
    first = runner.invoke(cli, ["search", "--no-refresh", "-n", "3", "common"])
    assert first.exit_code == 0
    assert "of at least" in first.stderr and "--exact-count" in first.stderr
    exact = runner.invoke(cli, ["search", "--no-refresh", "-n", "3", "--exact-count", "common"])
    assert exact.exit_code == 0 and "3 of 30 results" in exact.stderr


def test_a_small_history_makes_a_small_index(home: Path) -> None:
    """Issue 16: an empty or tiny history must not cost megabytes on disk.

    An empty SQLite table or index still takes one 4 KiB page: the index and archive
    databases hold ~50 of them (~200 KB, growing a page per new table), so the bounds
    leave room for a few more tables, never for tantivy's or a cache's megabytes.
    """

    def index_bytes() -> int:
        root = Location(index_root()).root
        return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())

    refresh(home)
    assert index_bytes() < 256_000
    write_file(store_dir(home) / "a.jsonl", [rec(f"a small chat, line {i}") for i in range(50)])
    refresh(home)
    assert 0 < index_bytes() < 384_000


def test_a_query_with_nothing_to_look_up_says_it_scans(home: Path) -> None:
    from click.testing import CliRunner

    from agentdex.cli import cli

    write_file(store_dir(home) / "a.jsonl", [rec("x :: y"), rec("plain")])
    refresh(home)
    result = api.search("::", refresh_first=False)
    assert result.stats["mode"] == "scan" and [r["text"] for r in result.results] == ["x :: y"]
    out = CliRunner().invoke(cli, ["search", "--no-refresh", "-E", "[:]{2}"])
    assert out.exit_code == 0 and "scanned every record" in out.stderr


def test_indexing_threads_setting_takes_positive_numbers_only() -> None:
    """``AGENTDEX_INDEXING_THREADS``: a positive number is taken; anything else (a typo,
    0, empty) is the default, never a traceback at import."""
    from agentdex.index.postings import _indexing_threads

    assert [_indexing_threads(s) for s in ("2", "1", "16")] == [2, 1, 16]
    assert [_indexing_threads(s) for s in ("", "abc", "0", "-1", "2.5")] == [1] * 5


@settings(max_examples=150, deadline=None)
@given(
    terms=st.dictionaries(
        st.text(alphabet="0a9fgzé日", min_size=1, max_size=5), st.integers(0, 999)
    ),
    reverse=st.booleans(),
)
def test_the_bucket_writer_writes_the_bytes_of_the_term_writer(
    tmp_path_factory: pytest.TempPathFactory, terms: dict[str, int], reverse: bool
) -> None:
    """``write_term_buckets`` (the term list's child: buckets by first character, only the
    hex-digit ones tested for hex terms, the order checked where buckets meet) writes what
    ``write_vocabulary_file`` writes of the same terms one by one: the hex section, the split
    mark, and no mark when the buckets come out of order (``reverse``)."""
    gen = tmp_path_factory.mktemp("buckets")
    firsts = sorted({t[0] for t in terms} | {"b", "x"}, reverse=reverse)  # empty buckets too
    buckets = [sorted((t, c) for t, c in terms.items() if t[0] == f) for f in firsts]
    postings.write_term_buckets(gen / "buckets.txt", buckets)
    postings.write_vocabulary_file(gen / "terms.txt", [item for b in buckets for item in b])
    written = (gen / "buckets.txt").read_bytes()
    assert written == (gen / "terms.txt").read_bytes()
    flat = [t for b in buckets for t, _ in b]
    increasing = all(a < b for a, b in pairwise(flat))
    assert written.splitlines()[-1].startswith(postings.SPLIT_MARK) == increasing
    assert not (gen / "buckets.txt.hex").exists()
