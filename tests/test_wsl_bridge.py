"""The WSL bridge (ADR 0009) against a synthetic Windows mount, plus VS Code edition roots.

Chat written by a Windows-side VS Code lives under
``/mnt/c/Users/<user>/AppData/Roaming/<edition>/User``; discovery probes it only
when WSL is detected and only for existing directories, and the records name
the Linux project (``vscode-remote://wsl+<distro>/...``) and the Windows host.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from agentdex import parsers
from agentdex.discovery import discover, wsl
from agentdex.discovery.roots import VSCODE_EDITIONS
from agentdex.parsers import ParseCursor, get_parser
from agentdex.records import Record

MD5 = "5d41402abc4b2a76b9719d911017c592"


def write_session(user_dir: Path, folder: str, text: str, sid: str = "s1") -> Path:
    storage = user_dir / "workspaceStorage" / MD5
    (storage / "chatSessions").mkdir(parents=True, exist_ok=True)
    (storage / "workspace.json").write_text(json.dumps({"folder": folder}))
    path = storage / "chatSessions" / f"{sid}.json"
    path.write_text(
        json.dumps(
            {
                "version": 3,
                "sessionId": sid,
                "creationDate": 1794300000000,
                "requests": [
                    {
                        "requestId": "r0",
                        "message": {"text": text},
                        "timestamp": 1794300060000,
                        "response": [{"value": f"answer to {text}"}],
                    }
                ],
            }
        )
    )
    return path


@pytest.fixture
def mount(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A synthetic ``/mnt/c/Users`` with one Windows user's VS Code chat about a WSL project."""
    users = tmp_path / "mnt" / "c" / "Users"
    user_dir = users / "alex" / "AppData" / "Roaming" / "Code" / "User"
    write_session(user_dir, "vscode-remote://wsl%2Bubuntu/home/alex/proj", "why is CI red")
    (users / "Public").mkdir()  # a profile without VS Code: nothing to find there
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    return users


def proc_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """Detection the real way: through the module's /proc/version path, with no env force."""
    monkeypatch.delenv("AGENTDEX_WSL", raising=False)
    fake = tmp_path / "proc-version"
    fake.write_text(text)
    monkeypatch.setattr(wsl, "PROC_VERSION", str(fake))


def bridged_records(home: Path) -> list[tuple[str, str | None, str | None, str]]:
    found = discover(home, agents=["vscode-copilot"])
    return [
        (r.text, r.cwd, r.host, r.session_id)
        for source in found.sources
        for r in parsers.run(source)
    ]


