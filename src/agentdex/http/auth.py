"""Bearer-token auth for ``agentdex serve``.

The token lives in the data dir (``serve-token``, mode 0600), is created on
first serve and printed, and is compared in constant time.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from agentdex.paths import data_dir, ensure_private_dir

TOKEN_FILE = "serve-token"


def token_path(base: Path | None = None) -> Path:
    return (base or data_dir()) / TOKEN_FILE


def load_or_create_token(base: Path | None = None) -> str:
    """Read the serve token, creating it (0600) when missing or empty."""
    path = token_path(base)
    try:
        existing = path.read_text(encoding="utf-8").strip()
    except OSError:
        existing = ""
    if existing:
        return existing
    ensure_private_dir(path.parent)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    os.chmod(path, 0o600)
    return token


def token_matches(expected: str, header: str | None) -> bool:
    """True when ``header`` is ``Bearer <expected>``."""
    if not header:
        return False
    scheme, _, value = header.partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(value.strip(), expected)
