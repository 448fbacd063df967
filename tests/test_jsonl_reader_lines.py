"""``JsonlReader`` decodes a line as read and strips only a line orjson refuses: the same
values, offsets and diagnostics as decoding every line stripped."""

from __future__ import annotations

from pathlib import Path

import orjson

from agentdex.readers import Diagnostics, JsonlReader

LINES = [
    b'{"a": 1}\n',
    b'  {"a": 2}  \n',
    b'{"a": 3}\r\n',
    b"\n",
    b"   \t \n",
    b'\x0c{"a": 4}\x0b\n',  # white space to bytes.strip, not to JSON
    b'{"a": "\xff"}\n',  # invalid UTF-8: replaced, with a diagnostic
    b"not json\n",
    b"\t[1, [2, [3]]]\n",
    b'{"a": 5}',  # a last line without a newline
]


def _expected(data: bytes) -> list[tuple[int, int, object, bool]]:
    """What each line gives when it is stripped before it is decoded (the reader before)."""
    out = []
    offset = 0
    for lineno, raw in enumerate(data.splitlines(keepends=True), start=1):
        start, offset = offset, offset + len(raw)
        stripped = raw.strip()
        if not stripped:
            continue
        try:
            value = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            try:
                value = orjson.loads(stripped.decode("utf-8", "replace"))
            except orjson.JSONDecodeError:
                continue
        out.append((start, lineno, value, raw.endswith(b"\n")))
    return out


def test_lines_decode_as_when_stripped_first(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    data = b"".join(LINES)
    path.write_bytes(data)
    diagnostics = Diagnostics()
    reader = JsonlReader(path, diagnostics)
    got = [(line.offset, line.lineno, line.value, line.complete) for line in reader]
    assert got == _expected(data)
    assert [value for _, _, value, _ in got] == [
        {"a": 1}, {"a": 2}, {"a": 3}, {"a": 4}, {"a": "\ufffd"}, [1, [2, [3]]], {"a": 5},
    ]  # fmt: skip
    messages = sorted((d.locator, d.message) for d in diagnostics.items)
    assert messages == [("", "invalid UTF-8 replaced"), ("line:8", "not JSON; skipped")]
    assert reader.bad_lines == 1
    assert (reader.resume_offset, reader.resume_line) == (len(data) - len(LINES[-1]), 9)
