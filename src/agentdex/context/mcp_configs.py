"""MCP configs, metadata only: server names, never values.

Values under ``env``, ``headers`` and ``args`` hold tokens; nothing read
here leaves this module except server names, a verdict, and a hash. Error
messages name keys and servers, never values. A config that is not the
documented shape is ``invalid``.

For shared settings files (``~/.claude.json``, ``.gemini/settings.json``,
``.codex/config.toml``) the hash covers only the canonical MCP section, so
Claude rewriting its start-up counters does not publish a new version.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from typing import Any

import orjson

from agentdex.context.names import McpFormat
from agentdex.nesting import MAX_NESTING, value_depth

_TOO_DEEP = f"nested more than {MAX_NESTING} levels deep"

_SCALARS = (str, int, float, bool, type(None))


@dataclass(frozen=True, slots=True)
class McpMeta:
    servers: tuple[str, ...] | None
    error: str | None
    section_hash: str | None  # set for shared settings files


def _scan(text: str, *, comments: bool) -> str:
    """One string-aware pass: drop comments (``comments``) or else trailing commas."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            in_string = ch != '"'
            i += 1
            continue
        if ch == '"':
            in_string = True
        elif comments and text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif comments and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        elif not comments and ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "]}":
                i += 1
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def strip_jsonc(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments, then trailing commas, outside strings.

    >>> strip_jsonc('{"a": "x//y", // c\\n "b": [1,],}')
    '{"a": "x//y", \\n "b": [1]}'
    """
    return _scan(_scan(text, comments=True), comments=False)


def _load(fmt: McpFormat, data: bytes) -> tuple[Any, str | None]:
    """The parsed document, or the reason it is invalid (too deep included: see nesting)."""
    doc, error = _parse(fmt, data)
    if error is None and value_depth(doc, stop_above=MAX_NESTING) > MAX_NESTING:
        return None, _TOO_DEEP
    return doc, error


def _parse(fmt: McpFormat, data: bytes) -> tuple[Any, str | None]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start})"
    if fmt.syntax == "toml":
        try:
            return tomllib.loads(text), None
        except tomllib.TOMLDecodeError as exc:
            return None, f"not valid TOML: {str(exc).splitlines()[0]}"
        except RecursionError:  # tomllib recurses once per nested array or inline table
            return None, _TOO_DEEP
    if fmt.syntax == "jsonc":
        text = strip_jsonc(text)
    try:
        return orjson.loads(text), None
    except orjson.JSONDecodeError as exc:
        if "depth" in str(exc):
            return None, _TOO_DEEP
        return None, f"not valid JSON: line {exc.lineno} column {exc.colno}"


def _check_server(name: str, entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"server {name!r} is not an object"
    for key in ("command", "url", "httpUrl", "type"):
        if key in entry and not isinstance(entry[key], str):
            return f"server {name!r}: '{key}' is not a string"
    if not any(isinstance(entry.get(k), str) for k in ("command", "url", "httpUrl")):
        return f"server {name!r} has neither 'command' nor 'url'"
    args = entry.get("args")
    if args is not None and (
        not isinstance(args, list) or not all(isinstance(a, str) for a in args)
    ):
        return f"server {name!r}: 'args' is not a list of strings"
    for key in ("env", "headers"):
        value = entry.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(isinstance(v, _SCALARS) for v in value.values()):
            return f"server {name!r}: '{key}' is not an object of plain values"
    return None


def mcp_meta(fmt: McpFormat, data: bytes) -> McpMeta:
    """Server names of an MCP config, or the reason it is invalid."""
    doc, error = _load(fmt, data)
    if error is not None:
        return McpMeta(None, error, None)
    if not isinstance(doc, dict):
        return McpMeta(None, "top level is not an object", None)
    section = doc.get(fmt.servers_key)
    if section is None:
        if fmt.shared:
            return McpMeta((), None, hashlib.sha256(b"null").hexdigest())
        return McpMeta(None, f"missing '{fmt.servers_key}' object", None)
    if not isinstance(section, dict):
        return McpMeta(None, f"'{fmt.servers_key}' is not an object", None)
    for name, entry in section.items():
        problem = _check_server(str(name), entry)
        if problem is not None:
            return McpMeta(None, problem, None)
    section_hash = None
    if fmt.shared:
        canonical = orjson.dumps(section, option=orjson.OPT_SORT_KEYS, default=str)
        section_hash = hashlib.sha256(canonical).hexdigest()
    return McpMeta(tuple(sorted(str(n) for n in section)), None, section_hash)
