"""What the write path tells those who keep data derived from the records.

Something that keeps its own data beside the index, keyed by records or by
their text (vectors, say), must learn when records leave for good or when
the index is replaced: ``forget``, ``archive prune`` and a rebuild. The
ingest layer calls every listener in :data:`LISTENERS` after each of these
has committed, under the writer lock, with an :class:`Event`. A listener
must not raise (an exception is reported as a warning and ignored: the
change itself is already committed) and must not take the writer lock.

Listeners are registered from above (the library API, at import of the
module that owns the derived data), so nothing here imports them. A
listener that missed events (a process killed, an older agentdex) cannot
rely on them alone: it should also be able to ask what is still live (the
index's ``record_rows.thash``/``tlen`` of the current generation, read
through :func:`agentdex.api.index.reader`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Literal, NamedTuple

Kind = Literal["forgotten", "pruned", "rebuilt"]


class Event(NamedTuple):
    #: ``forgotten`` (forget), ``pruned`` (archive prune), ``rebuilt`` (a new generation
    #: became current: every record id changed)
    kind: Kind
    #: the conversations concerned ((agent or None for any agent, session id)); empty
    #: for ``rebuilt``
    sessions: tuple[tuple[str | None, str], ...] = ()
    #: the generation now current (``gen-000002``) for ``rebuilt``, else ""
    generation: str = ""
    #: the index dir the change was made in (``index_root``: one per home)
    root: str = ""


Listener = Callable[[Event], None]
LISTENERS: list[Listener] = []


def emit(event: Event) -> None:
    """Tell every listener; a failing one is reported on stderr and skipped."""
    for listener in list(LISTENERS):
        try:
            listener(event)
        except Exception as exc:  # the change is committed: a listener cannot undo it
            print(f"agentdex: warning: {event.kind} listener failed: {exc!r}", file=sys.stderr)
