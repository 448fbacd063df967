"""What Kimi CLI's two transcripts share: where a session is, whose work dir, and text.

A session lives in ``<share dir>/sessions/<md5(work dir)>/<session id>/``
(``<kaos>_<md5>`` for a work dir on another KAOS than ``local``); ``kimi.json``
in the share dir lists the work dirs, so the folder's md5 is looked up there
(MoonshotAI/kimi-cli ``src/kimi_cli/metadata.py``). Subagents of 2026-03 on
have their own folder ``<session>/subagents/<agent id>/``.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

#: Harness text Kimi puts in user-role messages: ``system(...)`` wraps a notice in
#: ``<system>``, ``system_reminder(...)`` in ``<system-reminder>`` (soul/message.py).
HARNESS_PREFIXES = ("<system>", "<system-reminder>")
#: ``parse_slash_command_call`` (utils/slashcmd.py): ``/name`` or ``/skill:name`` then space.
_SLASH = re.compile(r"^/([a-zA-Z0-9_-]+(?::[a-zA-Z0-9_-]+)*)(?:\s|$)")


@lru_cache(maxsize=8)
def _work_dirs(path: str, mtime: float) -> dict[str, str]:
    """md5 folder name -> work dir path, from ``kimi.json``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    dirs = data.get("work_dirs") if isinstance(data, dict) else None
    found: dict[str, str] = {}
    for entry in dirs if isinstance(dirs, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            continue
        digest = hashlib.md5(entry["path"].encode("utf-8"), usedforsecurity=False).hexdigest()
        kaos = entry.get("kaos")
        name = digest if kaos in (None, "", "local") else f"{kaos}_{digest}"
        found[name] = entry["path"]
    return found


def work_dir(root: Path, group: str) -> str | None:
    """The work dir whose sessions live in ``sessions/<group>`` (None when unlisted)."""
    meta = root / "kimi.json"
    try:
        mtime = meta.stat().st_mtime
    except OSError:
        return None
    return _work_dirs(str(meta), mtime).get(group)


def session_place(path: Path) -> tuple[str, str, str | None]:
    """(session id, work dir group, subagent id) of a file in a session folder.

    ``sessions/<group>/<id>/wire.jsonl``, ``sessions/<group>/<id>/subagents/<agent>/wire.jsonl``
    and the flat legacy ``sessions/<group>/<id>.jsonl`` (before 2025-11-25).
    """
    parent = path.parent
    if parent.parent.name == "subagents":
        session_dir = parent.parent.parent
        return session_dir.name, session_dir.parent.name, parent.name
    if parent.parent.name == "sessions":  # legacy: the file itself is the session
        return path.stem, parent.name, None
    return parent.name, parent.parent.name, None


def user_text(value: Any) -> str:
    """Text of a ``user_input`` or message ``content``: a string or parts (text parts only)."""
    if isinstance(value, str):
        return value
    parts = []
    for part in value if isinstance(value, list) else []:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "\n".join(p for p in parts if p)


def is_harness(text: str) -> bool:
    return text.lstrip().startswith(HARNESS_PREFIXES)


def slash_command(text: str) -> str | None:
    """The command a ``/name args`` input runs (None when it is not one)."""
    found = _SLASH.match(text.strip())
    return found.group(1) if found else None


def output_text(value: Any) -> str:
    """A tool's ``output`` (a string or content parts) as text."""
    return user_text(value)
