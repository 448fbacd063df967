"""The no-change fast path: a refresh that finds nothing changed opens no database.

Real Claude Code transcripts under a temporary home, real discovery over the
whole catalogue (the manifest is only written by unscoped refreshes).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentdex.api import search as api
from agentdex.index.store import Location, index_root
from agentdex.ingest import manifest


def claude_line(session: str, text: str, n: int) -> bytes:
    return (
        orjson.dumps(
            {
                "type": "user",
                "sessionId": session,
                "uuid": f"u{n}",
                "cwd": "/work/app",
                "timestamp": f"2026-11-01T10:00:{n:02d}Z",
                "message": {"role": "user", "content": text},
            }
        )
        + b"\n"
    )


def write_transcript(home: Path) -> Path:
    """One real-format Claude Code transcript (session c1, one prompt about a quokka)."""
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    path = folder / "c1.jsonl"
    path.write_bytes(claude_line("c1", "why is the quokka test flaky", 1))
    return path


@pytest.fixture
def transcript(home: Path) -> Path:
    return write_transcript(home)


def refresh(home: Path) -> api.RefreshStats:  # type: ignore[name-defined]
    return api.refresh(home=str(home))


def test_nothing_changed_takes_the_fast_path(home: Path, transcript: Path) -> None:
    first = refresh(home)
    assert first.records_added == 1 and not first.fast_path
    again = refresh(home)
    assert again.fast_path and again.files_unchanged == again.files_seen >= 1
    assert api.search("quokka", refresh_first=True).stats["refresh"]["files_parsed"] == 0


def test_an_append_a_new_file_or_a_new_root_is_seen(home: Path, transcript: Path) -> None:
    refresh(home)
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "and the wombat one too", 2))
    appended = refresh(home)
    assert not appended.fast_path and appended.files_resumed == 1
    (transcript.parent / "c2.jsonl").write_bytes(claude_line("c2", "a second chat", 1))
    added = refresh(home)
    assert not added.fast_path and added.records_added == 1
    assert refresh(home).fast_path
    codex = home / ".codex" / "sessions" / "2026" / "11" / "01"
    codex.mkdir(parents=True)
    assert not refresh(home).fast_path  # a new agent's folder appeared
    assert refresh(home).fast_path


def test_environment_and_rebuilds_invalidate_it(
    home: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refresh(home)
    assert refresh(home).fast_path
    other = home / "elsewhere-claude"
    other.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(other))
    assert not refresh(home).fast_path
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert not refresh(home).fast_path
    assert refresh(home).fast_path
    full = api.refresh(home=str(home), full=True)
    assert not full.fast_path and full.rebuilt
    assert refresh(home).fast_path  # the rebuild wrote a manifest for its generation


def test_embedder_settings_do_not_invalidate_it(
    home: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hybrid search with the resident embedder off beside one with it on (the bench
    does that in turn) must not make each other's refresh check miss."""
    refresh(home)
    assert refresh(home).fast_path
    for name, value in (
        ("AGENTDEX_RESIDENT_EMBEDDER", "1"),
        ("AGENTDEX_EMBEDDER_IDLE_SECONDS", "30"),
        ("AGENTDEX_BACKGROUND_EMBED", "1"),
        ("AGENTDEX_EMBED_THREADS", "2"),
    ):
        monkeypatch.setenv(name, value)
        assert refresh(home).fast_path, name
    monkeypatch.setenv("AGENTDEX_PLUGINS", "1")  # agents from plugins: discovery changes
    assert not refresh(home).fast_path


