"""JSON as agentdex prints it: one function for every surface and the resident searcher.

A served search's JSON is rendered by the resident searcher
(:mod:`agentdex.api.search_resident_server`) with the very functions the CLI prints
its own with (:mod:`agentdex.cli._emit`), so the bytes cannot differ, and a thin client
writes them without importing orjson (~30 ms of a fresh process: orjson imports
``dataclasses``, ``inspect``, ``uuid``, ``platform`` and ``datetime`` when it loads).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

#: what orjson writes raw but a terminal acts on: DEL and the C1 controls (U+0080-U+009F)
_RAW_CONTROLS = re.compile(rb"\x7f|\xc2[\x80-\x9f]")


def json_bytes(data: Any, option: int = 0) -> bytes:
    """``data`` as JSON with *every* control character escaped: orjson escapes the C0
    ones; DEL and C1 (which it writes as UTF-8) become ``\\u007f``, ``\\u009b``... too.
    In JSON text those bytes can only be inside strings, so the escape is exact."""
    raw = orjson.dumps(data, option=option | orjson.OPT_NON_STR_KEYS, default=str)
    if b"\x7f" not in raw and b"\xc2" not in raw:
        return raw  # two byte searches: the regex scan costs ~7 ns a byte (20 ms for 3 MB)
    return _RAW_CONTROLS.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), raw)


def json_document(data: Any) -> bytes:
    """What ``--json`` prints: the document indented by two, and a newline."""
    return json_bytes(data, orjson.OPT_INDENT_2) + b"\n"


def ndjson_line(data: Any) -> bytes:
    """One ``--ndjson`` line."""
    return json_bytes(data) + b"\n"
