"""Renderers of an exported conversation (:func:`agentdex.api.export.conversation`).

Each format renders as chunks (``*_chunks(header, records)``: the header, then
one chunk per record, records read from an iterator) so an export is written as
it is rendered; ``markdown(data)`` and ``html(data)`` join them.

Markdown keeps messages as their authors wrote them (they are Markdown
already) and fences tool calls, tool results and reasoning. HTML is one
standalone file: inline CSS, no script, no external asset, and a
Content-Security-Policy that forbids loading anything should a transcript
ever slip past the escaping. Every transcript string reaches the HTML only
escaped, or through markdown-it with raw HTML and images turned off.
"""

from __future__ import annotations

import html as _html
import json
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

#: Kinds shown folded (HTML) or fenced (Markdown) rather than as prose.
FOLDED_KINDS = {"tool_call", "tool_result", "reasoning"}

_KIND_LABELS = {
    "prompt": "",
    "message": "",
    "reasoning": "Reasoning",
    "tool_call": "Tool call",
    "tool_result": "Tool result",
    "summary": "Summary",
}


def label(record: dict[str, Any]) -> str:
    """``User``, ``Assistant · Tool call``, ``Tool · Tool result``..."""
    role = str(record["role"]).capitalize()
    kind = _KIND_LABELS.get(record["kind"], str(record["kind"]))
    return f"{role} · {kind}" if kind else role


def when(stamp: str | None) -> str:
    """``2026-11-20T09:14:03.120Z`` -> ``2026-11-20 09:14:03 UTC``."""
    if not stamp:
        return ""
    return stamp[:19].replace("T", " ") + " UTC"


def size(text: str) -> str:
    """``312 B``, ``1.2 KB``, ``3.4 MB``: how big a folded block is."""
    count = len(text.encode("utf-8"))
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


def body_text(record: dict[str, Any]) -> str:
    """The text to show; a tool call's JSON arguments are indented for reading."""
    text: str = record["text"]
    if record["kind"] != "tool_call":
        return text
    name, _, arguments = text.partition(" ")
    if not arguments.startswith(("{", "[")):
        return text
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return text
    return f"{name}\n{json.dumps(parsed, indent=2, ensure_ascii=False)}"


