"""The ``agentdex.agents`` door: a real entry point in a temporary site dir.

The example plug-in of ``docs/adding-an-agent.md`` (``examples/plugin``) is
installed the way pip leaves a wheel (a module plus a ``.dist-info`` with an
``entry_points.txt``) into a temp folder on ``PYTHONPATH``, beside two broken
plug-ins; real ``python -m agentdex`` processes then list, parse, audit and
search it, and the broken ones are reported without breaking anything else.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdex.catalogue import AGENT_SPECS, CATALOGUE, plugins
from agentdex.catalogue.schema import Agent, RootSpec, StoreRow
from agentdex.records import AGENTS

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "plugin" / "agentdex_jotter.py"
DOC = REPO / "docs" / "adding-an-agent.md"

SESSION = [
    {"type": "session", "id": "jot-1", "cwd": "{cwd}", "version": "0.3.1"},
    {"type": "user", "text": "add a login page", "ts": "2026-11-02T09:00:00Z"},
    {"type": "assistant", "text": "Added login.html.", "ts": "2026-11-02T09:00:05Z"},
    {"type": "tool", "name": "shell", "input": {"cmd": "ls"}, "output": "login.html"},
    {"type": "thought", "text": "a record type jotter 0.3.1 added"},
]


def _dist(site: Path, name: str, version: str, entry: str, module: str, code: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[agentdex.agents]\n{entry}\n")
    (site / f"{module}.py").write_text(code)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    _dist(
        site,
        "agentdex-jotter",
        "0.1",
        "jotter = agentdex_jotter:AGENT",
        "agentdex_jotter",
        EXAMPLE.read_text(),
    )
    _dist(
        site,
        "agentdex-broken",
        "0.2",
        "broken = agentdex_broken:AGENT",
        "agentdex_broken",
        "raise RuntimeError('half-installed')\n",
    )
    clash = EXAMPLE.read_text().replace('id="jotter"', 'id="codex"')
    _dist(site, "agentdex-clash", "1.0", "codex = agentdex_clash:AGENT", "agentdex_clash", clash)
    return site


@pytest.fixture
def jotter_home(home: Path, git_repo: Path) -> Path:
    sessions = home / ".jotter" / "sessions"
    sessions.mkdir(parents=True)
    lines = [json.dumps(item).replace("{cwd}", str(git_repo)) for item in SESSION]
    (sessions / "jot-1.jsonl").write_text("\n".join(lines) + "\n")
    return home


def _json(run: Callable[..., object], site: Path, *args: str, plugins_on: str = "1") -> dict:
    env = {"PYTHONPATH": f"{REPO / 'src'}:{site}", "AGENTDEX_PLUGINS": plugins_on}
    result = run(*args, "--json", env=env)
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    return json.loads(result.stdout)  # type: ignore[attr-defined]


def test_sources_lists_the_plugin_and_reports_the_broken_ones(
    run_cli: Callable[..., object], site: Path, jotter_home: Path
) -> None:
    data = _json(run_cli, site, "sources")
    jotter = [s for s in data["sources"] if s["agent"] == "jotter"]
    assert [(s["store"], s["parse_status"]) for s in jotter] == [("jotter.sessions", "ok")]
    by_name = {p["agent"]: p for p in data["plugins"]}
    assert by_name["jotter"]["status"] == "loaded"
    assert by_name["jotter"]["distribution"] == "agentdex-jotter 0.1"
    assert by_name["broken"]["status"] == "refused"
    assert "RuntimeError: half-installed" in by_name["broken"]["error"]
    assert by_name["codex"]["status"] == "refused"
    assert "already taken" in by_name["codex"]["error"]
    assert any("agentdex-broken 0.2" in w and "left out" in w for w in data["warnings"])


def test_doctor_lists_the_plugin_store_and_where_it_looked(
    run_cli: Callable[..., object], site: Path, jotter_home: Path
) -> None:
    data = _json(run_cli, site, "doctor")
    store = next(s for s in data["stores"] if s["store"] == "jotter.sessions")
    assert store["status"] == "found"
    assert str(jotter_home / ".jotter") in {p["path"] for p in store["looked_in"]}
    assert {p["agent"] for p in data["plugins"]} == {"jotter", "broken", "codex"}
    # the built-in codex is untouched by the clashing plug-in
    assert any(s["store"] == "codex.sessions" for s in data["stores"])


def test_audit_reports_the_unrecognised_record_type_per_version(
    run_cli: Callable[..., object], site: Path, jotter_home: Path
) -> None:
    data = _json(run_cli, site, "audit")
    row = next(s for s in data["sources"] if s["agent"] == "jotter")
    assert (row["records"], row["units"], row["raw"]) == (4, 3, 3)
    assert row["roles"]["mismatched"] == 0
    drift = [d for d in data["drift"] if d["agent"] == "jotter"]
    assert [(d["version"], d["what"], d["name"], d["count"]) for d in drift] == [
        ("0.3.1", "record type", "thought", 1)
    ]
    assert drift[0]["locator"] == "line:5"


def test_search_finds_plugin_records_with_their_project(
    run_cli: Callable[..., object], site: Path, jotter_home: Path, git_repo: Path
) -> None:
    data = _json(run_cli, site, "search", "login page")
    hits = [h for h in data["results"] if h["agent"] == "jotter"]
    assert hits and hits[0]["session_id"] == "jot-1"
    assert hits[0]["project"] == str(git_repo)


def test_plugins_off_leaves_them_out(
    run_cli: Callable[..., object], site: Path, jotter_home: Path
) -> None:
    data = _json(run_cli, site, "sources", plugins_on="0")
    assert data["plugins"] == []
    assert not [s for s in data["sources"] if s["agent"] == "jotter"]


def test_the_doc_walks_through_the_example_file_verbatim() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert EXAMPLE.read_text() in blocks


def test_builtins_come_through_the_same_door() -> None:
    from agentdex.catalogue import PLUGINS

    builtin = [origin for origin in PLUGINS if origin.builtin]
    assert [origin.agent for origin in builtin] == list(AGENTS)
    for origin, agent in zip(builtin, AGENT_SPECS, strict=False):
        assert plugins._load_ref(origin.entry_point) is agent


def _row(agent: str, store: str, root: str = "r", parser: str | None = None) -> StoreRow:
    return StoreRow(agent, store, "transcripts", "jsonl", root, ("*.jsonl",), parser)


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        (Agent("Bad_Id", (_row("Bad_Id", "Bad_Id.x"),)), "lower-case"),
        (Agent("a", ()), "no catalogue rows"),
        (Agent("a", (_row("b", "a.x"),), roots={"r": RootSpec()}), "names agent b"),
        (Agent("a", (_row("a", "x.y"),), roots={"r": RootSpec()}), "must start with a."),
        (Agent("a", (_row("a", "a.x", parser="a.p"),), roots={"r": RootSpec()}), "a.p is not"),
        (Agent("a", (_row("a", "a.x", root="nowhere"),)), "'nowhere' is not declared"),
        (Agent("a", (_row("a", "a.x", root="claude"),), roots={"claude": RootSpec()}), "taken"),
        (Agent("a", (_row("a", "a.x"),), {"b.p": "m"}, {"r": RootSpec()}), "must start with a."),
        (Agent("codex", (_row("codex", "codex.x"),), roots={"r": RootSpec()}), "already taken"),
    ],
)
def test_the_door_refuses_inconsistent_agents(agent: Agent, message: str) -> None:
    taken = plugins._Taken({"codex"}, set(), set(), set())
    with pytest.raises(ValueError, match=re.escape(message)):
        plugins.check(agent, taken, {"claude"})


def test_an_example_plugin_checks_clean_against_the_builtins(tmp_path: Path) -> None:
    import importlib.util

    copy = tmp_path / "agentdex_jotter_check.py"
    shutil.copy(EXAMPLE, copy)
    spec = importlib.util.spec_from_file_location("agentdex_jotter_check", copy)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    taken = plugins._Taken(set(AGENTS), {r.store for r in CATALOGUE}, set(), set())
    assert plugins.check(module.AGENT, taken, {r.root for r in CATALOGUE}) is module.AGENT


def test_the_test_template_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The doc's test template, run against the example plug-in it is written for."""
    import importlib

    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    monkeypatch.setattr("sys.dont_write_bytecode", True)
    template = importlib.import_module("test_agentdex_jotter")
    tests = [name for name in dir(template) if name.startswith("test_")]
    assert len(tests) == 5
    for number, name in enumerate(tests):
        func = getattr(template, name)
        if "tmp_path" in func.__code__.co_varnames[: func.__code__.co_argcount]:
            folder = tmp_path / str(number)
            folder.mkdir()
            func(folder)
        else:
            func()


def test_human_listings_name_the_plugin(
    run_cli: Callable[..., object], site: Path, jotter_home: Path
) -> None:
    env = {"PYTHONPATH": f"{REPO / 'src'}:{site}", "AGENTDEX_PLUGINS": "1"}
    sources = run_cli("sources", env=env)
    assert "jotter (plug-in agentdex-jotter 0.1)" in sources.stdout  # type: ignore[attr-defined]
    assert "agentdex-broken 0.2) left out" in sources.stderr  # type: ignore[attr-defined]
    doctor = run_cli("doctor", env=env).stdout  # type: ignore[attr-defined]
    assert "loaded jotter = agentdex_jotter:AGENT (agentdex-jotter 0.1)" in doctor
    assert "left out codex = agentdex_clash:AGENT (agentdex-clash 1.0)" in doctor
    audit = run_cli("audit", env=env).stdout  # type: ignore[attr-defined]
    assert "jotter 0.3.1: record type 'thought' x1 in 1 file(s)" in audit
