"""Publishing rules: versions, epochs, cancellation, degraded watching."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from agentdex.context.manager import ContextManager
from agentdex.context.model import Resource
from agentdex.context.resolver import Resolution, WatchPlan, resolve
from agentdex.context.sources import scan_roots
from context_helpers import eventually, unprivileged_python, write


def _resolution(tag: str) -> Resolution:
    item = Resource("instruction_file", f"/w/{tag}", "workspace", "/w", content_hash=tag)
    return Resolution((item,), (), None, WatchPlan())


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path.resolve()


def _manager(ws: Path, **kwargs: Any) -> ContextManager:
    return ContextManager(str(ws), lambda: scan_roots(str(ws)), **kwargs)


def test_version_grows_only_on_change(ws: Path) -> None:
    with _manager(ws) as manager:
        write(ws / "AGENTS.md", "# one\n")
        first = manager.resync()
        assert first.version == 1
        assert manager.resync().version == 1  # nothing changed: nothing published
        (ws / "AGENTS.md").write_text("# two\n")
        second = manager.resync()
        assert second.version == 2 and second.aggregate_hash != first.aggregate_hash


def test_stale_resolve_never_overwrites_a_fresher_one() -> None:
    release_old = threading.Event()
    old_started = threading.Event()
    calls = iter(["old", "new"])

    def resolver(roots: Any, **kwargs: Any) -> Resolution:
        tag = next(calls)
        if tag == "old":
            old_started.set()
            release_old.wait(10)
        return _resolution(tag)

    manager = ContextManager("/w", list, resolver=resolver)
    results: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: results.setdefault("old", manager.resync()))
    worker.start()
    assert old_started.wait(10)
    newer = manager.resync()  # starts later, finishes first
    release_old.set()
    worker.join(10)
    assert newer.resources[0].content_hash == "new"
    assert manager.current().resources[0].content_hash == "new"
    assert results["old"].resources[0].content_hash == "new"  # stale caller gets live one
    assert manager.version == 1


def test_cancelled_resolve_keeps_the_live_snapshot(ws: Path) -> None:
    write(ws / "AGENTS.md", "# live\n")
    cancel = threading.Event()
    state = {"cancel_next": False}

    def resolver(roots: Any, **kwargs: Any) -> Resolution:
        if state["cancel_next"]:
            cancel.set()  # cancelled mid-walk: should_stop now says stop
        return resolve(roots, **kwargs)

    with ContextManager(str(ws), lambda: scan_roots(str(ws)), resolver=resolver) as manager:
        live = manager.resync()
        (ws / "AGENTS.md").unlink()
        state["cancel_next"] = True
        after = manager.resync(cancel=cancel)
        assert after.resources == live.resources
        assert manager.current().resources == live.resources
        assert manager.version == 1


def test_resolver_that_returns_empty_after_cancel_is_not_published(ws: Path) -> None:
    cancel = threading.Event()
    results = iter([_resolution("real")])

    def resolver(roots: Any, **kwargs: Any) -> Resolution:
        try:
            return next(results)
        except StopIteration:
            cancel.set()
            return Resolution((), (), None, WatchPlan())

    manager = ContextManager("/w", list, resolver=resolver)
    manager.resync()
    assert manager.resync(cancel=cancel).resources[0].content_hash == "real"
    assert manager.version == 1


class FailingNotifier:
    """Stands in for the OS refusing more watches (ENOSPC)."""

    attempts = 0

    @classmethod
    def factory(cls, paths: list[str]) -> Any:
        cls.attempts += 1
        raise OSError('OS file watch limit reached. about ["/x"]')


def test_watch_limit_degrades_cleanly_without_a_resolve_loop(ws: Path) -> None:
    write(ws / "AGENTS.md", "# hi\n")
    FailingNotifier.attempts = 0
    with _manager(
        ws, watch=True, debounce=0.02, notifier_factory=FailingNotifier.factory
    ) as manager:
        manager.resync()
        eventually(lambda: manager.current().error)
        error = manager.current().error
        assert error is not None and "watch limit" in error
        resolves, attempts = manager.resolve_count, FailingNotifier.attempts
        # A loop would re-resolve every debounce (20 ms); wait 25 debounces for one.
        assert manager.wait_for_version(manager.version, timeout=0.5) is None
        assert (manager.resolve_count, FailingNotifier.attempts) == (resolves, attempts)
        assert manager.current().resources[0].status == "ok"  # still answers


def test_resync_retries_arming_and_clears_the_error(ws: Path) -> None:
    write(ws / "AGENTS.md", "# hi\n")
    state = {"fail": True}

    class Quiet:
        def watch(self, *args: Any) -> str:
            args[-1].wait(0.05)
            return "stop" if args[-1].is_set() else "timeout"

        def close(self) -> None:
            pass

    def factory(paths: list[str]) -> Any:
        if state["fail"]:
            raise OSError("OS file watch limit reached.")
        return Quiet()

    with _manager(ws, watch=True, debounce=0.02, notifier_factory=factory) as manager:
        manager.resync()
        eventually(lambda: manager.current().error)
        state["fail"] = False
        manager.resync()
        eventually(lambda: manager.current().error is None)


WATCH_LIMIT_SCRIPT = r"""
import json, os, sys
from pathlib import Path
with open("/proc/sys/user/max_inotify_watches", "w") as fh:
    fh.write("3")
