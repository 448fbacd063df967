"""Reading the first bands' probes ahead, on a second connection (:class:`ReadAhead`)."""

from __future__ import annotations

import re
import threading
from contextlib import suppress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentdex.team.plan import Sql
    from agentdex.team.search import TeamEngine


class ReadAhead:
    """Band probes read on a second connection while the first counts the candidates.

    A first page's cost at 1 GB is mostly three trigram bitmaps: the probe that
    counts up to ``FULL_VERIFIED + 1`` candidates (whole or first page?) and the
    probes of the first two bands of levels. The bands do not depend on the count,
    so they are read at once on the helper connection, in the same snapshot
    (``pg_export_snapshot``: the same rows as on the first connection), and the
    server runs both connections' statements on two cores. A band the helper did
    not read (not asked, failed, cancelled) is read on the first connection as
    before, so the answer never depends on it. Without a helper nothing is read
    ahead.

    The helper's transaction is set up in one round trip (isolation, snapshot and
    the band probes' plan settings in one simple-protocol statement after
    ``BEGIN``): every round trip before its first probe is time the count does not
    hide. (Reading the wider band first and letting the first connection take a
    band the helper had not begun was tried: no faster with good plans, slower
    when a band's plan rechecked every trigram candidate; docs/performance.md.)
    """

    def __init__(self, engine: TeamEngine, helper: Any, wheres: list[Sql], limit: int) -> None:
        self.engine = engine
        self.helper = helper
        self.limit = limit
        self.found: dict[Sql, list[tuple[int, int, float | None]]] = {}
        self.ready = {where: threading.Event() for where in wheres}
        #: the band the helper is reading (under ``lock``)
        self.reading: Sql | None = None
        self.lock = threading.Lock()
        self.stopping = False
        with engine.conn.cursor() as cur:
            cur.execute("SELECT pg_export_snapshot()")
            snapshot = str(cur.fetchone()[0])
        self.thread = threading.Thread(
            target=self._read,
            args=(snapshot, list(wheres)),
            name="team-read-ahead",
            daemon=True,
        )
        self.thread.start()

    @classmethod
    def start(cls, engine: TeamEngine, wheres: list[Sql], limit: int) -> ReadAhead | None:
        """Reading ahead on the engine's helper connection; None without one."""
        if engine.helper is None or not wheres:
            return None
        try:
            helper = engine.helper()
        except Exception:  # no second connection: everything is read on the first
            return None
        return None if helper is None else cls(engine, helper, wheres, limit)

    def _begin(self, where: Sql) -> bool:
        """The helper begins reading a band (False: it is stopping)."""
        with self.lock:
            if self.stopping:
                return False
            self.reading = where
            return True

    def _read(self, snapshot: str, wheres: list[Sql]) -> None:
        try:
            if not re.fullmatch(r"[0-9A-Fa-f-]+", snapshot):
                return
            from agentdex.team.search import BAND_INDEX_TUPLE_COST, plan_settings

            with self.helper.transaction(), self.helper.cursor() as cur:
                # one round trip (no parameters: the simple protocol takes several statements)
                cur.execute(
                    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;"
                    f" SET TRANSACTION SNAPSHOT '{snapshot}';"
                    + plan_settings(
                        self.engine.budget,
                        seqscan=False,
                        bitmap=True,
                        index=False,
                        index_tuple_cost=BAND_INDEX_TUPLE_COST,
                    )
                )
                for where in wheres:
                    if not self._begin(where):
                        return
                    found = self.engine.probe(where, self.limit, conn=self.helper)
                    with self.lock:
                        self.reading = None
                        self.found[where] = found
                    self.ready[where].set()
        except Exception:  # what was not read ahead is read on the first connection
            return
        finally:
            for event in self.ready.values():
                event.set()

    def result(self, where: Sql) -> list[tuple[int, int, float | None]] | None:
        """The band's probe, once read ahead (None: not asked, or it failed)."""
        event = self.ready.get(where)
        if event is None:
            return None
        left = self.engine.budget.remaining()
        event.wait(None if left is None else left + 1.0)
        return self.found.get(where)

    def stop(self) -> None:
        """Cancel what is still being read, and wait for the helper to be idle again."""
        with self.lock:
            self.stopping = True
            busy = self.reading is not None
        if self.thread.is_alive() and busy:
            with suppress(Exception):  # cancel_safe: psycopg 3.2+; cancel before
                getattr(self.helper, "cancel_safe", self.helper.cancel)()
        self.thread.join()
