"""Live file watching with ``watchfiles`` (Rust ``notify``: inotify, FSEvents, ...).

Why this shape: ``watchfiles.watch(recursive=True)`` would arm every
directory under a root, including ``node_modules`` and ``.git``, and burn
the OS watch budget on trees the resolver never reads. Instead the watcher
arms exactly the directories the last resolve walked, non-recursively, in
one ``RustNotify`` instance (one inotify instance). When a resolve walks a
new directory set (a directory was created, moved or deleted) the watcher
re-arms; when newly armed directories appear it asks for one more resolve
so a file created between the walk and the arm is not missed.

Debounce: after a relevant event the watcher keeps reading events until
``debounce`` seconds pass with none at all (bounded by ten debounces under
constant churn), then resolves once. Only events on recognized names,
known paths, awaited roots or new directories start that countdown.

Degraded mode: when arming fails (typically the OS watch limit), the
watcher stops watching, reports why through ``on_degraded`` and waits. It
never asks for a resolve from there, so it cannot loop; an explicit resync
(``arm(..., force=True)``) retries and clears the error when it succeeds.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from agentdex.context.names import classify
from agentdex.context.resolver import WatchPlan


class Notifier(Protocol):
    def watch(self, debounce_ms: int, step_ms: int, timeout_ms: int, stop_event: Any) -> Any: ...

    def close(self) -> None: ...


NotifierFactory = Callable[[list[str]], Notifier]


def rust_notifier(paths: list[str]) -> Notifier:
    """The production notifier: one non-recursive watch per directory."""
    from watchfiles._rust_notify import RustNotify

    notifier: Notifier = RustNotify(paths, False, False, 300, False, False)
    return notifier


def _describe(exc: BaseException) -> str:
    text = str(exc).split(" about ", 1)[0].strip() or type(exc).__name__
    if "watch limit" in text.lower() or "no space left" in text.lower():
        return (
            "live updates are off: the OS file watch limit was reached "
            "(raise fs.inotify.max_user_watches, then resync or restart)"
        )
    return f"live updates are off: cannot watch files ({text}); resync or restart to retry"


class Watcher:
    """Runs one thread; calls ``on_change`` (on that thread) after relevant events."""

    def __init__(
        self,
        on_change: Callable[[], None],
        on_degraded: Callable[[str | None], None],
        *,
        debounce: float = 0.25,
        notifier_factory: NotifierFactory | None = None,
    ) -> None:
        self._on_change = on_change
        self._on_degraded = on_degraded
        self._debounce_ms = max(1, int(debounce * 1000))
        self._poll_ms = min(50, self._debounce_ms)
        self._factory = notifier_factory or rust_notifier
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._desired: WatchPlan | None = None
        self._desired_epoch = -1
        self._force = False
        self._armed: frozenset[str] | None = None
        self._plan = WatchPlan()
        self._degraded: str | None = None
        self._thread = threading.Thread(
            target=self._run, name="agentdex-context-watch", daemon=True
        )
        self._thread.start()

    @property
    def degraded(self) -> str | None:
        return self._degraded

    @property
    def armed_dirs(self) -> frozenset[str]:
        return self._armed or frozenset()

    def arm(self, epoch: int, plan: WatchPlan, *, force: bool = False) -> None:
        """Ask the thread to watch ``plan``; plans from older resolves are ignored."""
        with self._lock:
            if epoch < self._desired_epoch:
                return
            self._desired_epoch = epoch
            self._desired = plan
            self._force = self._force or force
            self._wake.set()

    def close(self, timeout: float = 5.0) -> None:
        self._closed.set()
        self._wake.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    # -- thread ---------------------------------------------------------------

    def _relevant(self, path: str) -> bool:
        plan = self._plan
        if path in plan.files or path in plan.dirs:
            return True
        if os.path.basename(path) in plan.skip:
            return False
        if classify(path) is not None:
            return True
        parent = os.path.dirname(path)
        return parent in plan.dirs and os.path.isdir(path)

    def _arm_now(self, plan: WatchPlan) -> tuple[Notifier | None, str | None]:
        dirs = sorted(plan.all_dirs)
        for _attempt in range(3):
            if not dirs:
                return None, None
            try:
                return self._factory(dirs), None
            except (FileNotFoundError, PermissionError):
                # The tree changed since the walk: keep what is still watchable.
                dirs = [d for d in dirs if os.path.isdir(d) and os.access(d, os.R_OK | os.X_OK)]
            except (OSError, RuntimeError) as exc:
                return None, _describe(exc)
        return None, "live updates are off: directories kept vanishing while arming"

    def _settle(self, notifier: Notifier) -> object:
        """Wait until ``debounce`` passes with no event at all (at most 10 debounces)."""
        deadline = time.monotonic() + 10 * self._debounce_ms / 1000
        result: object = None
        while time.monotonic() < deadline:
            result = notifier.watch(self._debounce_ms, self._poll_ms, self._debounce_ms, self._wake)
            if not isinstance(result, set):
                break  # "timeout": quiet for a whole debounce; "stop": asked to re-arm
        return result

    def _changed(self) -> None:
        """Run ``on_change``; a failure there must not kill the watching thread."""
        try:
            self._on_change()
        except Exception as exc:
            self._set_degraded(f"live update failed: {exc}")

    def _set_degraded(self, reason: str | None) -> None:
        if reason != self._degraded:
            self._degraded = reason
            self._on_degraded(reason)

    def _run(self) -> None:
        notifier: Notifier | None = None
        try:
            while not self._closed.is_set():
                with self._lock:
                    plan, force = self._desired, self._force
                    self._force = False
                    self._wake.clear()
                if plan is not None and (force or plan.all_dirs != self._armed):
                    if notifier is not None:
                        notifier.close()
                        notifier = None
                    previous = self._armed or frozenset()
                    notifier, reason = self._arm_now(plan)
                    self._armed, self._plan = plan.all_dirs, plan
                    self._set_degraded(reason)
                    if notifier is not None and not plan.dirs <= previous:
                        self._changed()  # close the walk-to-arm gap
                        continue
                if notifier is None:
                    self._wake.wait()
                    continue
                result = notifier.watch(self._poll_ms * 10, self._poll_ms, 0, self._wake)
                if isinstance(result, set) and any(self._relevant(p) for _c, p in result):
                    self._settle(notifier)
                    self._changed()
                elif result == "stop" and not self._closed.is_set():
                    # Stopping may drop events grouped so far; one resolve covers them.
                    self._changed()
        finally:
            if notifier is not None:
                notifier.close()
