"""A parse worker prepares a file's records a batch at a time: the same records, masked the
same, as one record at a time.

:func:`agentdex.secrets.suspects` says which texts of a batch ``redact`` might change
(one pass over the joined text); :func:`agentdex.ingest.pipeline.prepare_batch` masks
only those and builds each record's fields from the batch's shared lower-casing and
encoding. Both are checked against the per-record path on planted secrets, look-alikes,
generated mixtures and text whose lower case or encoding is unusual; and a secret in a
file a worker parses is masked in every field it sends.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from agentdex.index.columns import Columns
from agentdex.ingest import pipeline
from agentdex.ingest.pipeline import (
    ArchiveParts,
    mask_secrets,
    prepare_batch,
    prepare_record,
    prepare_stream,
)
from agentdex.records import Record
from agentdex.secrets import redact, redact_scanned, suspects
from conftest import REPO_DIR

TOKEN = "gh" + "p_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
#: a bare generated token (no key name: ``high-entropy``'s finder, found by its run)
BARE = "q7Rk2Vx9Lm4Tz8Wp3Ns6Yb1Hd5Gf0Jc"
#: what the batch path must handle as the per-record path does: lower case longer than the
#: text, a final sigma at a text's end, a lone surrogate, non-ASCII, NUL, empty, very long
ODD = [
    "İ token = 'abcdEFGH1234ijkl' here",
    "ΟΔΟΣ",
    "ΣΑΣ password='hunter2hunter2'",
    "a lone surrogate \udcff and " + BARE,
    "한국어 " + TOKEN,
    "a NUL \x00 inside " + TOKEN,
    "",
    "short",
    "x" * 70 + " " + "y" * 200,
    BARE,
    "/home/dev/src/A1b2C3d4E5f6G7h8I9j0/path",
    "12345678901234567890123 digits only",
]


def _bench_secrets() -> Any:
    spec = importlib.util.spec_from_file_location(
        "bench_secrets_for_batch_tests", REPO_DIR / "bench" / "bench_secrets.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _texts(seed: int) -> list[str]:
    from test_secrets_fast import FRAGMENTS

    bench = _bench_secrets()
    rng = random.Random(seed)
    texts = [text for _, _, text in bench.planted(rng, 20)]
    texts += list(bench.lookalikes(rng, 100))
    texts += ["".join(rng.choices(FRAGMENTS, k=rng.randint(1, 14))) for _ in range(3000)]
    words = ["the", "build", "runs", "now", "see", "src/app.py", "line", "42", "ok", "\n"]
    texts += [" ".join(rng.choices(words, k=rng.randint(1, 60))) for _ in range(3000)]
    texts += ODD
    rng.shuffle(texts)
    return texts


def test_texts_left_out_are_the_ones_redact_leaves_alone() -> None:
    texts = [text for text in _texts(10) if "\x00" not in text]
    chosen = suspects(texts)
    changed = {i for i, text in enumerate(texts) if redact(text)[1]}
    assert len(changed) > 500  # secrets among them
    assert changed <= set(chosen)
    left_out = [text for i, text in enumerate(texts) if i not in chosen]
    assert len(left_out) > 2500  # the check skips most plain texts
    assert all(redact(text) == (text, []) for text in left_out)
    # and those found are masked as redact masks them, from what the scan found in them
    for i, scanned in chosen.items():
        text = texts[i]
        assert redact_scanned(text, text.lower(), scanned) == redact(text), text


def test_the_scan_finds_every_assignment_assigned_finds() -> None:
    from agentdex.secrets import _KEY_WORDS, _assigned

    spaces = [" ", "\t", "\x1c", "\x1f", "\x85", "\xa0", "\u2003", "\u3000", "\u200b", ""]
    crafted = [
        f"{key}{s}{q}{space}{space}{sign}{tail}"
        for key in ("api_key", "password", "passwd", "auth", "authorization", "creds", "pwd")
        for s in ("", "s")
        for q in ("", '"')
        for space in spaces
        for sign, tail in (("=", "hunter2hunter2"), (":", " 'A1b2C3d4E5f6G7h8I9'"), ("==", "x"))
    ]
    texts = [text for text in _texts(13) + crafted if "\x00" not in text]
    chosen = suspects(texts)
    checked = 0
    for i, text in enumerate(texts):
        lowered = text.lower()
        keys = {key for key in _KEY_WORDS if _assigned(lowered, (key,))}
        if keys:
            checked += 1
            found = chosen[i].assigned
            assert found is not None and keys <= found, text
    assert checked > 300
    for text in crafted:  # and masked as redact masks them
        assert redact_scanned(text, text.lower(), suspects([text])[0]) == redact(text), text


def test_a_bare_token_makes_its_text_a_suspect() -> None:
    texts = ["plain words", f"the blob {BARE} here", "nothing here", BARE, "A1b2" * 3]
    assert set(suspects(texts)) == {1, 3}
    assert redact(texts[1])[0] == "the blob [REDACTED:high-entropy] here"


def test_a_text_holding_the_separator_makes_every_text_a_suspect() -> None:
    texts = ["plain", "a NUL \x00 here", "more"]
    assert set(suspects(texts)) == {0, 1, 2}


def _records(texts: list[str], path: Path) -> list[Record]:
    rng = random.Random(5)
    records = []
    for i, text in enumerate(texts):
        kind = rng.choice(["prompt", "message", "tool_result"])
        records.append(
            Record(
                agent="claude-code",
                store="claude-code.projects",
                source_path=str(path),
                locator=f"line:{i + 1}" + ("#1" if i % 7 == 0 else ""),
                session_id=f"s{i // 50}",
                role="user" if kind == "prompt" else "assistant",
                kind=kind,  # type: ignore[arg-type]
                text=text,
                timestamp=None if i % 11 == 0 else 1767323045.5 + i,
                model="m" if i % 3 else None,
                cwd="/work/app",
                offset=-1 if i % 13 == 0 else 0,
            )
        )
    return records


def _copy(records: list[Record]) -> list[Record]:
    return [Record(**{f: getattr(r, f) for f in r.__dataclass_fields__}) for r in records]


def _source(path: Path, texts: list[str]) -> list[int]:
    """A JSONL file with one line a text (offsets of each), for the prompts' kept lines."""
    offsets = []
    with path.open("wb") as handle:
        for text in texts:
            offsets.append(handle.tell())
            line = json.dumps({"type": "user", "message": {"content": text}})
            handle.write(line.encode() + b"\n")
    return offsets


