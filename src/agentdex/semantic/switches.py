"""What the residents read from the environment, and the folder they listen in.

The resident embedder (:mod:`agentdex.semantic.resident`) and the resident team
searcher (:mod:`agentdex.api.team_resident`) share these. Kept apart from
``semantic.resident`` so a fresh ``search --team`` process can ask whether its
resident is on without importing the embedder's client (``hashlib``, whose
OpenSSL load is a few milliseconds, and the model module).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


def switched_on(variable: str) -> bool:
    """Whether the environment ``variable`` lets a resident be used (on unless 0/false/
    no/off; never without unix sockets). The embedder's and the team searcher's switch."""
    value = os.environ.get(variable, "1").strip().lower()
    return value not in ("0", "false", "no", "off") and hasattr(socket, "AF_UNIX")


def seconds_setting(variable: str, default: float) -> float:
    """A positive number of seconds from the environment ``variable``, else ``default``."""
    try:
        seconds = float(os.environ.get(variable, ""))
    except ValueError:
        return default
    return seconds if seconds > 0 else default


def run_dir() -> Path:
    """The residents' folder: one private ``run/`` per data dir."""
    from agentdex.paths import data_dir

    return data_dir() / "run"
