"""A small, symlink-safe glob over a root directory.

``*`` and ``?`` match within one path segment, ``**`` matches any number of
segments. Directory symlinks are never followed (no loops, no escapes from
the root) and secret file names are never returned.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator

from agentdex.discovery import observe
from agentdex.readers import is_secret

_MAX_DEPTH = 12


def _scandir(path: str) -> list[os.DirEntry[str]]:
    observe.note(path)
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def glob(root: str, pattern: str, *, exclude: tuple[str, ...] = ()) -> Iterator[str]:
    """Yield regular files under ``root`` matching ``pattern`` (sorted per directory)."""
    parts = [p for p in pattern.split("/") if p]
    yield from _match(root, parts, exclude, 0)


def _is_regular(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _match(base: str, parts: list[str], exclude: tuple[str, ...], depth: int) -> Iterator[str]:
    if not parts or depth > _MAX_DEPTH:
        return
    head, rest = parts[0], parts[1:]
    if head == "**":
        # zero segments
        yield from _match(base, rest, exclude, depth)
        for entry in sorted(_scandir(base), key=lambda e: e.name):
            if _is_dir(entry):
                yield from _match(entry.path, parts, exclude, depth + 1)
        return
    literal = not any(ch in head for ch in "*?[")
    entries = (
        [e for e in _scandir(base) if e.name == head]
        if literal
        else sorted(
            (e for e in _scandir(base) if fnmatch.fnmatchcase(e.name, head)),
            key=lambda e: e.name,
        )
    )
    for entry in entries:
        if rest:
            if _is_dir(entry):
                yield from _match(entry.path, rest, exclude, depth + 1)
        elif (
            _is_regular(entry)
            and not is_secret(entry.name)
            and not any(fnmatch.fnmatchcase(entry.name, pat) for pat in exclude)
        ):
            yield entry.path
