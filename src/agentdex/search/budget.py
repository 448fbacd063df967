"""A search's time budget: a deadline plus a cancel flag, checked cooperatively.

The engine asks :meth:`Budget.expired` between blocks and stops there, so
an over-budget search returns the results it has verified so far. That is
not enough for one runaway regex (``(a+)+$`` against ``"a" * 40 + "!"``):
a single ``re.search`` call never returns to the engine. CPython's regex
engine checks for signals every few thousand steps, though, so
:func:`enforced` arms ``SIGALRM`` at the deadline in the main thread and its
handler raises :class:`BudgetInterrupt` *only* inside an
:meth:`Budget.interruptible` region (the regex scans), where the caller
catches it; anywhere else the handler just marks the budget expired and the
next cooperative check stops the search. Outside the main thread only the
cooperative checks run, which is why the HTTP and MCP surfaces run searches
in the main thread of a worker process (:mod:`agentdex.api.search_worker`).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from agentdex.config import MAX_TIME_BUDGET

#: ``Budget.reason`` values (also ``stats["stopped"]`` of a partial search)
TIME_BUDGET = "time-budget"
CANCELLED = "cancelled"

#: The largest budget a surface accepts as a parameter (as in config.toml).
MAX_SECONDS = MAX_TIME_BUDGET


class BudgetInterrupt(Exception):
    """Raised by the alarm inside an interruptible region; the region's caller catches it."""


class Budget:
    """``seconds`` from :meth:`start` (or construction) until expiry; ``None``: no deadline.

    ``cancel`` is an event another thread sets to stop the search. Expiry is
    sticky: once :meth:`expired` has said True, it keeps saying so, and
    ``reason`` says why (``"time-budget"`` or ``"cancelled"``).
    """

    def __init__(self, seconds: float | None, cancel: threading.Event | None = None) -> None:
        self.seconds = seconds
        self.cancel = cancel if cancel is not None else threading.Event()
        self.reason: str | None = None
        self._interruptible = False
        self.deadline: float | None = None
        self.start()

    def start(self) -> None:
        """(Re)start the clock, e.g. once the index refresh before a search is done."""
        if self.seconds is not None:
            self.deadline = time.monotonic() + self.seconds

    def remaining(self) -> float | None:
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def share(self, fraction: float) -> Budget:
        """A budget for one part of the search: ``fraction`` of what remains (all of it
        without a deadline), cancelled with this one; its expiry does not expire this one."""
        remaining = self.remaining()
        part = Budget(None if remaining is None else remaining * fraction, self.cancel)
        if self.reason is not None:
            part.stop(self.reason)
        return part

    def stop(self, reason: str) -> None:
        """Expire now (first reason wins)."""
        if self.reason is None:
            self.reason = reason

    def expired(self) -> bool:
        if self.reason is not None:
            return True
        if self.cancel.is_set():
            self.stop(CANCELLED)
        elif self.deadline is not None and time.monotonic() >= self.deadline:
            self.stop(TIME_BUDGET)
        return self.reason is not None

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """A region the alarm may interrupt with :class:`BudgetInterrupt`.

        Catch it *outside* the ``with`` statement: the alarm can fire while
        the region is being left.
        """
        self._interruptible = True
        try:
            yield
        finally:
            self._interruptible = False

    def interrupt(self, reason: str) -> None:
        """Signal-handler side: expire, and raise if the main thread is in a region."""
        self.stop(reason)
        if self._interruptible:
            raise BudgetInterrupt(reason)


def unlimited() -> Budget:
    return Budget(None)


def default_seconds() -> float:
    """The configured budget: ``[search] time_budget`` in config.toml, else 5 seconds."""
    from agentdex.config import load_config

    return load_config().time_budget


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def enforced(budget: Budget) -> Iterator[None]:
    """Arm ``SIGALRM`` at ``budget``'s deadline for the duration (main thread only).

    Whatever alarm was armed before (pytest-timeout, the caller's own) is
    put back afterwards with its remaining time, as is its handler.
    """
    remaining = budget.remaining()
    if remaining is None or not _in_main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(_signum: int, _frame: FrameType | None) -> None:
        budget.interrupt(TIME_BUDGET)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, max(remaining, 1e-3))
    armed_at = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay > 0:
            left = max(old_delay - (time.monotonic() - armed_at), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)


def cancel_on_signal(budget: Budget, signum: int) -> None:
    """Make ``signum`` cancel ``budget`` (a worker process's parent sends it to cancel)."""

    def on_cancel(_signum: int, _frame: FrameType | None) -> None:
        budget.interrupt(CANCELLED)

    signal.signal(signum, on_cancel)
