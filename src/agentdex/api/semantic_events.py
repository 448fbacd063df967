"""Vectors follow the records: the ingest layer's forget/prune/rebuild events, heard here.

Registered when the library API is imported (``agentdex/api/__init__.py``).
``forgotten`` and ``pruned`` drop at once the vectors whose text no live record
holds any more (:func:`agentdex.semantic.fill.drop_gone`); ``rebuilt`` needs
nothing: vectors are keyed by text, and the next fill (``index --semantic`` or
a server's background fill) maps the new generation's records onto them
without embedding anything again. Searches never return a vector without a
live record, so a missed event only delays the cleanup to the next fill.
"""

from __future__ import annotations

from agentdex.ingest import events


def on_event(event: events.Event) -> None:
    if event.kind == "rebuilt" or not event.root:
        return
    from pathlib import Path

    from agentdex.semantic.fill import drop_gone

    drop_gone(Path(event.root))


if on_event not in events.LISTENERS:
    events.LISTENERS.append(on_event)
