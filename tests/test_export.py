"""``agentdex export``: Markdown, standalone HTML and JSON transcripts, redaction, the HTTP route.

Conversations come from the sample home (real store files of every agent)
and from a Claude Code transcript written here with hostile content
(``<script>``, event handlers, ``javascript:`` links, remote images).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agentdex.api import export as api
from agentdex.api import history
from agentdex.errors import EXIT_NOT_FOUND, EXIT_USAGE
from agentdex.http.app import create_app
from conftest import CliResult
from test_resume import CLAUDE, CODEX

AUTH = {"Authorization": "Bearer t0ken"}
HOSTILE = "b0b0b0b0-1111-4222-8333-444455556666"
TOKEN = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


class _Tags(HTMLParser):
    """Every start tag with its attributes, and the text of <style>."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data


def parse(document: str) -> _Tags:
    parser = _Tags()
    parser.feed(document)
    parser.close()
    return parser


@pytest.fixture
def hostile(home: Path) -> Path:
    """A Claude Code conversation whose every text tries to break out of the HTML."""
    project = home / "work" / "shop"
    project.mkdir(parents=True)
    slug = home / ".claude/projects/-work-shop"
    slug.mkdir(parents=True)
    texts = [
        ("user", "<script>alert('title')</script> make the page"),
        (
            "assistant",
            'Done. <img src=x onerror="alert(1)"> [click](javascript:alert(2)) '
            "![logo](https://evil.example/logo.png) <iframe src=https://evil.example></iframe>\n\n"
            "```html\n<script>alert(3)</script>\n```\n"
            f"Use GITHUB_TOKEN={TOKEN} for the API.",
        ),
    ]
    lines = []
    for index, (role, text) in enumerate(texts):
        lines.append(
            {
                "type": role,
                "sessionId": HOSTILE,
                "cwd": str(project),
                "gitBranch": 'main"><script>alert(4)</script>',
                "timestamp": f"2026-11-20T10:0{index}:00Z",
                "uuid": f"u{index}",
                "message": {"role": role, "content": text, "model": "m<b>x</b>"},
            }
        )
    lines.append(
        {
            "type": "assistant",
            "sessionId": HOSTILE,
            "cwd": str(project),
            "timestamp": "2026-11-20T10:05:00Z",
            "uuid": "u9",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "</details><script>alert(5)</script>"},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "echo '</pre><script>x</script>'"},
                    },
                ],
            },
        }
    )
    (slug / f"{HOSTILE}.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return home


def test_markdown_has_header_and_every_record_in_order(rendered_sample: Path) -> None:
    shown = history.show(CLAUDE, str(rendered_sample))
    document = api.export(CLAUDE, str(rendered_sample), format="md")
    text = document.content
    assert (
        document.media_type.startswith("text/markdown")
        and document.filename == f"claude-code-{CLAUDE}.md"
    )
    header = text.split("---", 1)[0]
    for expected in (
        "- **Agent:** claude-code",
        f"- **Session:** `{CLAUDE}`",
        "- **Branch:** `feat/auth`",
        f"- **Worktree:** `{rendered_sample / 'src/shop-wt-feat-auth'}`",
        "- **Model:** `claude-sonnet-4-5`",
        "- **Started:** 2026-11-19 15:40:12 UTC",
        "- **Ended:** 2026-11-19 15:42:44 UTC",
        f"- **Records:** {len(shown['records'])}",
    ):
        assert expected in header
    positions = [text.index(f"## {i}. ") for i in range(1, len(shown["records"]) + 1)]
    assert positions == sorted(positions)
    assert "## 3. Assistant · Tool call" in text and "## 4. Tool · Tool result" in text
    assert '```\nGrep\n{\n  "pattern": "def login"' in text  # tool arguments indented, fenced


def test_markdown_marks_reasoning_and_the_referenced_record(rendered_sample: Path) -> None:
    text = api.export(f"{CODEX}@line:3", str(rendered_sample), format="md").content
    reasoning = text.index("Assistant · Reasoning")
    assert text[reasoning:].split("\n\n", 1)[1].startswith("> ")
    shown = history.show(f"{CODEX}@line:3", str(rendered_sample))
    focus = shown["focus"]
    assert focus is not None and f"## {focus + 1}. " in text
    assert "**(referenced)**" in text.split(f"## {focus + 1}. ", 1)[1].split("\n", 1)[0]


def test_markdown_fence_survives_backticks_in_a_tool_result(home: Path) -> None:
    slug = home / ".claude/projects/-x"
    slug.mkdir(parents=True)
    sid = "c0c0c0c0-1111-4222-8333-444455556666"
    line = {
        "type": "user",
        "sessionId": sid,
        "timestamp": "2026-11-20T10:00:00Z",
        "uuid": "u1",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": "````\ninside\n````"}
            ],
        },
    }
    (slug / f"{sid}.jsonl").write_text(json.dumps(line) + "\n")
    text = api.export(sid, str(home), format="md").content
    assert "`````\n````\ninside\n````\n`````" in text


