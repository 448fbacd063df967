"""Finish an incomplete first build, detached from the search that started it.

``python -m agentdex.ingest.background INDEX_ROOT [HOME]`` waits for the
writer lock and refreshes until the index is complete; it prints nothing
(the search that started it has already answered and says the index is
still being built). A kill is harmless: the next refresh goes on.
"""

from __future__ import annotations

import sys

from agentdex.ingest.refresh import refresh


def main(argv: list[str]) -> int:
    if not argv:
        return 2
    root, home = argv[0], (argv[1] if len(argv) > 1 else None)
    try:
        refresh(root, home=home, wait=True)
    except Exception:  # nobody to tell: the next search refreshes and reports it
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
