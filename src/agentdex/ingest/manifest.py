"""The no-change fast path: skip a refresh when nothing discovery would see has changed.

After a complete refresh the writer saves, beside the index, every path
discovery looked at with its state then (:mod:`agentdex.discovery.observe`)
and a fingerprint of everything else discovery depends on (home, the
environment variables that move stores, the config file, agentdex's
version). :func:`check` re-stats those paths in one pass, about one
``stat`` per store file and directory, and opens no database: a
default-mode ``search`` pays tens of milliseconds for its freshness check.

When the only paths that changed are store files the last refresh found
(an agent appended to its transcript), the same pass names them and the
refresh re-reads just those, without walking every store again: a new or
removed file changes its directory, which sends the refresh back to full
discovery.

A refresh that could not read some file, or was scoped to some stores,
writes no manifest (the next refresh does the full check).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISDIR
from typing import TYPE_CHECKING, Any

import orjson

from agentdex.paths import blake2b, changed_signatures
from agentdex.paths import stat_signature as signature

if TYPE_CHECKING:
    from agentdex.discovery import Source
    from agentdex.ingest.watch import Watch

MANIFEST = "refresh-manifest.json"
#: where each store file came from (store, root): read only when some store file changed
SOURCES = "refresh-sources.json"
#: environment variables discovery (or config loading) may read: a superset is harmless
_ENV_MARKERS = ("HOME", "DIR", "APPDATA", "PROFILE", "XDG_", "AGENTDEX", "_DB", "WSL")
#: agentdex settings that decide nothing discovery finds (the embedder, the team and local
#: searchers):
#: left out, so a search with ``AGENTDEX_RESIDENT_EMBEDDER=0`` beside one without does not
#: make the other's refresh check miss (each such switch cost a full refresh, ~0.5 s at 1 GB)
_NOT_DISCOVERY = frozenset(
    {
        "AGENTDEX_RESIDENT_EMBEDDER",
        "AGENTDEX_EMBEDDER_IDLE_SECONDS",
        "AGENTDEX_BACKGROUND_EMBED",
        "AGENTDEX_EMBED_THREADS",
        "AGENTDEX_MODEL_PATH",
        "AGENTDEX_RESIDENT_TEAM",
        "AGENTDEX_TEAM_IDLE_SECONDS",
        "AGENTDEX_RESIDENT_SEARCH",
        "AGENTDEX_SEARCH_IDLE_SECONDS",
    }
)


def fingerprint(home: str | None) -> str:
    """Everything but the file system that decides what discovery finds (and the index
    schema: a new migration sends the next refresh to the writer, which applies it)."""
    from agentdex import __version__
    from agentdex.archive.schema import MIGRATIONS as ARCHIVE_MIGRATIONS
    from agentdex.index.schema import MIGRATIONS
    from agentdex.index.store import FORMAT
    from agentdex.paths import config_path

    env = sorted(
        (k, v)
        for k, v in os.environ.items()
        if any(m in k for m in _ENV_MARKERS) and k not in _NOT_DISCOVERY
    )
    # the config file wherever it is ([privacy] redact, stores...), the index format, its
    # and the archive's migrations: a change to any sends the next refresh to the writer,
    # which rebuilds or migrates if it must
    config = str(config_path())
    schema = f"{len(MIGRATIONS)}.{len(ARCHIVE_MIGRATIONS)}"
    parts = [__version__, home or "", repr(env), config, signature(config), FORMAT, schema]
    return blake2b("\0".join(parts).encode("utf-8", "replace"), digest_size=16).hexdigest()


def write(
    root: Path,
    generation: str,
    home: str | None,
    notes: dict[str, str],
    files: int,
    sources: list[Source],
) -> None:
    """Save the manifest of a complete refresh (atomically).

    The sources go to a file of their own, written first, tied to the
    manifest by a random id: the no-change check (every search) reads only
    the manifest, and a refresh of an append rewrites only the manifest.
    """
    sources_id = os.urandom(8).hex()
    _save(
        root / SOURCES,
        {
            "id": sources_id,
            "sources": {
                str(s.path): [s.row.store, s.root.name, str(s.root.path), s.root.host, s.root.only]
                for s in sources
            },
        },
    )
    data = {
        "generation": generation,
        "fingerprint": fingerprint(home),
        "files": files,
        "sources_id": sources_id,
        "paths": notes,
    }
    _save(root / MANIFEST, data)


def _save(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(orjson.dumps(data))
    os.replace(tmp, path)


def _saved_sources(root: Path, data: dict[str, Any]) -> dict[str, Any] | None:
    """The sources file of this manifest (None when missing or another manifest's)."""
    try:
        saved = orjson.loads((root / SOURCES).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(saved, dict) or saved.get("id") != data.get("sources_id"):
        return None
    known = saved.get("sources")
    return known if isinstance(known, dict) else None


def discard(root: Path) -> None:
    (root / MANIFEST).unlink(missing_ok=True)


def _load(root: Path, home: str | None) -> tuple[dict[str, Any], str] | None:
    """The manifest, and its file's stamp, when it still describes the current
    generation and settings."""
    if (root / "BUILDING").exists():
        return None
    try:
        stamp = _stamp(root)
        data = orjson.loads((root / MANIFEST).read_bytes())
        current = (root / "CURRENT").read_text().strip()
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("generation") != current:
        return None
    if data.get("fingerprint") != fingerprint(home):
        return None
    if not isinstance(data.get("paths"), dict):
        return None
    return data, stamp


def _stamp(root: Path) -> str:
    """The manifest file's identity (written by atomic replace: a rewrite is a new inode)."""
    st = os.stat(root / MANIFEST)
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def _files(data: dict[str, Any]) -> int:
    files = data.get("files")
    return files if isinstance(files, int) else 0


@dataclass(slots=True)
class Changes:
    """Store files that changed since the last complete refresh (nothing else did)."""

    data: dict[str, Any]
    #: the manifest file's identity when it was read (see :func:`still_current`)
    stamp: str
    #: noted path -> its signature when checked (before anything is read)
    now: dict[str, str]
    #: changed store file -> [store id, root name, root path, host, only]
    sources: dict[str, list[Any]]

    @property
    def files(self) -> int:
        return _files(self.data)


def check(root: Path, home: str | None) -> tuple[int | None, Changes | None]:
    """One pass over the noted paths: ``(store files, None)`` when nothing changed,
    ``(None, changes)`` when only store files the last refresh found changed
    (appends), ``(None, None)`` when only full discovery knows what there is
    (a directory, a root or ``projects.json`` changed, a store file vanished,
    or there is no manifest for the current index and settings).
    """
    loaded = _load(root, home)
    if loaded is None:
        return None, None
    data, stamp = loaded
    now = dict(changed_signatures(data["paths"]))
    if not now:
        return _files(data), None
    known = _saved_sources(root, data) if data.get("sources_id") else None
    if known is None:
        return None, None
    sources: dict[str, list[Any]] = {}
    for path, current in now.items():
        store_file = path[: -len("-wal")] if path.endswith("-wal") else path
        entry = known.get(store_file)
        if not isinstance(entry, list) or not current.startswith(("f:", "missing")):
            return None, None
        if store_file == path and not current.startswith("f:"):
            return None, None  # the store file itself vanished: its directory knows
        sources[store_file] = entry
    return None, Changes(data, stamp, now, sources)


class KeptCheck:
    """:func:`check` for a process that checks again and again (the resident searcher).

    A fresh search's check parses the manifest and formats a signature string per
    noted path (~10,700 at 1 GB: ~40 ms of Python beside ~40 ms of ``stat``). This
    keeps each version of the manifest parsed, its noted states as the numbers a
    ``stat`` gives, and compares those. It answers "nothing changed" only when every
    noted path's :func:`agentdex.paths.stat_signature` equals the noted one, as
    :func:`check` does; whenever anything differs, :func:`check` itself says what.

    Between two such full passes the folders of the noted paths are watched
    (:mod:`agentdex.ingest.watch`): while nothing was noticed there since a full pass
    found every path unchanged, only what a notice cannot vouch for is stat-ed (the
    watched folders themselves, missing paths, links: ~300 of the 10,700 at 1 GB).
    """

    __slots__ = ("_armed", "_data", "_key", "_noted", "_watch", "_watched")

    def __init__(self) -> None:
        self._key: tuple[str, str, str] | None = None
        self._data: dict[str, Any] = {}
        self._noted: list[tuple[str, int, int, int]] = []
        self._watch: Watch | None = None
        #: a watch was tried for this manifest (None: none could be made)
        self._watched = False
        #: the last full pass found every path unchanged after the watch began
        self._armed = False

    def check(self, root: Path, home: str | None) -> tuple[int | None, Changes | None]:
        if (root / "BUILDING").exists():
            return None, None
        try:
            key = (str(root), _stamp(root), (root / "CURRENT").read_text().strip())
        except OSError:
            return None, None
        if key != self._key:
            self._key = None
            self._unwatch()
            loaded = _load(root, home)
            noted = _noted_states(loaded[0]["paths"]) if loaded is not None else None
            if loaded is None or loaded[1] != key[1] or noted is None:
                return check(root, home)
            self._key, self._data, self._noted = key, loaded[0], noted
        elif self._data.get("fingerprint") != fingerprint(home):  # the config file changed
            return check(root, home)
        if self._armed and self._quiet():
            return _files(self._data), None
        self._armed = False
        if not self._watched:  # before the full pass: a change during it is noticed
            from agentdex.ingest.watch import watch

            self._watched = True
            self._watch = watch(self._noted, _MISSING, _FILE)
        elif self._watch is not None:
            self._watch.drained()  # what it held, the pass below sees
        if _unchanged(self._noted):
            self._armed = self._watch is not None
            return _files(self._data), None
        return check(root, home)

    def _quiet(self) -> bool:
        """Nothing noticed since the last full pass, and what no notice vouches for
        unchanged (read in this order: a change after the read is noticed next time)."""
        kept = self._watch
        return (
            kept is not None
            and kept.drained()
            and kept.folders_in_place()
            and _unchanged(kept.unwatched)
        )

    def _unwatch(self) -> None:
        if self._watch is not None:
            self._watch.close()
        self._watch, self._watched, self._armed = None, False, False


#: a noted state's kind in :class:`KeptCheck`
_MISSING, _DIRECTORY, _FILE = 0, 1, 2


def _noted_states(paths: dict[str, Any]) -> list[tuple[str, int, int, int]] | None:
    """``(path, kind, size, mtime_ns)`` of each noted signature; None if one is not a
    signature :func:`agentdex.paths.stat_signature` writes."""
    states = []
    try:
        for path, noted in paths.items():
            kind, _, rest = noted.partition(":")
            if noted == "missing":
                states.append((path, _MISSING, 0, 0))
            elif kind == "d":
                states.append((path, _DIRECTORY, 0, int(rest)))
            elif kind == "f":
                size, _, mtime = rest.partition(":")
                states.append((path, _FILE, int(size), int(mtime)))
            else:
                return None
    except (AttributeError, ValueError):
        return None
    return states


def _unchanged(states: list[tuple[str, int, int, int]]) -> bool:
    """Does every path still have its noted state (``stat_signature``'s rules)?"""
    stat = os.stat
    for path, kind, size, mtime in states:
        try:
            st = stat(path)
        except OSError:
            if kind == _MISSING:
                continue
            return False
        if kind == _MISSING or st.st_mtime_ns != mtime:
            return False
        if S_ISDIR(st.st_mode):
            if kind != _DIRECTORY:
                return False
        elif kind != _FILE or st.st_size != size:
            return False
    return True


def changes_from(
    root: Path, home: str | None, stamp: str, now: dict[str, str], sources: dict[str, list[Any]]
) -> Changes | None:
    """The :class:`Changes` another process's :func:`check` found (it sends its parts), when
    the manifest it read (``stamp``) is still the one on disk; else None."""
    loaded = _load(root, home)
    if loaded is None or loaded[1] != stamp:
        return None
    return Changes(loaded[0], stamp, now, sources)


def changed_sources(root: Path, home: str | None) -> Changes | None:
    """The changed store files when they are all a refresh must look at (see :func:`check`)."""
    return check(root, home)[1]


def still_current(root: Path, changes: Changes) -> bool:
    """Is the manifest ``changes`` was computed from still the one on disk?

    A refresh checks before it takes the writer lock; another writer may
    have refreshed (and rewritten the manifest) in between.
    """
    try:
        return _stamp(root) == changes.stamp
    except OSError:
        return False


def update(root: Path, generation: str, changes: Changes) -> None:
    """Save the manifest after a refresh of just ``changes`` (their states as checked)."""
    data = dict(changes.data, generation=generation)
    data["paths"] = {**changes.data["paths"], **changes.now}
    _save(root / MANIFEST, data)  # the sources file (and its id) still holds
