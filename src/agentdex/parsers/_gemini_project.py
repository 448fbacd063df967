"""Gemini CLI: which project a ``tmp/<dir>`` belongs to.

``tmp/<dir>/.project_root`` holds the literal root when present; newer
installs name ``<dir>`` by a readable slug listed in ``~/.gemini/projects.json``
(``{"projects": {root: slug}}``); older ones use ``sha256(root)``, matched
against the roots known from those two sources, the session's
``directories`` and the home directory. Unresolved means ``None``.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import lru_cache
from pathlib import Path

from agentdex.readers import Diagnostics, guard, read_json

_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")
_MARKER_BYTES = 4096


def _read_marker(path: Path) -> str | None:
    """The literal project root in a ``.project_root`` marker (absolute paths only)."""
    try:
        guard(path)
        with open(path, "rb") as handle:
            raw = handle.read(_MARKER_BYTES)
    except OSError:
        return None
    text = raw.decode("utf-8", "replace").strip()
    return text if text.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", text) else None


@lru_cache(maxsize=64)
def _known_roots(
    gemini_root: str, stamp: tuple[float, float]
) -> tuple[dict[str, str], frozenset[str]]:
    """(slug -> root from projects.json, every root known under this .gemini).

    ``stamp`` (mtimes of projects.json and tmp/) keys the cache so a changed
    registry is read again.
    """
    slugs: dict[str, str] = {}
    roots: set[str] = set()
    data = read_json(Path(gemini_root) / "projects.json", Diagnostics())
    projects = data.get("projects") if isinstance(data, dict) else None
    if isinstance(projects, dict):
        for root, slug in projects.items():
            if isinstance(root, str) and isinstance(slug, str):
                slugs.setdefault(slug, root)
                roots.add(root)
    try:
        with os.scandir(Path(gemini_root) / "tmp") as entries:
            dirs = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        dirs = []
    for path in dirs:
        marker = _read_marker(Path(path) / ".project_root")
        if marker:
            roots.add(marker)
    return slugs, frozenset(roots)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def resolve_project_root(
    project_dir: Path, gemini_root: Path, extra_roots: tuple[str, ...] = ()
) -> str | None:
    """The project root behind ``tmp/<dir>``, or ``None`` when nothing proves it."""
    marker = _read_marker(project_dir / ".project_root")
    if marker:
        return marker
    stamp = (_mtime(gemini_root / "projects.json"), _mtime(gemini_root / "tmp"))
    slugs, roots = _known_roots(str(gemini_root), stamp)
    name = project_dir.name
    if name in slugs:
        return slugs[name]
    if _SHA256_HEX.match(name):
        candidates = set(roots) | set(extra_roots) | {str(gemini_root.parent)}
        for root in sorted(candidates):
            if hashlib.sha256(root.encode()).hexdigest() == name:
                return root
    return None


def project_dir(chat_or_log: Path, gemini_root: Path) -> Path:
    """The ``tmp/<dir>`` holding a chat (``chats/x``, ``chats/<parent>/x``) or ``logs.json``."""
    tmp = gemini_root / "tmp"
    if chat_or_log.is_relative_to(tmp) and len(chat_or_log.relative_to(tmp).parts) > 1:
        return tmp / chat_or_log.relative_to(tmp).parts[0]
    parent = chat_or_log.parent  # a file outside the usual layout: nearest plausible dir
    return parent.parent if parent.name == "chats" else parent
