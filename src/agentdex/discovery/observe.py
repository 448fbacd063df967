"""What discovery looked at: every path it tested, listed or found, with its state then.

While :func:`recording` is active, discovery notes each directory it lists,
each candidate root it tests (present or not) and each store file it finds,
with a stat signature taken at that moment. If none of them has changed,
discovery would find exactly the same files in the same state, which is
what the index's no-change fast path (:mod:`agentdex.ingest.manifest`) relies
on: a new store file changes its directory's mtime, a new root changes
from missing to present, an append changes a file's size and mtime.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from agentdex.paths import stat_signature as signature

_notes: dict[str, str] | None = None


def note(path: str | os.PathLike[str]) -> None:
    """Record ``path`` (and its state now) if a recording is active."""
    if _notes is not None:
        key = os.fspath(path)
        if key not in _notes:
            _notes[key] = signature(key)


@contextmanager
def recording() -> Iterator[dict[str, str]]:
    """Collect notes for the duration of the block (path -> signature)."""
    global _notes
    previous, _notes = _notes, {}
    try:
        yield _notes
    finally:
        _notes = previous
