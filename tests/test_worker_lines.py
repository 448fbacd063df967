"""A parse worker sends Claude Code's and Codex's records without making a ``Record``
(:func:`agentdex.ingest.pipeline.prepare_lines` over the parsers' ``lines``): the same wires,
cursors and diagnostics as the records path (:func:`agentdex.parsers.run` then
:func:`agentdex.ingest.pipeline.prepare_stream`), for every JSON Lines file of the shared
corpus read by either parser, and for a generated home (``bench/generate_corpus.py``, the
bench corpora's generator), masking on and off.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from agentdex.discovery import Source, discover
from agentdex.index.columns import Columns
from agentdex.ingest import pipeline
from agentdex.ingest.pipeline import ArchiveParts, prepare_source, prepare_stream
from agentdex.parsers import ParseCursor, get_parser, run
from agentdex.readers import Diagnostics
from conftest import REPO_DIR

PARSERS = ("claude-code.transcript_jsonl.v1", "codex.rollout_jsonl.v1")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Source]]:
    """A generated home's sources by parser (the shapes of c250 and c1000, smaller)."""
    spec = importlib.util.spec_from_file_location(
        "generate_corpus_for_lines", REPO_DIR / "bench" / "generate_corpus.py"
    )
    assert spec and spec.loader
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    home = tmp_path_factory.mktemp("lines-home")
    generator.generate(home, 3, 30, 5, datetime.fromisoformat("2026-11-01T00:00:00").timestamp())
    found: dict[str, list[Source]] = {parser: [] for parser in PARSERS}
    for source in discover(str(home)).sources:
        if source.row.parser in found:
            found[source.row.parser].append(source)
    assert all(len(sources) >= 5 for sources in found.values())
    return found


def _both(source: Source, redact: bool, start: ParseCursor | None = None) -> tuple[Any, Any]:
    """(records path, lines path): each one's wires, cursor and diagnostics (from a copy
    of ``start``, else from the file's start)."""
    steps = pipeline.stages(redact_secrets=redact)
    got = []
    for lines in (False, True):
        cursor = ParseCursor() if start is None else copy.deepcopy(start)
        diagnostics, out = Diagnostics(), Columns()
        archive = ArchiveParts(str(source.path), jsonl=True, redact=redact)
        error = None
        try:
            if lines:
                prepare_source(source, cursor, diagnostics, steps, archive, out)
            else:
                prepare_stream(run(source, cursor, diagnostics), steps, archive, out)
        except Exception as exc:  # compared: both paths must fail alike
            error = repr(exc)
        finally:
            archive.close()
        got.append((out.rows(), repr(cursor), repr(diagnostics), error))
    return got[0], got[1]


def _spied(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of wires each call of the lines path gave (so a test sees it taken)."""
    calls: list[int] = []
    real = pipeline.prepare_lines

    def spy(*args: Any) -> None:
        out = args[-1]
        before = len(out)
        real(*args)
        calls.append(len(out) - before)

    monkeypatch.setattr(pipeline, "prepare_lines", spy)
    return calls


@pytest.mark.parametrize("redact", [True, False])
def test_generated_homes_wires_are_the_records_paths(
    generated: dict[str, list[Source]], redact: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = 0
    for sources in generated.values():
        for source in sources:
            expected, got = _both(source, redact)
            assert got == expected, source.path
            records += len(got[0])
    assert records > 1000
    # both parsers have a lines function, and a worker takes it
    assert all(get_parser(parser).lines is not None for parser in PARSERS)
    calls = _spied(monkeypatch)
    for sources in generated.values():
        source = sources[0]
        out = Columns()
        archive = ArchiveParts(str(source.path), jsonl=True, redact=redact)
        steps = pipeline.stages(redact_secrets=redact)
        prepare_source(source, ParseCursor(), Diagnostics(), steps, archive, out)
        archive.close()
        assert out and calls == [len(out)]
        calls.clear()


def test_a_resumed_parse_gives_the_records_paths_wires(
    generated: dict[str, list[Source]], tmp_path: Path
) -> None:
    """From where a parse of a file's first half stopped (its state carried on), the rest
    of the file as an append would bring it."""
    resumed = 0
    for parser, sources in generated.items():
        for n, template in enumerate(sources[:6]):
            whole = template.path.read_bytes()
            cut = whole.rindex(b"\n", 0, len(whole) // 2) + 1
            path = tmp_path / f"{n}-{template.path.name}"
            path.write_bytes(whole[:cut])
            half = dataclasses.replace(template, path=path, size=cut)
            start = ParseCursor()
            parts = ArchiveParts(str(path), jsonl=True, redact=False)
            prepare_source(half, start, Diagnostics(), (), parts, Columns())
            parts.close()
            assert start.resume_offset > 0, (parser, path)
            path.write_bytes(whole)
            start = ParseCursor(
                offset=start.resume_offset, line=start.resume_line, state=start.state
            )
            source = dataclasses.replace(template, path=path, size=len(whole))
            expected, got = _both(source, True, start)
            assert got == expected, (parser, path)
            resumed += len(got[0])
    assert resumed > 200


def test_every_corpus_file_gives_the_records_paths_wires(
    corpus: Path, generated: dict[str, list[Source]]
) -> None:
    """Every ``.jsonl`` of the shared corpus through both parsers (most are another agent's
    or another shape: the paths must agree on what they make of them too, diagnostics and
    all)."""
    files = sorted(corpus.rglob("*.jsonl"))
    assert len(files) > 10
    records = 0
    for parser, sources in generated.items():
        template = sources[0]
        for path in files:
            stat = path.stat()
            size, mtime = stat.st_size, stat.st_mtime
            source = dataclasses.replace(template, path=path, size=size, mtime=mtime)
            for redact in (True, False):
                expected, got = _both(source, redact)
                assert got == expected, (parser, path)
                records += len(got[0])
    assert records > 1000


def test_stages_beyond_masking_take_the_records_path(
    generated: dict[str, list[Source]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stage that rewrites records needs them: such a refresh makes records as before."""

    def shout(record: Any) -> Any:
        record.text = f"{record.text} SHOUTED"
        return record

    monkeypatch.setattr(pipeline, "STAGES", [shout])
    calls = _spied(monkeypatch)
    source = generated[PARSERS[0]][0]
    out = Columns()
    archive = ArchiveParts(str(source.path), jsonl=True, redact=True)
    steps = pipeline.stages(redact_secrets=True)
    prepare_source(source, ParseCursor(), Diagnostics(), steps, archive, out)
    archive.close()
    assert out and all(text.endswith(" SHOUTED") for text in out.texts)
    assert calls == []
