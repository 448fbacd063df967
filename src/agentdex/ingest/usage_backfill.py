"""Reading the model calls' usage of files indexed before the index kept usage.

Once, after the migration that added it (``m005_usage`` sets
``meta.usage_backfill``): every indexed file the refresh did not read is
parsed again for its usage alone (its records stay as they are), then the
flag is cleared. A parser error costs that file's usage, not the run.
"""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

from agentdex.parsers.base import ParseCursor

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentdex.discovery import Source
    from agentdex.ingest.feed import Refresher

FLAG = "usage_backfill"


def pending(refresher: Refresher) -> bool:
    return bool(refresher.index.meta_int(FLAG))


def backfill(
    refresher: Refresher, sources: list[Source], indexable: Callable[[Source], bool]
) -> None:
    from agentdex.parsers import run

    index = refresher.index
    for source in sources:
        old = refresher.files.get(str(source.path))
        if old is None or old.id in refresher.usage_read or not indexable(source):
            continue
        cursor = ParseCursor()
        try:
            for _record in run(source, cursor, refresher.diagnostics):
                pass
        except Exception as exc:  # a parser bug costs this file's usage, not the run
            if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG):
                raise
            refresher.diagnostics.add(source.path, "", f"parser error: {exc!r}")
            continue
        index.usage.delete_file(old.id, None)
        refresher.add_usage(old.id, cursor.usage, resumed=False, path=str(source.path))
        index.pending += source.size
        refresher.maybe_commit()
    index.set_meta(FLAG, 0)