def test_html_is_standalone_and_escapes_everything(hostile: Path) -> None:
    document = api.export(HOSTILE, str(hostile), format="html").content
    page = parse(document)
    names = [tag for tag, _ in page.tags]
    assert "script" not in names and "img" not in names and "iframe" not in names
    assert "link" not in names and "object" not in names and "embed" not in names
    for tag, attrs in page.tags:
        for attr, value in attrs.items():
            assert not attr.startswith("on"), (tag, attr)
            assert not (value or "").strip().lower().startswith("javascript:"), (tag, attr, value)
            if attr in {"src", "srcset", "data", "action"}:
                pytest.fail(f"{tag} loads {value}")
    assert "url(" not in page.style and "@import" not in page.style
    csp = [
        a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert csp and "default-src 'none'" in (csp[0]["content"] or "")
    # the hostile texts are shown, as text
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in document
    assert "&lt;img src=x onerror=" in document
    assert "&lt;/details&gt;&lt;script&gt;alert(5)&lt;/script&gt;" in document
    assert "&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;" in document
    assert "main&quot;&gt;&lt;script&gt;alert(4)&lt;/script&gt;" in document
    assert "m&lt;b&gt;x&lt;/b&gt;" in document
    hrefs = {a.get("href") for t, a in page.tags if t == "a"}
    assert "https://evil.example/logo.png" in hrefs  # the image became a link, never loaded
    assert "[image: logo]" in document
    assert all((h or "").startswith(("#", "https://")) for h in hrefs)  # javascript: was dropped


def test_html_folds_tool_calls_results_and_reasoning(rendered_sample: Path) -> None:
    shown = history.show(CODEX, str(rendered_sample))
    folded = [r for r in shown["records"] if r["kind"] in {"tool_call", "tool_result", "reasoning"}]
    page = parse(api.export(CODEX, str(rendered_sample), format="html").content)
    details = [a for t, a in page.tags if t == "details"]
    assert len(details) == len(folded) > 0
    assert all("open" not in a for a in details)  # collapsed
    articles = [a for t, a in page.tags if t == "article"]
    assert len(articles) + len(details) == len(shown["records"])
    ids = [a["id"] for t, a in page.tags if t in {"article", "details"}]
    assert ids == [f"m{i}" for i in range(1, len(shown["records"]) + 1)]
    refs = [a["data-ref"] for t, a in page.tags if t in {"article", "details"}]
    assert refs == [f"{CODEX}@{r['locator']}" for r in shown["records"]]
    roles = {a["class"].split()[1] for t, a in page.tags if t in {"article", "details"}}
    assert {"role-user", "role-assistant", "role-tool"} <= roles


def test_json_export_is_the_normalized_records(rendered_sample: Path) -> None:
    shown = history.show(CLAUDE, str(rendered_sample))
    data = json.loads(api.export(CLAUDE, str(rendered_sample), format="json").content)
    assert data["records"] == shown["records"]
    assert data["export_version"] == 1 and data["agent"] == "claude-code"
    assert data["branches"] == ["feat/auth"] and data["models"] == ["claude-sonnet-4-5"]
    assert data["redaction"] is None
    assert data["started"] == shown["records"][0]["timestamp"]


def test_secrets_are_masked_by_default_and_redact_masks_when_the_index_does_not(
    hostile: Path,
) -> None:
    source = next((hostile / ".claude/projects").rglob(f"{HOSTILE}.jsonl"))
    before = source.read_bytes()
    from agentdex.api import search

    search.refresh(home=str(hostile))
    for fmt in ("md", "html", "json"):  # [privacy] redact is on by default
        content = api.export(HOSTILE, str(hostile), format=fmt).content
        assert TOKEN not in content and "[REDACTED:github-token]" in content
    Path(os.environ["AGENTDEX_CONFIG"]).write_text("[privacy]\nredact = false\n")
    search.refresh(home=str(hostile))  # rebuilt with the originals
    plain = api.export(HOSTILE, str(hostile), format="md").content
    assert TOKEN in plain
    for fmt in ("md", "html", "json"):
        masked = api.export(HOSTILE, str(hostile), format=fmt, redact=True)
        assert TOKEN not in masked.content and "[REDACTED:github-token]" in masked.content
        assert masked.redacted == 1
    data = json.loads(api.export(HOSTILE, str(hostile), format="json", redact=True).content)
    assert data["redaction"] == {"count": 1, "by_pattern": {"github-token": 1}}
    assert source.read_bytes() == before  # the store is untouched
    hits = search.search(TOKEN[:20], home=str(hostile), refresh_first=False).to_json()["results"]
    assert hits and TOKEN in hits[0]["snippet"]  # and the index holds the original


def test_cli_writes_files_and_reports(
    rendered_sample: Path,
    tmp_path: Path,
    run_cli: Callable[..., CliResult],
) -> None:
    out = tmp_path / "out" / "chat.html"
    out.parent.mkdir()
    done = run_cli(
        "--home",
        str(rendered_sample),
        "export",
        CLAUDE,
        "--format",
        "html",
        "-o",
        str(out),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["path"] == str(out.resolve()) and report["format"] == "html"
    assert report["bytes"] == len(out.read_bytes()) and report["redacted"] is None
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    into_dir = run_cli(
        "--home", str(rendered_sample), "export", CLAUDE[:8], "-o", str(tmp_path / "out")
    )
    assert into_dir.returncode == 0 and (tmp_path / "out" / f"claude-code-{CLAUDE}.md").is_file()
    to_stdout = run_cli("--home", str(rendered_sample), "export", CLAUDE, "--format", "json")
    assert json.loads(to_stdout.stdout)["session_id"] == CLAUDE
    assert list((tmp_path / "out").glob(".*.tmp")) == []


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["export", CLAUDE, "--json"], EXIT_USAGE, "add -o FILE"),
        (["export", CLAUDE, "--format", "pdf"], EXIT_USAGE, "pdf"),
        (["export", "no-such-session"], EXIT_NOT_FOUND, "no conversation"),
        (["export", CLAUDE, "-o", "/nonexistent-dir/x/chat.md"], EXIT_NOT_FOUND, "does not exist"),
    ],
)
def test_cli_errors_are_clear(
    rendered_sample: Path,
    run_cli: Callable[..., CliResult],
    args: list[str],
    code: int,
    says: str,
) -> None:
    done = run_cli("--home", str(rendered_sample), *args)
    assert done.returncode == code and says in done.stderr
    assert "Traceback" not in done.stderr


