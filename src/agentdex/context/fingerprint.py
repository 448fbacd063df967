"""A stat-only fingerprint of what a resolve read, to skip resolves that cannot differ.

Why: ``agentdex index`` checks the context of every workspace it has
conversations for. Re-resolving each one reads every instruction file
again; stat'ing what the last resolve walked is much cheaper and answers
"could anything have changed?". The fingerprint covers the scan roots
themselves (sources and config change them), every walked directory (an
entry created, renamed or deleted changes its mtime), every ancestor
directory, and every discovered file and symlink target (an edit or a
``chmod`` changes its mtime or ctime; a replacement changes its inode).
Missing roots are stat'ed too, so their creation is noticed.

Like git's racily-clean rule, a fingerprint is not trusted when anything in
it was modified less than :data:`RACY_SECONDS` before the resolve started:
a write in the same timestamp tick as the read could otherwise go unseen.
Such a resolve stores no fingerprint, so the next check resolves again.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Iterable, Sequence

import orjson

from agentdex.context.caps import Limits
from agentdex.context.resolver import ScanRoot, WatchPlan

#: Files or directories touched this close to a resolve's start make its fingerprint untrusted.
RACY_SECONDS = 2.0


def roots_key(roots: Sequence[ScanRoot], limits: Limits) -> str:
    """A digest of the scan-root list and limits: any change means a new resolve."""
    digest = hashlib.sha256(repr(limits).encode())
    for root in roots:
        digest.update(repr((root.path, root.scope, root.source_path, root.max_depth)).encode())
        skip = ",".join(sorted(root.skip))
        digest.update(repr((skip, root.allow_file, root.denied, root.shallow)).encode())
    return digest.hexdigest()


def _paths(plan: WatchPlan, roots: Sequence[ScanRoot]) -> list[str]:
    shallow = {root.path for root in roots if root.shallow}
    return sorted(plan.dirs | plan.files | shallow)


def _stats(paths: Iterable[str]) -> tuple[str, int]:
    """(sha256 of every path's stat, newest mtime/ctime in ns); missing paths count too."""
    digest = hashlib.sha256()
    newest = 0
    for path in paths:
        try:
            st = os.stat(path)
        except OSError as exc:
            digest.update(f"{path}\0-{exc.errno}\n".encode("utf-8", "surrogateescape"))
            continue
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
        line = f"{path}\0{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_size}:{st.st_ino}:{st.st_mode}\n"
        digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest(), newest


def take(
    plan: WatchPlan, roots: Sequence[ScanRoot], limits: Limits, started_ns: int
) -> bytes | None:
    """The fingerprint of a resolve that started at ``started_ns`` (wall clock), or None.

    None means "do not trust a later match": something was modified too
    close to the resolve for the stat to prove the resolve saw it.
    """
    paths = _paths(plan, roots)
    stat_digest, newest = _stats(paths)
    if newest >= started_ns - int(RACY_SECONDS * 1e9):
        return None
    data = {"roots": roots_key(roots, limits), "paths": paths, "stat": stat_digest}
    return zlib.compress(orjson.dumps(data), 6)  # thousands of paths with shared prefixes


def unchanged(stored: bytes | None, roots: Sequence[ScanRoot], limits: Limits) -> bool:
    """True when ``stored`` still matches the filesystem: resolving again cannot differ."""
    if not stored:
        return False
    try:
        data = orjson.loads(zlib.decompress(stored))
        paths = data["paths"]
        if not isinstance(paths, list) or data["roots"] != roots_key(roots, limits):
            return False
        return bool(_stats(paths)[0] == data["stat"])
    except (zlib.error, orjson.JSONDecodeError, KeyError, TypeError):
        return False