@pytest.mark.parametrize("redacting", [True, False])
@pytest.mark.parametrize("with_nul", [False, True])
def test_a_batch_is_prepared_as_each_record_is(
    tmp_path: Path, redacting: bool, with_nul: bool
) -> None:
    texts = _texts(11)[:1500]
    if not with_nul:
        texts = [text for text in texts if "\x00" not in text]
    path = tmp_path / "t.jsonl"
    offsets = _source(path, texts)
    records = _records(texts, path)
    for record, offset in zip(records, offsets, strict=True):
        if record.offset == 0:
            record.offset = offset
    steps = pipeline.stages(redact_secrets=redacting)
    one = ArchiveParts(str(path), jsonl=True, redact=redacting)
    expected = [one.add_to(prepare_record(record, steps)) for record in _copy(records)]
    batch = ArchiveParts(str(path), jsonl=True, redact=redacting)
    out = Columns()
    prepare_stream(iter(_copy(records)), steps, batch, out)
    one.close()
    batch.close()
    got = out.rows()
    assert len(out) == len(got) == len(expected)
    assert got == expected
    assert Columns.from_rows(expected) == out  # the columns hold each record's fields
    if redacting:
        assert sum(1 for wire in got if "[REDACTED:" in str(wire[2])) > 100
        assert sum(1 for wire in got if b"[REDACTED:" in (wire[12] or b"")) > 20


def test_stages_before_masking_run_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def shout(record: Record) -> Record:
        record.text = record.text.upper() + " ghp_" if record.text else record.text
        return record

    steps = (shout, mask_secrets)
    texts = [t for t in _texts(12)[:400] if "\x00" not in t]
    records = _records(texts, tmp_path / "none.jsonl")
    parts = ArchiveParts(str(tmp_path / "none.jsonl"), jsonl=False, redact=True)
    expected = [parts.add_to(prepare_record(record, steps)) for record in _copy(records)]
    assert prepare_batch(_copy(records), steps, parts) == expected


def _transcript(home: Path, texts: list[str]) -> Path:
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    lines = [
        {
            "type": "user",
            "sessionId": "5ec2e700-3333-4222-8333-444455556666",
            "cwd": "/work/app",
            "timestamp": f"2026-11-20T10:{i % 60:02d}:00Z",
            "uuid": f"u{i}",
            "message": {"role": "user", "content": text},
        }
        for i, text in enumerate(texts)
    ]
    path = folder / "5ec2e700-3333-4222-8333-444455556666.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


