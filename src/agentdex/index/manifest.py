"""The no-change fast path: skip a refresh when nothing discovery would see has changed.

After a complete refresh the writer saves, beside the index, every path
discovery looked at with its state then (:mod:`agentdex.discovery.observe`)
and a fingerprint of everything else discovery depends on (home, the
environment variables that move stores, the config file, agentdex's
version). :func:`unchanged` re-stats those paths, about one ``stat`` per
store file and directory, and opens no database: a default-mode
``search`` pays tens of milliseconds for its freshness check.

A refresh that could not read some file, or was scoped to some stores,
writes no manifest (the next refresh does the full check).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import orjson

from agentdex.paths import stat_signature as signature

MANIFEST = "refresh-manifest.json"
#: environment variables discovery (or config loading) may read: a superset is harmless
_ENV_MARKERS = ("HOME", "DIR", "APPDATA", "PROFILE", "XDG_", "AGENTDEX", "_DB", "WSL")


def fingerprint(home: str | None) -> str:
    """Everything but the file system that decides what discovery finds."""
    from agentdex import __version__

    env = sorted((k, v) for k, v in os.environ.items() if any(m in k for m in _ENV_MARKERS))
    config = os.environ.get("AGENTDEX_CONFIG") or ""
    parts = [__version__, home or "", repr(env), config, signature(config) if config else ""]
    return hashlib.blake2b("\0".join(parts).encode("utf-8", "replace"), digest_size=16).hexdigest()


def write(root: Path, generation: str, home: str | None, notes: dict[str, str], files: int) -> None:
    """Save the manifest of a complete refresh (atomically)."""
    data = {
        "generation": generation,
        "fingerprint": fingerprint(home),
        "files": files,
        "paths": notes,
    }
    tmp = root / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_bytes(orjson.dumps(data))
    os.replace(tmp, root / MANIFEST)


def discard(root: Path) -> None:
    (root / MANIFEST).unlink(missing_ok=True)


def unchanged(root: Path, home: str | None) -> int | None:
    """The number of store files when nothing changed since the last complete refresh, else None.

    Only valid for the generation ``CURRENT`` names (a rebuild invalidates it).
    """
    if (root / "BUILDING").exists():
        return None
    try:
        data = orjson.loads((root / MANIFEST).read_bytes())
        current = (root / "CURRENT").read_text().strip()
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("generation") != current:
        return None
    if data.get("fingerprint") != fingerprint(home):
        return None
    paths = data.get("paths")
    if not isinstance(paths, dict):
        return None
    for path, state in paths.items():
        if signature(path) != state:
            return None
    files = data.get("files")
    return files if isinstance(files, int) else 0