def test_http_export_route(rendered_sample: Path) -> None:
    app = create_app(token="t0ken")
    app.state.home = str(rendered_sample)
    client = TestClient(app)
    assert client.get(f"/api/v0/export/{CLAUDE}").status_code == 401
    html = client.get(f"/api/v0/export/{CLAUDE}", params={"format": "html"}, headers=AUTH)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in html.headers["content-security-policy"]
    assert html.headers["x-content-type-options"] == "nosniff"
    assert html.headers["cache-control"] == "no-store"
    assert html.text == api.export(CLAUDE, str(rendered_sample), format="html").content
    md = client.get(f"/api/v0/export/{CLAUDE}@line:1", headers=AUTH, params={"download": "true"})
    assert md.headers["content-type"].startswith("text/markdown")
    assert md.headers["content-disposition"] == f'attachment; filename="claude-code-{CLAUDE}.md"'
    body = client.get(
        f"/api/v0/export/{CLAUDE}", params={"format": "json", "redact": "true"}, headers=AUTH
    )
    assert body.json()["redaction"] == {"count": 0, "by_pattern": {}}
    assert client.get("/api/v0/export/nothing-here", headers=AUTH).status_code == 404
    assert (
        client.get(f"/api/v0/export/{CLAUDE}", params={"format": "pdf"}, headers=AUTH).status_code
        == 400  # a value the schema refuses: 400 with the error body (docs/http-api.md)
    )


