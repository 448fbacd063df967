"""Where agentdex keeps its own files, and how the user's home is chosen.

agentdex writes only under its data dir (``$AGENTDEX_DATA_DIR``, else the
platform's user data dir); it never writes under an agent's store.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from stat import S_ISDIR

APP_NAME = "agentdex"


def home_dir(home: str | os.PathLike[str] | None = None) -> Path:
    """The home directory discovery starts from: ``--home`` or ``$HOME``."""
    if home is not None:
        return Path(home).expanduser().absolute()
    env = os.environ.get("HOME")
    return Path(env).absolute() if env else Path.home()


def data_dir() -> Path:
    """agentdex's own data dir (index, session logs, tokens); created on demand by callers."""
    env = os.environ.get("AGENTDEX_DATA_DIR")
    if env:
        return Path(env).expanduser().absolute()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def home_key(home: str | os.PathLike[str] | None = None) -> str:
    """A stable, readable folder name for one home: ``<last part>-<12 hex of its real path>``.

    Every home gets its own index under the data dir, so ``--home`` never
    reads or writes another home's records. The real path (symlinks
    resolved) keys it, so ``~/x`` and the path it links to share one index.
    """
    import hashlib
    import re

    real = os.path.realpath(home_dir(home))
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", os.path.basename(real.rstrip("/")) or "root")
    return f"{slug.strip('.-')[:40] or 'home'}-{digest}"


def home_data_dir(home: str | os.PathLike[str] | None = None) -> Path:
    """What agentdex keeps about one home: ``<data dir>/homes/<home_key>`` (index, projects)."""
    return data_dir() / "homes" / home_key(home)


def config_path() -> Path:
    """The optional TOML config: ``$AGENTDEX_CONFIG``, else the platform config dir."""
    env = os.environ.get("AGENTDEX_CONFIG")
    if env:
        return Path(env).expanduser().absolute()
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (mode 0700 when new) and return it."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def stat_signature(path: str) -> str:
    """A path's state: ``missing``, ``d:<mtime>`` for a directory, ``f:<size>:<mtime>``.

    Equal signatures mean "looks unchanged" to discovery and the index's
    no-change fast path (:mod:`agentdex.ingest.manifest`).
    """
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    if S_ISDIR(st.st_mode):
        return f"d:{st.st_mtime_ns}"
    return f"f:{st.st_size}:{st.st_mtime_ns}"


def changed_signatures(noted: dict[str, str]) -> Iterator[tuple[str, str]]:
    """``(path, signature)`` of each noted path whose :func:`stat_signature` differs
    from the one noted (a fresh search checks every noted path this way)."""
    for path, noted_state in noted.items():
        state = stat_signature(path)
        if state != noted_state:
            yield path, state
