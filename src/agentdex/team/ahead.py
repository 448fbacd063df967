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
    probes of the first two bands, each waiting for the one before. The bands do
    not depend on the count, so they are read at once on the helper connection,
    in the same snapshot (``pg_export_snapshot``: the same rows as on the first
    connection), and the server runs both on two cores. A band the helper did not
    read (not asked, failed, cancelled) is read on the first connection as before,
    so the answer never depends on it. Without a helper nothing is read ahead.
    """

    def __init__(self, engine: TeamEngine, helper: Any, wheres: list[Sql], limit: int) -> None:
        self.engine = engine
        self.helper = helper
        self.limit = limit
        self.found: dict[Sql, list[tuple[int, int, float | None]]] = {}
        self.ready = {where: threading.Event() for where in wheres}
        self.stopping = False
        with engine.conn.cursor() as cur:
            cur.execute("SELECT pg_export_snapshot()")
            snapshot = str(cur.fetchone()[0])
        self.thread = threading.Thread(
            target=self._read, args=(snapshot, wheres), name="team-read-ahead", daemon=True
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

    def _read(self, snapshot: str, wheres: list[Sql]) -> None:
        try:
            with self.helper.transaction(), self.helper.cursor() as cur:
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                if not re.fullmatch(r"[0-9A-Fa-f-]+", snapshot):
                    return
                cur.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
                for where in wheres:
                    if self.stopping:
                        return
                    found = self.engine.probe(where, self.limit, conn=self.helper)
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
        self.stopping = True
        if self.thread.is_alive() and len(self.found) < len(self.ready):
            with suppress(Exception):  # cancel_safe: psycopg 3.2+; cancel before
                getattr(self.helper, "cancel_safe", self.helper.cancel)()
        self.thread.join()