from agentdex.api import context as api
live = api.watch(sys.argv[1], debounce=0.02)
import time
deadline = time.monotonic() + 10
while not live.snapshot()["error"] and time.monotonic() < deadline:
    time.sleep(0.02)
first = live.snapshot()
count = live._manager.resolve_count
got = live.wait(first["version"], timeout=0.5)
print(json.dumps({"error": first["error"], "resources": first["resource_count"],
                  "new_version": got is not None,
                  "extra_resolves": live._manager.resolve_count - count}))
live.close()
"""


def test_real_os_watch_limit_in_a_user_namespace(ws: Path, tmp_path: Path) -> None:
    import os
    import shutil
    import subprocess
    import sys

    from context_helpers import SRC

    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs unshare -Ur to lower the per-namespace inotify limit")
    for i in range(8):
        write(ws / f"d{i}" / "AGENTS.md", f"# {i}\n")
    script = tmp_path / "limit.py"
    script.write_text(WATCH_LIMIT_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run(
        ["unshare", "-Ur", sys.executable, str(script), str(ws)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    if proc.returncode != 0 and "unshare" in proc.stderr:
        pytest.skip(f"user namespaces unavailable: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert "watch limit" in out["error"] and out["resources"] == 8
    assert out["new_version"] is False and out["extra_resolves"] == 0


PERMISSION_SCRIPT = r"""
import json, os, sys
from agentdex.api import context as api
path = sys.argv[1] if len(sys.argv) > 1 else os.environ["CTX_WS"]
print(json.dumps(api.snapshot(path)))
"""


def test_permission_flip_keeps_id_and_kind(ws: Path) -> None:
    write(ws / "AGENTS.md", "# hi\n")
    mcp = write(ws / ".mcp.json", '{"mcpServers": {}}')
    skill = write(ws / "skills" / "a-skill" / "SKILL.md", "---\nname: a-skill\n---\n")
    for path in (ws.parent, ws, ws / "skills", ws / "skills" / "a-skill"):
        path.chmod(0o755)
    results = []
    for mode in (0o000, 0o644):
        for path in (ws / "AGENTS.md", mcp, skill):
            path.chmod(mode)
        proc = unprivileged_python(PERMISSION_SCRIPT, {"CTX_WS": str(ws)})
        if proc is None:
            pytest.skip("cannot drop privileges here")
        assert proc.returncode == 0, proc.stderr
        results.append({r["source"]: r for r in json.loads(proc.stdout)["resources"]})
    locked, unlocked = results
    for path in (ws / "AGENTS.md", mcp, skill):
        assert locked[str(path)]["status"] == "unreadable"
        assert locked[str(path)]["error"] == "permission denied"
        assert unlocked[str(path)]["status"] == "ok"
        assert locked[str(path)]["id"] == unlocked[str(path)]["id"]


def test_watch_triggered_failure_is_reported_not_fatal(ws: Path) -> None:
    from agentdex.context.sources import sources_path

    write(ws / "AGENTS.md", "# hi\n")
    with _manager(ws, watch=True, debounce=0.02) as manager:
        manager.resync()
        sources_path().parent.mkdir(parents=True, exist_ok=True)
        sources_path().write_text("{corrupt")
        write(ws / "CLAUDE.md", "# trigger\n")
        eventually(lambda: "cannot resolve" in (manager.current().error or ""))
        sources_path().unlink()
        write(ws / "GEMINI.md", "# trigger again\n")  # the watcher thread survived
        eventually(
            lambda: (
                manager.current().error is None
                and manager.current().resources
                and len(manager.current().resources) == 3
            )
        )