def test_forced_detection_finds_windows_chat(
    home: Path, mount: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    found = discover(home, agents=["vscode-copilot"])
    assert [s.host for s in found.sources] == ["windows:alex"]
    assert found.sources[0].path.is_relative_to(mount)
    assert bridged_records(home) == [
        ("why is CI red", "/home/alex/proj", "windows:alex", "s1"),
        ("answer to why is CI red", "/home/alex/proj", "windows:alex", "s1"),
    ]


def test_proc_version_detection_finds_windows_chat(
    home: Path, mount: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc_version(
        tmp_path,
        monkeypatch,
        "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@1c602f52c2e4) #1 SMP\n",
    )
    assert wsl.is_wsl()
    records = bridged_records(home)
    assert {(cwd, host) for _, cwd, host, _ in records} == {("/home/alex/proj", "windows:alex")}
    assert len(records) == 2


def test_without_detection_the_mount_is_never_probed(
    home: Path, mount: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc_version(tmp_path, monkeypatch, "Linux version 6.8.0-45-generic (buildd@lcy02) #45\n")
    assert not wsl.is_wsl()
    touched: list[str] = []
    real_scandir, real_stat = os.scandir, os.stat

    def spy_scandir(path: str | os.PathLike[str] = ".") -> object:
        touched.append(os.fspath(path))
        return real_scandir(path)

    def spy_stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        touched.append(os.fspath(path) if isinstance(path, str | os.PathLike) else str(path))
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as spies:  # scoped: the hermetic env patches stay in place
        spies.setattr(os, "scandir", spy_scandir)
        spies.setattr(os, "stat", spy_stat)
        found = discover(home, agents=["vscode-copilot"])
    assert found.sources == []
    assert touched, "the spy saw discovery's own probes"
    assert not [p for p in touched if p.startswith(str(mount))]
    # And forcing it off wins over a /proc/version that says WSL.
    proc_version(tmp_path, monkeypatch, "Linux version 5.15 microsoft-standard-WSL2\n")
    monkeypatch.setenv("AGENTDEX_WSL", "0")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(mount))
    assert discover(home, agents=["vscode-copilot"]).sources == []


def test_windows_editions_and_multiple_users(
    home: Path, mount: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    roaming = mount / "sam" / "AppData" / "Roaming"
    write_session(
        roaming / "Code - Insiders" / "User", "file:///c%3A/Users/sam/site", "hello", sid="s2"
    )
    found = discover(home, agents=["vscode-copilot"])
    assert sorted((s.host, s.root.path.parent.name) for s in found.sources) == [
        ("windows:alex", "Code"),
        ("windows:sam", "Code - Insiders"),
    ]
    cwds = {r.cwd for s in found.sources for r in parsers.run(s)}
    assert cwds == {"/home/alex/proj", "/mnt/c/Users/sam/site"}


# --------------------------------------------------------------------------- local editions


@pytest.mark.parametrize("edition", VSCODE_EDITIONS)
def test_every_local_edition_is_discovered(home: Path, edition: str) -> None:
    write_session(home / ".config" / edition / "User", "file:///home/u/app", f"in {edition}")
    found = discover(home, agents=["vscode-copilot"])
    assert [(s.root.path.parent.name, s.host) for s in found.sources] == [(edition, None)]
    assert next(r.text for r in parsers.run(found.sources[0])) == f"in {edition}"


def test_remote_server_user_dir(home: Path) -> None:
    write_session(home / ".vscode-server" / "data" / "User", "file:///srv/api", "on the server")
    found = discover(home, agents=["vscode-copilot"])
    assert len(found.sources) == 1
    assert next((r.text, r.cwd) for r in parsers.run(found.sources[0])) == (
        "on the server",
        "/srv/api",
    )


def test_vscode_appdata_pins_one_install(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session(home / ".config" / "Code" / "User", "file:///home/u/ignored", "default")
    pinned = tmp_path / "Roaming"
    write_session(pinned / "Code" / "User", "file:///home/u/pinned", "pinned")
    monkeypatch.setenv("VSCODE_APPDATA", str(pinned))
    found = discover(home, agents=["vscode-copilot"])
    texts = [r.text for s in found.sources for r in parsers.run(s) if r.kind == "prompt"]
    assert texts == ["pinned"]
    assert found.warnings == []


def test_vscode_appdata_may_name_the_install_itself(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install = tmp_path / "portable" / "data"  # a portable install: <dir>/User directly
    write_session(install / "User", "file:///home/u/portable", "portable")
    monkeypatch.setenv("VSCODE_APPDATA", str(install))
    found = discover(home, agents=["vscode-copilot"])
    assert [s.root.path for s in found.sources] == [install / "User"]


def test_vscode_appdata_missing_falls_back_with_warning(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session(home / ".config" / "Code" / "User", "file:///home/u/app", "default")
    missing = tmp_path / "no-such-appdata"
    monkeypatch.setenv("VSCODE_APPDATA", str(missing))
    found = discover(home, agents=["vscode-copilot"])
    texts = [r.text for s in found.sources for r in parsers.run(s) if r.kind == "prompt"]
    assert texts == ["default"]
    assert found.warnings == [
        f"VSCODE_APPDATA={missing} is not a directory; using the default location"
    ]


def test_missing_users_root_finds_nothing_without_error(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(tmp_path / "not-mounted"))
    found = discover(home, agents=["vscode-copilot"])
    assert found.sources == [] and found.warnings == []


# --------------------------------------------------------------------------- sample home

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
#: This capability's part of the README tour's sample home.
TOUR_PATHS = (
    ".gemini/projects.json",
    ".gemini/tmp/notes-api",
    ".config/Code/User/workspaceStorage/8c1f3e2a9d4b7c6e5f0a1b2c3d4e5f60",
    "mnt/c/Users/alex/AppData/Roaming/Code/User/workspaceStorage/f0e1d2c3b4a5968778695a4b3c2d1e0f",
)


def render_tour_part(home: Path) -> None:
    """Render this capability's template files as the lead's script does (``__HOME__``)."""
    template = EXAMPLES / "home-template"
    for rel in TOUR_PATHS:
        src = template / rel
        for path in [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file()):
            target = home / path.relative_to(template)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path.read_text().replace("__HOME__", str(home)))
    seed = EXAMPLES / "home-template-sql/.config/Code/User/globalStorage/state.vscdb.sql"
    db = home / ".config/Code/User/globalStorage/state.vscdb"
    db.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db) as conn:
        conn.executescript(seed.read_text())
    conn.close()


def test_sample_home_tour(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (EXAMPLES / "home-template" / TOUR_PATHS[1]).is_dir():
        pytest.skip("sample home template not present")
    render_tour_part(home)
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(home / "mnt/c/Users"))
    found = discover(home, agents=["gemini-cli", "vscode-copilot"])
    by_store: dict[str, list[Record]] = {}
    for source in found.sources:
        cursor = ParseCursor()
        records = list(parsers.run(source, cursor))
        count_raw = get_parser(source.row.parser or "").count_raw
        assert count_raw is not None and cursor.units == count_raw(source.path) > 0
        by_store.setdefault(source.store, []).extend(records)
    notes, shop = str(home / "src/notes-api"), str(home / "src/shop")
    chats = by_store["gemini-cli.chats"]
    assert {r.cwd for r in chats} == {notes}
    prompts = [r.text for r in chats if r.kind == "prompt"]
    assert len(prompts) == 2 and "Use slowapi instead" not in prompts  # rewound
    assert [r.text for r in chats if r.kind == "summary"] == [
        "Per-API-key rate limiting with 429 + Retry-After for /notes"
    ]
    assert len(by_store["gemini-cli.logs"]) == 3  # the prompt log keeps the rewound one
    vscode = by_store["vscode-copilot.chat_sessions"]
    assert {(r.cwd, r.host) for r in vscode} == {(shop, None), (shop, "windows:alex")}
    windows = [r for r in vscode if r.host == "windows:alex"]
    assert any("fake clock" in r.text for r in windows if r.kind == "prompt")
    assert any(r.kind == "tool_result" and "2 failed" in r.text for r in windows)
    inline = [r.text for r in by_store["vscode-copilot.inline_history"]]
    assert inline == [
        "extract the price formatting into formatMoney()",
        "add aria-labels to the payment inputs",
        "convert this callback to async/await",
    ]