def header_rows(data: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(label, value, is_code) rows of the header, only those with a value."""
    rows: list[tuple[str, str, bool]] = [
        ("Agent", data["agent"], False),
        ("Session", data["session_id"], True),
    ]
    if data.get("project"):
        rows.append(("Project", data["project"], True))
    if data.get("cwd") and data["cwd"] != data.get("project"):
        rows.append(("Directory", data["cwd"], True))
    for key, name in (("branches", "Branch"), ("worktrees", "Worktree"), ("models", "Model")):
        if data.get(key):
            rows.append((name, ", ".join(data[key]), True))
    if data.get("hosts"):
        rows.append(("Host", ", ".join(data["hosts"]), True))
    if data.get("started"):
        rows.append(("Started", when(data["started"]), False))
    if data.get("ended"):
        rows.append(("Ended", when(data["ended"]), False))
    count = len(data["records"]) if "records" in data else sum(data["counts"].values())
    rows.append(("Records", str(count), False))
    redaction = data.get("redaction")
    if redaction is not None:
        kinds = ", ".join(f"{name} {count}" for name, count in redaction["by_pattern"].items())
        rows.append(
            ("Redacted", f"{redaction['count']} secrets" + (f" ({kinds})" if kinds else ""), False)
        )
    return rows


def _title(data: dict[str, Any]) -> str:
    return str(data.get("title") or f"{data['agent']} conversation {data['session_id']}")


# -- Markdown ---------------------------------------------------------------------------


def _inline_code(text: str) -> str:
    """``text`` as Markdown inline code, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fenced(text: str, info: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


#: what Markdown or HTML would act on in a one-line header value (the title, the agent)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&#|!~])")
#: a line a renderer reads as a heading, a rule or a setext underline (it could forge a turn)
_BLOCK_START = re.compile(r"^( {0,3})(#{1,6}(?=[ \t]|$)|([-*_=])(?:[ \t]*\3){2,}[ \t]*$|=+[ \t]*$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: ``<`` opening a tag, a comment or a declaration: raw HTML a Markdown viewer may render
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_CODE_SPAN = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)")


def _md_text(text: str) -> str:
    """A one-line header value as plain Markdown text: every character Markdown or HTML
    would act on is backslash-escaped, so a title shows as written and runs nothing."""
    return _MD_SPECIAL.sub(r"\\\1", _one_line(text))


def _prose(text: str) -> str:
    """A message as Markdown, neutralised: a line that would read as a heading, a rule or
    a setext underline (and so could forge a turn's heading) is backslash-escaped, and a
    ``<`` that would open raw HTML is escaped, outside code fences and code spans."""
    out = []
    fence: str | None = None
    for line in text.split("\n"):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if opened:
            fence = opened.group(1)
            out.append(line)
            continue
        line = _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line, count=1)
        parts = []
        at = 0
        for span in _CODE_SPAN.finditer(line):
            parts.append(_TAG_OPEN.sub(r"\\<", line[at : span.start()]))
            parts.append(span.group())
            at = span.end()
        parts.append(_TAG_OPEN.sub(r"\\<", line[at:]))
        out.append("".join(parts))
    return "\n".join(out)


def markdown(data: dict[str, Any]) -> str:
    """The conversation as one Markdown document (:func:`markdown_chunks` joined)."""
    return "".join(markdown_chunks(data, data["records"]))


def markdown_chunks(header: dict[str, Any], records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The conversation as Markdown, a record at a time.

    Nothing a transcript holds can pass for the document's own structure: header
    values are escaped (or code), prose cannot start a heading or a rule, raw HTML
    in prose is escaped, and folded records are fenced with a fence longer than any
    they hold.
    """
    head = [f"# {_md_text(_title(header))}", ""]
    for name, value, is_code in header_rows(header):
        head.append(f"- **{name}:** {_inline_code(value) if is_code else _md_text(value)}")
    head += ["", f"*Exported by {header['generator']}.*", ""]

    def pieces() -> Iterator[str]:
        yield "\n".join(head)
        for index, record in enumerate(records, 1):
            yield "\n" + "\n".join(_md_record(header, index, record))

    return _rstripped(pieces())


def _md_record(header: dict[str, Any], index: int, record: dict[str, Any]) -> list[str]:
    head = f"## {index}. {label(record)}"
    details = [when(record.get("timestamp")), _inline_code(record["locator"])]
    if index - 1 == header.get("focus"):
        details.append("**(referenced)**")
    out = ["---", "", f"{head} · {' · '.join(d for d in details if d)}", ""]
    text = body_text(record)
    if record["kind"] == "reasoning":
        quoted = _prose(text).splitlines()
        out.append("\n".join(f"> {line}" if line else ">" for line in quoted))
    elif record["kind"] in FOLDED_KINDS:
        out.append(_fenced(text))
    else:
        out.append(_prose(text))
    out.append("")
    return out


def _rstripped(chunks: Iterable[str]) -> Iterator[str]:
    """``"".join(chunks).rstrip() + "\\n"``, as chunks: trailing whitespace is held back
    until more text follows it."""
    pending = ""
    for chunk in chunks:
        body = chunk.rstrip()
        if not body:
            pending += chunk
            continue
        yield pending + body
        pending = chunk[len(body) :]
    yield "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- HTML -------------------------------------------------------------------------------

#: Also sent as a header when the HTTP API serves the HTML.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)

_CSS = """
:root { color-scheme: light dark; --fg: #1f2328; --muted: #656d76; --bg: #ffffff;
  --line: #d0d7de; --code: #f6f8fa; --user: #1a7f37; --assistant: #0969da;
  --tool: #8250df; --system: #9a6700; --focus: #fff8c5; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #8d96a0;
  --bg: #0d1117; --line: #30363d; --code: #161b22; --user: #3fb950;
  --assistant: #4493f8; --tool: #ab7df8; --system: #d29922; --focus: #3b2e00; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 980px; padding: 24px 16px 64px; color: var(--fg);
  background: var(--bg); font: 15px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; }
header h1 { font-size: 1.5em; margin: 0 0 12px; overflow-wrap: anywhere; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0 0 8px;
  color: var(--muted); }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.generator { color: var(--muted); font-size: .85em; margin: 0 0 24px; }
.msg { border-left: 4px solid var(--line); padding: 6px 14px; margin: 14px 0;
  background: var(--bg); }
.msg.role-user { border-color: var(--user); }
.msg.role-assistant { border-color: var(--assistant); }
.msg.role-tool { border-color: var(--tool); } .msg.role-system { border-color: var(--system); }
.msg.focus { background: var(--focus); }
.head { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: baseline; color: var(--muted);
  font-size: .85em; }
.head .who { font-weight: 700; font-size: 1.05em; }
.role-user .who { color: var(--user); } .role-assistant .who { color: var(--assistant); }
.role-tool .who { color: var(--tool); } .role-system .who { color: var(--system); }
.head a { color: inherit; text-decoration: none; } .head a:hover { text-decoration: underline; }
details.msg > summary { cursor: pointer; list-style-position: inside; }
details.msg > summary .head { display: inline-flex; }
.body { overflow-wrap: anywhere; }
.body > :first-child { margin-top: 6px; } .body > :last-child { margin-bottom: 4px; }
pre, code { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  background: var(--code); border-radius: 6px; }
code { padding: 1px 4px; } pre { padding: 10px 12px; overflow-x: auto; white-space: pre-wrap; }
pre code { padding: 0; background: none; }
blockquote { margin: 0; padding-left: 12px; border-left: 3px solid var(--line);
  color: var(--muted); }
table { border-collapse: collapse; } th, td { border: 1px solid var(--line); padding: 4px 8px; }
@media print { details.msg { display: block; } details.msg > summary { list-style: none; } }
"""


@lru_cache(maxsize=1)
def _markdown_renderer() -> MarkdownIt:
    """CommonMark with tables; raw HTML is escaped, images become links (nothing is loaded)."""
    from markdown_it import MarkdownIt

    renderer = MarkdownIt("commonmark", {"html": False, "breaks": True})
    renderer.enable(["table", "strikethrough"])
    renderer.add_render_rule("image", _image_as_link)
    return renderer


def _image_as_link(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """``![alt](url)`` -> a link ``[image: alt]`` (an <img> would fetch the URL)."""
    token = tokens[idx]
    return f'<a href="{_e(str(token.attrGet("src") or ""))}">[image: {_e(token.content)}]</a>'


def _e(text: str) -> str:
    return _html.escape(text, quote=True)


def html(data: dict[str, Any]) -> str:
    """The conversation as one standalone HTML file (:func:`html_chunks` joined)."""
    return "".join(html_chunks(data, data["records"]))


def html_chunks(header: dict[str, Any], records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The conversation as one standalone HTML file (no script, no external asset), a
    record at a time."""
    title = _title(header)
    meta = "".join(
        f"<dt>{_e(name)}</dt><dd>{f'<code>{_e(value)}</code>' if is_code else _e(value)}</dd>"
        for name, value, is_code in header_rows(header)
    )
    yield "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{_e(CSP)}">',
            '<meta name="referrer" content="no-referrer">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f'<meta name="generator" content="{_e(header["generator"])}">',
            f"<title>{_e(title)}</title>",
            f"<style>{_CSS}</style>",
            "</head><body>",
            f'<header><h1>{_e(title)}</h1><dl class="meta">{meta}</dl>',
            f'<p class="generator">Exported by {_e(header["generator"])}.</p></header>',
            "<main>",
        ]
    )
    for index, record in enumerate(records, 1):
        yield "\n" + _html_record(header, index, record)
    yield "\n</main></body></html>\n"