@pytest.mark.parametrize("nul", [False, True])
def test_a_worker_masks_every_secret_it_sends(tmp_path: Path, nul: bool) -> None:
    from agentdex.discovery import discover
    from agentdex.ingest.feed import parse_in_worker
    from agentdex.parsers import ParseCursor

    plain = [f"prompt {i} about the build and its tests" for i in range(1200)]
    secrets = [f"deploy with {TOKEN} please", f"the blob {BARE} is here", "password=hunter2x9"]
    texts = plain[:600] + secrets + plain[600:] + [f"again {TOKEN}"]
    if nul:
        texts.append("a NUL \x00 in a prompt")  # its batch goes one record at a time
    home = tmp_path / "home"
    _transcript(home, texts)
    (source,) = [s for s in discover(str(home)).sources if s.row.parser]
    wires, _, _, _, error = parse_in_worker(
        source, ParseCursor(), pipeline.stages(redact_secrets=True)
    )
    assert error is None
    assert len(wires) == len(texts)
    wires = wires.rows()
    sent = repr(wires)
    for secret in (TOKEN, BARE, "hunter2x9", TOKEN.lower(), BARE.lower()):
        assert secret not in sent
    masked = [wire for wire in wires if "[REDACTED:" in str(wire[2])]
    assert len(masked) == 4
    assert all(b"[REDACTED:" in wire[12] for wire in masked)  # the kept source lines too
    assert all("[redacted:" in str(wire[4]) for wire in masked)  # and what the postings take


def test_keys_for_many_records_are_record_key() -> None:
    from agentdex.archive.keys import keyer, record_key

    rng = random.Random(3)
    names: list[object] = ["claude-code", "codex", "s1", "sé", "a\udcff", "", None, 5, 5.0, True]
    times: list[object] = [None, 1767323045.5, 1767323045, "2026-01-02", True, float("nan"), 0.1]
    key = keyer()
    for _ in range(3000):
        args = (
            rng.choice(names),
            rng.choice(names),
            rng.choice(["user", "assistant", 1]),
            rng.choice(["prompt", "message"]),
            rng.choice(times),
            rng.randrange(-(2**62), 2**62),
            rng.randrange(0, 10**6),
        )
        assert key(*args) == record_key(*args), args


def _pack_locator_by_regex(locator: object) -> object:
    """``pack_locator`` as it was before its fast path for ``line:N``."""
    from agentdex.index.rowpack import _EXACT, _LINE, _PARTS

    if not isinstance(locator, str):
        return str(locator)
    found = _LINE.fullmatch(locator) if locator.startswith("line:") else None
    if found is None:
        return locator
    line = int(found.group(1))
    part = found.group(2)
    if part is None:
        return line << 1 if line < _EXACT else locator
    index = int(part)
    if index >= _PARTS or line >= _EXACT >> 5:
        return locator
    return (((line << 4) | index) << 1) | 1


def test_a_line_locator_packs_as_the_regex_packs() -> None:
    from agentdex.index.rowpack import pack_locator

    locators: list[object] = [
        "line:0", "line:00", "line:1", "line:10", "line:012", "line:", "line:-1", "line:1#2",
        "line:1#16", "line:1#02", "line:３", "line:²", "line:1 ", " line:1", "row:1",
        "line:" + "9" * 15, "line:" + "9" * 16, "line:" + "1" * 15 + "#3", "a.jsonl:line:4", 7,
    ]  # fmt: skip
    locators += [f"line:{n}#{m}" for n in ("1", "01", "0", str(2**48), str(2**48 - 1)) for m in (
        "0", "1", "9", "15", "16", "99", "100", "00", "07", "", "-1", "３", "1#2")]  # fmt: skip
    for locator in locators:
        expected = _pack_locator_by_regex(locator)
        assert pack_locator(locator) == expected, locator
        # the batch's own fast path (pipeline._pack_line) too
        assert pipeline._pack_line(locator) == expected, locator
        assert type(pipeline._pack_line(locator)) is type(expected), locator