def test_a_file_that_could_not_be_read_is_retried(
    home: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from agentdex import parsers

    real = parsers.get_parser

    def locked(parser_id: str) -> parsers.ParserSpec:
        spec = real(parser_id)

        def parse(source, cursor, diagnostics):  # type: ignore[no-untyped-def]
            if source.path == transcript:
                raise PermissionError(13, "database is locked", str(source.path))
            yield from spec.parse(source, cursor, diagnostics)

        return dataclasses.replace(spec, parse=parse)

    with monkeypatch.context() as patch:
        patch.setattr(parsers, "get_parser", locked)
        stats = refresh(home)
        assert stats.records_added == 0
    assert not (Location(index_root()).root / manifest.MANIFEST).exists()
    retried = refresh(home)
    assert not retried.fast_path and retried.records_added == 1


def _count_discoveries(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from agentdex.ingest import refresh as refresh_mod

    calls: list[int] = []
    real = refresh_mod._discover

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(refresh_mod, "_discover", counted)
    return calls


def test_an_append_re_reads_that_file_without_walking_the_stores(
    home: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (transcript.parent / "c2.jsonl").write_bytes(claude_line("c2", "an untouched chat", 1))
    refresh(home)
    discoveries = _count_discoveries(monkeypatch)
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "and the numbat one too", 2))
    appended = refresh(home)
    assert discoveries == []  # the manifest named the one file that changed
    assert (appended.files_seen, appended.files_unchanged, appended.files_resumed) == (2, 1, 1)
    assert appended.records_added == 1 and not appended.fast_path
    hits = api.search("numbat", refresh_first=False).results
    assert [h["text"] for h in hits] == ["and the numbat one too"]
    assert refresh(home).fast_path  # the manifest now holds the file's new state
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "a third line, the bilby", 3))
    assert refresh(home).records_added == 1 and discoveries == []
    assert [h["text"] for h in api.search("bilby", refresh_first=False).results] == [
        "a third line, the bilby"
    ]


def test_a_new_or_removed_file_still_walks_the_stores(
    home: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refresh(home)
    discoveries = _count_discoveries(monkeypatch)
    with open(transcript, "ab") as handle:  # an append and a new file in one go
        handle.write(claude_line("c1", "appended echidna", 2))
    (transcript.parent / "c3.jsonl").write_bytes(claude_line("c3", "a new echidna chat", 1))
    both = refresh(home)
    assert len(discoveries) == 1 and both.records_added == 2 and both.files_seen == 2
    transcript.unlink()
    gone = refresh(home)
    assert len(discoveries) == 2 and gone.files_removed == 1  # (its text stays, archived)


def test_without_its_sources_file_an_append_walks_the_stores(
    home: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refresh(home)
    root = Location(index_root()).root
    assert "sources" not in orjson.loads((root / manifest.MANIFEST).read_bytes())  # kept apart
    (root / manifest.SOURCES).write_bytes(orjson.dumps({"id": "another", "sources": {}}))
    discoveries = _count_discoveries(monkeypatch)
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "the platypus line", 2))
    assert refresh(home).records_added == 1 and len(discoveries) == 1
    (root / manifest.SOURCES).unlink()  # the refresh wrote a new one; now none at all
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "the quoll line", 3))
    assert refresh(home).records_added == 1 and len(discoveries) == 2
    assert [h["text"] for h in api.search("quoll", refresh_first=False).results] == [
        "the quoll line"
    ]


def test_changes_found_before_another_writer_refreshed_are_not_reused(
    home: Path, transcript: Path
) -> None:
    from agentdex.ingest.refresh import refresh as index_refresh

    refresh(home)
    root = Location(index_root()).root
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "the wallaby line", 2))
    files, stale = manifest.check(root, str(home))
    assert files is None and stale is not None and list(stale.sources) == [str(transcript)]
    assert refresh(home).records_added == 1  # another writer got there first
    assert not manifest.still_current(root, stale)
    again = index_refresh(root, home=str(home), known=stale)
    assert again.records_added == 0 and again.files_resumed + again.files_parsed == 0
    assert len(api.search("wallaby", refresh_first=False).results) == 1
    # the other writer found a new file: a manifest saved from the stale check would not
    # watch it, and its next append would go unseen by the fast path
    with open(transcript, "ab") as handle:
        handle.write(claude_line("c1", "the dingo line", 3))
    _, stale = manifest.check(root, str(home))
    other = transcript.parent / "c2.jsonl"
    other.write_bytes(claude_line("c2", "a second chat", 1))
    assert api.refresh(home=str(home), full=True).rebuilt
    index_refresh(root, home=str(home), known=stale)
    with open(other, "ab") as handle:
        handle.write(claude_line("c2", "the bandicoot line", 2))
    assert refresh(home).records_added == 1
    assert len(api.search("bandicoot", refresh_first=False).results) == 1