def _html_record(data: dict[str, Any], index: int, record: dict[str, Any]) -> str:
    ref = f"{data['session_id']}@{record['locator']}"
    classes = f"msg role-{_e(record['role'])} kind-{_e(record['kind'])}"
    if index - 1 == data.get("focus"):
        classes += " focus"
    stamp = record.get("timestamp")
    head = (
        f'<span class="head"><a class="num" href="#m{index}" title="{_e(ref)}">#{index}</a>'
        f'<span class="who">{_e(label(record))}</span>'
        + (f'<time datetime="{_e(stamp)}">{_e(when(stamp))}</time>' if stamp else "")
        + f'<span class="loc">{_e(record["locator"])}</span>'
    )
    text = body_text(record)
    attributes = f'class="{classes}" id="m{index}" data-ref="{_e(ref)}"'
    if record["kind"] in FOLDED_KINDS:
        name = text.split(maxsplit=1)[0] if record["kind"] == "tool_call" and text.strip() else ""
        extra = (f"<span>{_e(name)}</span>" if name else "") + f"<span>{_e(size(text))}</span>"
        return (
            f"<details {attributes}><summary>{head}{extra}</span></summary>"
            f'<pre class="body">{_e(text)}</pre></details>'
        )
    body = _markdown_renderer().render(text)
    return (
        f'<article {attributes}><div class="head-row">{head}</span></div>'
        f'<div class="body">{body}</div></article>'
    )


# -- JSON -------------------------------------------------------------------------------


def json_chunks(header: dict[str, Any], records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """``orjson.dumps({**header, "records": [...]}, OPT_INDENT_2) + "\\n"``, a record at
    a time (the same bytes: ``records`` is the last key)."""
    import orjson

    head = orjson.dumps({**header, "records": []}, option=orjson.OPT_INDENT_2).decode("utf-8")
    opening = head[: -len("[]\n}")]
    assert head == opening + "[]\n}", "records must be the last key"
    yield opening + "["
    separator = "\n"
    for record in records:
        text = orjson.dumps(record, option=orjson.OPT_INDENT_2).decode("utf-8")
        yield separator + "    " + text.replace("\n", "\n    ")
        separator = ",\n"
    yield ("]" if separator == "\n" else "\n  ]") + "\n}\n"
