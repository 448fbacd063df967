"""Vectors follow the records: the ingest layer's forget/prune/rebuild events, heard here.

Registered when the library API is imported (``agentdex/api/__init__.py``).
``forgotten`` and ``pruned`` drop at once the vectors whose text no live record
holds any more (:func:`agentdex.semantic.fill.drop_gone`); ``rebuilt`` links
the new generation's records to the vectors their text already has, from the
index's text hashes (:func:`agentdex.semantic.link.relink`: no text read,
nothing embedded), so search by meaning keeps working right after a rebuild.
Searches never return a vector without a live record; a missed ``rebuilt``
is caught up by the first search by meaning (or fill) that finds the
vectors linked to an older generation.
"""

from __future__ import annotations

from agentdex.ingest import events


def on_event(event: events.Event) -> None:
    if not event.root:
        return
    from pathlib import Path

    if event.kind == "rebuilt":
        from agentdex.semantic.link import relink
        from agentdex.semantic.model import DEFAULT

        relink(Path(event.root), DEFAULT.id)
        return
    from agentdex.semantic.fill import drop_gone

    drop_gone(Path(event.root))


if on_event not in events.LISTENERS:
    events.LISTENERS.append(on_event)
