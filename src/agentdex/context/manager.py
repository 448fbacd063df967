"""Versioned, epoch-guarded publishing of one workspace's snapshot.

Every resolve takes an epoch (a counter) under the lock, walks the
filesystem with the lock released, then publishes only if its epoch is
newer than the one last published. So a slow resolve that started before
a faster one can never overwrite it, and readers (``current``) never wait
on filesystem I/O. A cancelled resolve raises instead of returning, and a
result whose cancel flag is set is dropped: the live snapshot stays.

``version`` grows by one each time the published content (aggregate hash
or error) changes; an identical resolve publishes nothing.

``on_resolved`` (the context history recorder) sees every resolve that was
published or found identical, with its roots and wall-clock start, after
publishing and outside the lock; its failures never reach the live view.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace

from agentdex.context.caps import DEFAULT_LIMITS, Limits
from agentdex.context.model import Snapshot
from agentdex.context.resolver import Cancelled, Resolution, ScanRoot, resolve
from agentdex.context.watcher import NotifierFactory, Watcher
from agentdex.errors import AgentdexError

RootsFactory = Callable[[], list[ScanRoot]]
Resolver = Callable[..., Resolution]
#: (resolution, the scan roots it walked, its wall-clock start in ns)
OnResolved = Callable[[Resolution, list[ScanRoot], int], None]


def _join(*parts: str | None) -> str | None:
    return "; ".join(p for p in parts if p) or None


class ContextManager:
    """Owns the published snapshot of one workspace, and optionally its watcher."""

    def __init__(
        self,
        workspace: str,
        roots: RootsFactory,
        *,
        limits: Limits = DEFAULT_LIMITS,
        watch: bool = False,
        debounce: float = 0.25,
        resolver: Resolver = resolve,
        notifier_factory: NotifierFactory | None = None,
        on_resolved: OnResolved | None = None,
    ) -> None:
        self.workspace = workspace
        self._on_resolved = on_resolved
        self._roots = roots
        self._limits = limits
        self._resolver = resolver
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._closing = threading.Event()
        self._started_epoch = 0
        self._published_epoch = 0
        self._version = 0
        self._published: Snapshot | None = None
        self._resolve_error: str | None = None
        self._watch_error: str | None = None
        self._subscribers: list[Callable[[Snapshot], None]] = []
        self.resolve_count = 0
        self._watcher: Watcher | None = None
        if watch:
            self._watcher = Watcher(
                self._on_watch_change,
                self._on_degraded,
                debounce=debounce,
                notifier_factory=notifier_factory,
            )

    # -- reading -------------------------------------------------------------

    def current(self) -> Snapshot:
        """The published snapshot, resolving once if nothing is published yet."""
        with self._lock:
            snap = self._published
        return snap if snap is not None else self.resync()

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def wait_for_version(self, after: int, timeout: float | None = None) -> Snapshot | None:
        """Block until a snapshot newer than ``after`` is published (None on timeout/close)."""
        with self._changed:
            ok = self._changed.wait_for(
                lambda: self._version > after or self._closing.is_set(), timeout
            )
            return self._published if ok and self._version > after else None

    def subscribe(self, callback: Callable[[Snapshot], None]) -> Callable[[], None]:
        """Call ``callback`` with each newly published snapshot; returns unsubscribe."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    # -- resolving -----------------------------------------------------------

    def resync(self, cancel: threading.Event | None = None) -> Snapshot:
        """Resolve now (and retry arming a degraded watcher); returns the live snapshot."""
        return self._resolve_and_publish(cancel, force_arm=True)

    def _on_watch_change(self) -> None:
        try:
            self._resolve_and_publish(None, force_arm=False)
        except Cancelled:
            pass
        except AgentdexError as exc:  # e.g. a corrupt sources file: say so, keep the snapshot
            self._report_resolve_failure(f"cannot resolve: {exc.message}")

    def _report_resolve_failure(self, message: str) -> None:
        notify: Snapshot | None = None
        with self._lock:
            self._resolve_error = message
            if self._published is not None:
                snap = replace(self._published, error=_join(message, self._watch_error))
                notify = self._publish_locked(snap)
        self._notify(notify)

    def _resolve_and_publish(self, cancel: threading.Event | None, *, force_arm: bool) -> Snapshot:
        with self._lock:
            self._started_epoch += 1
            epoch = self._started_epoch

        def should_stop() -> bool:
            return self._closing.is_set() or (cancel is not None and cancel.is_set())

        started_ns = time.time_ns()
        try:
            roots = self._roots()
            result = self._resolver(roots, limits=self._limits, should_stop=should_stop)
        except Cancelled:
            return self._live()
        if should_stop():
            return self._live()
        fresh = Snapshot(self.workspace, result.resources, result.roots, result.error)
        notify: Snapshot | None = None
        with self._lock:
            self.resolve_count += 1
            stale = epoch <= self._published_epoch  # a later resolve already published
            if not stale:
                self._published_epoch = epoch
                self._resolve_error = result.error
                fresh = replace(fresh, error=_join(result.error, self._watch_error))
                notify = self._publish_locked(fresh)
            live = self._published
        self._notify(notify)
        if not stale and self._watcher is not None:
            self._watcher.arm(epoch, result.plan, force=force_arm)
        if not stale and self._on_resolved is not None:
            with suppress(Exception):  # recording is best effort; the live view must not suffer
                self._on_resolved(result, roots, started_ns)
        return live if live is not None else self._live()

    def _live(self) -> Snapshot:
        with self._lock:
            snap = self._published
        if snap is None:
            raise Cancelled
        return snap

    def _publish_locked(self, snap: Snapshot) -> Snapshot | None:
        """Swap in ``snap`` if it changes anything; returns it when subscribers need it."""
        if self._published is not None and snap.same_content(self._published):
            self._published = replace(self._published, roots=snap.roots)
            return None
        self._version += 1
        self._published = snap.with_version(self._version)
        self._changed.notify_all()
        return self._published

    def _notify(self, snap: Snapshot | None) -> None:
        if snap is None:
            return
        with self._lock:
            subscribers = list(self._subscribers)
        for callback in subscribers:
            try:
                callback(snap)
            except Exception:  # a subscriber that went away (closed loop) must not stop others
                continue

    def _on_degraded(self, reason: str | None) -> None:
        notify: Snapshot | None = None
        with self._lock:
            self._watch_error = reason
            if self._published is not None:
                snap = replace(self._published, error=_join(self._resolve_error, reason))
                notify = self._publish_locked(snap)
        self._notify(notify)

    @property
    def watch_error(self) -> str | None:
        with self._lock:
            return self._watch_error

    def close(self) -> None:
        self._closing.set()
        with self._changed:
            self._changed.notify_all()
        if self._watcher is not None:
            self._watcher.close()

    def __enter__(self) -> ContextManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
