"""Resolver rules: names, caps, skills, symlinks, MCP metadata, bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentdex.context import reading
from agentdex.context.caps import Limits
from agentdex.context.model import Resource, aggregate_hash
from agentdex.context.resolver import resolve
from agentdex.context.sources import scan_roots
from context_helpers import res, skill, snap, sources_of, write


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path.resolve()


def test_recognized_names_are_exact_case(ws: Path) -> None:
    for name in ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".cursorrules"):
        write(ws / name, f"# {name}\n")
    write(ws / ".github" / "copilot-instructions.md", "# copilot\n")
    write(ws / ".cursor" / "rules" / "style.mdc", "---\ndescription: Style\n---\n# Style\n")
    for name in ("agents.md", "Claude.md", "gemini.MD", "README.md"):
        write(ws / "lower" / name, "# nope\n")
    write(ws / "copilot-instructions.md", "# not under .github\n")
    found = sources_of(snap(ws))
    assert found == {
        str(ws / n) for n in ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".cursorrules")
    } | {str(ws / ".github" / "copilot-instructions.md"), str(ws / ".cursor/rules/style.mdc")}
    mdc = res(snap(ws), ws / ".cursor/rules/style.mdc")
    assert (mdc["name"], mdc["description"]) == ("Style", "Style")


def test_resource_fields_and_ids(ws: Path) -> None:
    write(ws / "AGENTS.md", "intro\n## Shop rules\nbody\n")
    out = snap(ws, payload=True)
    item = res(out, ws / "AGENTS.md")
    assert item["id"] == f"instruction_file:{ws / 'AGENTS.md'}"
    assert item["status"] == "ok" and item["name"] == "Shop rules"
    assert item["payload"] == "intro\n## Shop rules\nbody\n"
    assert item["size"] == item["payload_bytes"] == len(item["payload"])
    assert len(item["content_hash"]) == 64
    assert out["total_payload_bytes"] == item["payload_bytes"]
    assert res(snap(ws), ws / "AGENTS.md")["payload"] is None  # payloads only when asked


def test_skipped_directories_are_never_descended(ws: Path) -> None:
    for skipped in (".git", "node_modules", ".venv"):
        write(ws / skipped / "AGENTS.md", "# hidden\n")
    write(ws / "pkg" / "AGENTS.md", "# nested\n")
    assert sources_of(snap(ws)) == {str(ws / "pkg" / "AGENTS.md")}


def test_per_resource_cap_marks_oversize_and_hashes_capped_prefix(ws: Path) -> None:
    big = write(ws / "AGENTS.md", "a" * (64 * 1024 + 10))
    first = res(snap(ws, payload=True), big)
    assert first["status"] == "oversize" and first["payload"] is None
    assert first["size"] == 64 * 1024 + 10 and first["content_hash"]
    big.write_text("b" + "a" * (64 * 1024 + 9))  # an edit inside the prefix
    assert res(snap(ws), big)["content_hash"] != first["content_hash"]
    exact = write(ws / "sub" / "AGENTS.md", "x" * (64 * 1024))
    assert res(snap(ws), exact)["status"] == "ok"


def test_one_gigabyte_sparse_file_reads_only_the_cap(ws: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    big = ws / "AGENTS.md"
    with open(big, "wb") as handle:
        handle.truncate(1 << 30)
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        reads.append(len(data))
        return data

    monkeypatch.setattr(reading.os, "read", counting_read)
    item = res(snap(ws), big)
    assert item["status"] == "oversize" and item["size"] == 1 << 30
    assert sum(reads) <= 64 * 1024 + 1


def test_aggregate_cap_excludes_overflow_of_every_kind(ws: Path) -> None:
    limits = Limits(max_total_bytes=100)
    write(ws / "AGENTS.md", "a" * 60)
    write(ws / "CLAUDE.md", "c" * 60)
    skill(ws, "late-skill", "name: late-skill\ndescription: x")
    result = resolve(scan_roots(str(ws), limits=limits), limits=limits)
    by = {r.source: r for r in result.resources}
    assert by[str(ws / "AGENTS.md")].status == "ok"
    assert by[str(ws / "CLAUDE.md")].status == "excluded"
    skill_res = by[str(ws / ".claude/skills/late-skill/SKILL.md")]
    assert skill_res.status == "excluded" and skill_res.payload is None
    assert skill_res.content_hash  # still hashed, so an edit is still seen
    assert sum(r.payload_bytes for r in result.resources) <= 100
    assert result.error and "aggregate payload cap" in result.error


def test_default_aggregate_cap_is_two_mib(ws: Path) -> None:
    for i in range(40):  # 40 x 60 KiB = 2.34 MiB
        write(ws / f"d{i:02}" / "AGENTS.md", "x" * (60 * 1024))
    out = snap(ws)
    assert out["total_payload_bytes"] <= 2 * 1024 * 1024
    assert out["status_counts"]["excluded"] == 40 - (2 * 1024 * 1024) // (60 * 1024)
    assert "aggregate payload cap" in out["error"]


def test_resource_count_cap_excludes_never_drops(ws: Path) -> None:
    for i in range(503):
        write(ws / f"d{i:03}" / "AGENTS.md", "x")
    out = snap(ws)
    assert out["resource_count"] == 503
    assert out["status_counts"] == {"ok": 500, "excluded": 3}
    assert "3 resources excluded" in out["error"]


def test_skill_front_matter_rules(ws: Path) -> None:
    good = skill(ws, "release-notes", "name: release-notes\ndescription: Write release notes")
    wrong = skill(ws, "other", "name: release-notes\ndescription: x")
    camel = skill(ws, "MySkill", "name: MySkill\ndescription: x")
    listy = skill(ws, "listy", "- a\n- b")
    empty = write(ws / "skills" / "bare" / "SKILL.md", "no front matter\n")
    broken = skill(ws, "broken", "name: [unclosed")
    out = snap(ws, payload=True)
    ok = res(out, good)
    assert (ok["status"], ok["name"], ok["description"]) == (
        "ok",
        "release-notes",
        "Write release notes",
    )
    assert ok["payload"].startswith("---\nname: release-notes")
    assert "does not match its folder" in res(out, wrong)["error"]
    assert "kebab-case" in res(out, camel)["error"]
    assert "not a mapping" in res(out, listy)["error"]
    assert "no YAML front matter" in res(out, empty)["error"]
    assert "not valid YAML" in res(out, broken)["error"]
    for path in (wrong, camel, listy, empty, broken):
        assert res(out, path)["status"] == "invalid" and res(out, path)["payload"] is None


def test_symlink_escaping_root_is_invalid_and_never_read(ws: Path, home: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    secret = write(home / ".ssh" / "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nTOPSECRET\n")
    outside = write(ws.parent / "outside.md", "OUTSIDE-BYTES\n")
    (ws / "AGENTS.md").symlink_to(secret)
    write(ws / "sub" / ".keep", "")
    (ws / "sub" / "CLAUDE.md").symlink_to(outside)
    opened: list[str] = []
    real_open = os.open

    def spy(path, flags, *args):  # type: ignore[no-untyped-def]
        opened.append(os.fspath(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(reading.os, "open", spy)
    out = snap(ws, payload=True)
    for link in (ws / "AGENTS.md", ws / "sub" / "CLAUDE.md"):
        item = res(out, link)
        assert item["status"] == "invalid" and "outside the scan root" in item["error"]
        assert item["payload"] is None and item["content_hash"] is None
    assert str(secret) not in opened and str(outside) not in opened
    text = json.dumps(out)
    assert "TOPSECRET" not in text and "OUTSIDE-BYTES" not in text


def test_symlink_inside_root_is_followed(ws: Path) -> None:
    target = write(ws / "docs" / "shared.md", "# Shared\n")
    (ws / "AGENTS.md").symlink_to("docs/shared.md")
    item = res(snap(ws, payload=True), ws / "AGENTS.md")
    assert item["status"] == "ok" and item["payload"] == "# Shared\n"
    assert item["target"] == str(target)


def test_symlink_to_secret_inside_root_is_refused(ws: Path) -> None:
    write(ws / ".env", "API_KEY=hunter2\n")
    (ws / "AGENTS.md").symlink_to(".env")
    item = res(snap(ws, payload=True), ws / "AGENTS.md")
    assert item["status"] == "invalid" and "secret" in item["error"]
    assert "hunter2" not in json.dumps(snap(ws, payload=True))


def test_broken_links_and_loops_are_unreadable(ws: Path) -> None:
    (ws / "AGENTS.md").symlink_to(ws / "missing.md")
    (ws / "CLAUDE.md").symlink_to(ws / "GEMINI.md")
    (ws / "GEMINI.md").symlink_to(ws / "CLAUDE.md")
    write(ws / "loop" / ".keep", "")
    (ws / "loop" / "again").symlink_to(ws / "loop")  # a directory loop must not hang
    out = snap(ws)
    assert res(out, ws / "AGENTS.md")["error"] == "broken symlink"
    assert res(out, ws / "CLAUDE.md")["status"] == "unreadable"
    assert "loop" in res(out, ws / "GEMINI.md")["error"]


def test_links_to_the_same_file_collapse(ws: Path) -> None:
    write(ws / "AGENTS.md", "# One\n")
    (ws / "CLAUDE.md").symlink_to("AGENTS.md")
    (ws / "GEMINI.md").symlink_to(ws / "AGENTS.md")
    out = snap(ws, payload=True)
    assert out["resource_count"] == 1
    item = res(out, ws / "AGENTS.md")
    assert item["aliases"] == [str(ws / "CLAUDE.md"), str(ws / "GEMINI.md")]
    assert out["total_payload_bytes"] == len("# One\n")


def test_fifo_named_claude_md_does_not_hang(ws: Path) -> None:
    os.mkfifo(ws / "CLAUDE.md")
    item = res(snap(ws), ws / "CLAUDE.md")
    assert item["status"] == "unreadable" and "FIFO" in item["error"]


def test_non_utf8_instruction_file_is_invalid(ws: Path) -> None:
    write(ws / "AGENTS.md", b"# ok\n\xff\xfe broken\n")
    item = res(snap(ws, payload=True), ws / "AGENTS.md")
    assert item["status"] == "invalid" and "UTF-8" in item["error"]
    assert item["payload"] is None and item["content_hash"]


def test_missing_root_ignored_and_file_root_reported(ws: Path, home: Path) -> None:
    write(home / ".codex", "not a directory\n")
    write(ws / "AGENTS.md", "# hi\n")
    out = snap(ws)
    roots = {r["path"]: r["status"] for r in out["roots"]}
    assert roots[str(home / ".gemini")] == "missing"
    assert roots[str(home / ".codex")] == "not_a_directory"
    assert out["error"] is None and out["resource_count"] == 1


def test_user_level_roots_are_scanned(ws: Path, home: Path) -> None:
    write(home / ".claude" / "CLAUDE.md", "# Personal\n")
    skill(home, "user-skill", "name: user-skill\ndescription: mine")
    write(home / ".claude" / "projects" / "p" / "AGENTS.md", "# history dirs are skipped\n")
    out = snap(ws)
    assert res(out, home / ".claude" / "CLAUDE.md")["scope"] == "user"
    assert res(out, home / ".claude/skills/user-skill/SKILL.md")["status"] == "ok"
    assert str(home / ".claude/projects/p/AGENTS.md") not in sources_of(out)


def test_kind_and_id_survive_an_unreadable_mcp_config(ws: Path) -> None:
    mcp = write(ws / ".mcp.json", '{"mcpServers": {}}')
    first = res(snap(ws), mcp)
    mcp.unlink()
    os.mkfifo(mcp)  # same path, now unreadable
    second = res(snap(ws), mcp)
    assert second["status"] == "unreadable"
    assert first["id"] == second["id"] == f"mcp_config:{mcp}"


def test_aggregate_hash_is_order_independent_and_length_prefixed() -> None:
    a = Resource("instruction_file", "/w/A", "workspace", "/w", content_hash="1")
    b = Resource("skill", "/w/B", "workspace", "/w", content_hash="2")
    assert aggregate_hash([a, b]) == aggregate_hash([b, a])
    x = Resource("instruction_file", "/w/ab", "workspace", "/w", content_hash="c")
    y = Resource("instruction_file", "/w/a", "workspace", "/w", content_hash="bc")
    assert aggregate_hash([x]) != aggregate_hash([y])


def test_discovery_order_does_not_change_the_snapshot(ws: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for i in range(5):
        write(ws / f"d{i}" / "AGENTS.md", f"# {i}\n")
    first = snap(ws)
    from agentdex.context import resolver

    real_scandir = os.scandir

    class Reversed:
        def __init__(self, path: str) -> None:
            self._it = real_scandir(path)

        def __enter__(self):  # type: ignore[no-untyped-def]
            entries = list(self._it)
            self._it.close()
            return iter(reversed(entries))

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(resolver.os, "scandir", Reversed)
    second = snap(ws)
    assert first["aggregate_hash"] == second["aggregate_hash"]
    assert [r["id"] for r in first["resources"]] == [r["id"] for r in second["resources"]]


def test_oversize_skill_and_mcp_config_still_hash(ws: Path) -> None:
    limits = Limits(max_resource_bytes=100, max_mcp_config_bytes=50)
    big_skill = skill(ws, "big-one", "name: big-one\ndescription: d", body="x" * 200)
    mcp = write(ws / ".mcp.json", '{"mcpServers": {}, "pad": "' + "p" * 100 + '"}')
    result = resolve(scan_roots(str(ws), limits=limits), limits=limits)
    by = {r.source: r for r in result.resources}
    for path in (big_skill, mcp):
        item = by[str(path)]
        assert item.status == "oversize" and item.content_hash and item.payload is None
    assert by[str(big_skill)].name == "big-one"  # front matter fits in the prefix


def test_non_utf8_names_are_counted_not_fatal(ws: Path) -> None:
    bad = os.fsencode(str(ws)) + b"/caf\xe9"
    os.mkdir(bad)
    with open(bad + b"/AGENTS.md", "wb") as handle:
        handle.write(b"# bad dir\n")
    write(ws / "AGENTS.md", "# fine\n")
    out = snap(ws)
    json.dumps(out)  # serializable
    assert out["resource_count"] == 1 and "non-UTF-8 names" in out["error"]


def test_walk_limit_is_reported(ws: Path) -> None:
    for i in range(5):
        write(ws / f"d{i}" / "AGENTS.md", "x")
    limits = Limits(max_dirs=3)
    result = resolve(scan_roots(str(ws), limits=limits), limits=limits)
    assert result.error and "stopped after 3 directories" in result.error
    assert len(result.resources) == 2  # the root and two directories were listed


def test_repository_ancestors_contribute_their_own_files(git_repo: Path) -> None:
    repo = git_repo.resolve()
    write(repo / "AGENTS.md", "# Repo rules\n")
    write(repo / "docs" / "AGENTS.md", "# sibling: not an ancestor\n")
    write(repo / "src" / "CLAUDE.md", "# src\n")
    shop = repo / "src" / "shop"
    write(shop / "AGENTS.md", "# Shop\n")
    out = snap(shop)
    assert res(out, repo / "AGENTS.md")["scope"] == "ancestor"
    assert res(out, repo / "src" / "CLAUDE.md")["scope"] == "ancestor"
    assert str(repo / "docs" / "AGENTS.md") not in sources_of(out)
    assert res(out, shop / "AGENTS.md")["scope"] == "workspace"


def test_no_ancestors_outside_a_repository(ws: Path) -> None:
    write(ws.parent / "AGENTS.md", "# above, but not a repository\n")
    assert sources_of(snap(ws)) == set()