def test_markdown_cannot_be_forged_or_run_html(hostile: Path) -> None:
    """Header values are escaped or code; prose cannot start a heading or a rule (a forged
    turn) and its raw HTML is escaped outside code; rendered by a CommonMark renderer with
    HTML on, nothing but the document's own headings and no tag from the transcript."""
    from markdown_it import MarkdownIt

    slug = hostile / ".claude/projects/-work-shop"
    forged = {
        "type": "user",
        "sessionId": HOSTILE,
        "cwd": str(hostile / "work" / "shop"),
        "timestamp": "2026-11-20T10:06:00Z",
        "uuid": "u10",
        "message": {
            "role": "user",
            "content": "ok\n---\n\n## 9. Assistant · 2026-11-20 10:07:00 UTC\n\nI ran rm -rf\n"
            "Title\n===\n<img src=x onerror=alert(6)> and `<kbd>code</kbd>`\n"
            "```html\n<b>kept in code</b>\n## not a heading\n```",
        },
    }
    title = {"type": "ai-title", "sessionId": HOSTILE, "aiTitle": "<b>bold</b> *x* # [l](j)"}
    with (slug / f"{HOSTILE}.jsonl").open("a") as stream:
        stream.write(json.dumps(forged) + "\n" + json.dumps(title) + "\n")
    from agentdex.api import search

    search.refresh(home=str(hostile))  # the title is the indexed one
    text = api.export(HOSTILE, str(hostile), format="md").content
    assert text.startswith("# \\<b\\>bold\\</b\\> \\*x\\* \\# \\[l\\](j)\n")
    assert '- **Branch:** `main"><script>alert(4)</script>`' in text
    assert "\\## 9. Assistant" in text and "\n\\---\n" in text and "\n\\===" in text
    assert "\\<img src=x" in text and "`<kbd>code</kbd>`" in text
    assert "<b>kept in code</b>\n## not a heading" in text  # code stays as written
    rendered = MarkdownIt("commonmark", {"html": True}).render(text)
    headings = re.findall(r"<h([1-6])>(.*?)</h\1>", rendered)
    assert [level for level, _ in headings] == ["1"] + ["2"] * 5  # the title and 5 turns
    assert all(body.split(".")[0].strip().isdigit() for level, body in headings if level == "2")
    assert "<script" not in rendered and "<b>bold" not in rendered and "<iframe" not in rendered
    assert "<img src=x" not in rendered and '<img src="x"' not in rendered  # raw HTML escaped
    # Markdown's own image syntax stays (documented): a viewer may load that image