def test_a_parser_state_is_copied_as_deepcopy_copies_it() -> None:
    import copy

    from agentdex.parsers._jsonl import copy_state

    flat = {"session": "s", "units": 3, "seen": True, "usage_total": None, "rate": 0.5}
    nested = {**flat, "title_rank": {"s": 2}, "ids": ["a", "b"]}
    deeper = {**flat, "ids": [["a"], "b"], "title_rank": {"s": {"x": 1}}, "t": ("a",)}
    for state in (flat, nested, deeper, {}, {"usage_total": [1, 2, 3, 4]}, {1: [None, 0.5]}):
        copied = copy_state(state)
        assert copied == copy.deepcopy(state)
        assert copied is not state
        copied["units"] = 99
        assert state.get("units") != 99
    deep = copy_state(nested)
    deep["title_rank"]["s"] = 5
    deep["ids"].append("c")
    assert nested["title_rank"] == {"s": 2} and nested["ids"] == ["a", "b"]
    deepest = copy_state(deeper)
    deepest["ids"][0].append("c")
    deepest["title_rank"]["s"]["x"] = 2
    assert deeper["ids"] == [["a"], "b"] and deeper["title_rank"] == {"s": {"x": 1}}


def test_a_kept_line_is_masked_as_mask_piece_masks_it() -> None:
    from agentdex.archive.redaction import mask_piece
    from agentdex.archive.store import RAW

    texts = [text for text in _texts(14)[:2000] if "\x00" not in text]
    lines = [json.dumps({"type": "user", "message": {"content": t}}).encode() for t in texts]
    lines.append(b'{"a": "token=abcdefgh\\"x", "b": 1}')  # masking takes the escape's \ away
    lines.append(b'{"a": "undecodable \xff byte", "password": "hunter2hunter2"}')
    decoded = [line.decode("utf-8", "surrogateescape") for line in lines]
    found = suspects(decoded)
    dropped = masked = 0
    for i, line in enumerate(lines):
        expected = mask_piece(RAW, line) or b""
        if i not in found:
            assert expected == line
            continue
        got = pipeline._mask_raw(line, decoded[i], found[i])
        assert got == expected, line
        dropped += got == b""
        masked += b"[REDACTED:" in got
    assert dropped >= 1 and masked > 20


def test_run_starts_are_the_runs_with_a_digit_and_both_cases() -> None:
    import re

    from agentdex.entropy import _CLASS, BARE_MIN, run_starts

    cls = re.escape(_CLASS)
    runs = re.compile(f"(?<![{cls}])[{cls}]{{{BARE_MIN},}}".encode())
    texts = [text for text in _texts(15) if "\x00" not in text] + [
        "12345678901234567890 digits only",
        "A1b2C3d4E5f6G7h8I9j0 mixed",
        "abcdefghijklmnopqrstuvwxyz0 lower",
        "ABCDEFGHIJKLMNOPQRST0 upper",
        "AbcdefghijklmnopqrstU no digit",
        "Abcdefghij0klmnopqr short",
    ]
    data = "\x00".join(texts).encode("utf-8", "surrogatepass")
    expected = [
        m.start()
        for m in runs.finditer(data)
        if re.search(rb"[0-9]", m.group()) and not (m.group().islower() or m.group().isupper())
    ]
    assert len(expected) > 50
    assert run_starts(data) == expected


def test_a_batch_packs_any_time_as_pack_time_does(tmp_path: Path) -> None:
    """The batch packs a float time inline (``_wires``): the same ``ts`` and archive key as
    one record at a time for the floats ``round`` refuses, those past 2**53 ms, and the
    times that are not floats."""
    times: list[object] = [
        float("inf"), float("-inf"), float("nan"), 1e300, -1e300, 9.1e12, -2.5, 0.1 + 0.2,
        1767323063.123, 1767323063.5, 5, None, "2026-11-28T14:00:00Z",
    ]  # fmt: skip
    path = tmp_path / "t.jsonl"
    texts = [f"text {i}" for i in range(len(times))]
    records = _records(texts, path)
    for record, timestamp in zip(records, times, strict=True):
        record.timestamp = timestamp  # type: ignore[assignment]
    steps = pipeline.stages(redact_secrets=True)
    one = ArchiveParts(str(path), jsonl=False, redact=True)
    expected = [one.add_to(prepare_record(record, steps)) for record in _copy(records)]
    out = Columns()
    prepare_stream(
        iter(_copy(records)), steps, ArchiveParts(str(path), jsonl=False, redact=True), out
    )
    assert out.rows() == expected
    assert out.packed_times[7] == 0.1 + 0.2 and out.packed_times[9] == 1767323063500
