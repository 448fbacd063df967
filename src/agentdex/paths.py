"""Where agentdex keeps its own files, and how the user's home is chosen.

agentdex writes only under its data dir (``$AGENTDEX_DATA_DIR``, else the
platform's user data dir); it never writes under an agent's store.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from stat import S_ISDIR
from typing import Any, BinaryIO

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
    import re

    real = os.path.realpath(home_dir(home))
    digest = sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", os.path.basename(real.rstrip("/")) or "root")
    return f"{slug.strip('.-')[:40] or 'home'}-{digest}"


def sha256(data: bytes = b"") -> Any:
    """``hashlib.sha256(data)``, made by CPython's own small sha256 module when it has one.

    ``import hashlib`` loads OpenSSL (``_hashlib``, ~2.5 ms) in every process that
    hashes anything, and a fresh search hashes only a few short strings (the home
    key, conversation ids). Same digests: the same algorithm.
    """
    return _hash("sha256", ("_sha2", "_sha256"))(data)


def blake2b(data: bytes = b"", **options: Any) -> Any:
    """``hashlib.blake2b(data, **options)`` without loading OpenSSL: hashlib's own
    ``blake2b`` is CPython's ``_blake2`` module's (never OpenSSL's)."""
    return _hash("blake2b", ("_blake2",))(data, **options)


_HASHES: dict[str, Any] = {}


def _hash(name: str, modules: tuple[str, ...]) -> Any:
    made = _HASHES.get(name)
    if made is None:
        import importlib

        for module in modules:
            try:
                made = getattr(importlib.import_module(module), name)
                break
            except (ImportError, AttributeError):
                continue
        else:  # an interpreter built without them: hashlib's (OpenSSL's) are the same hashes
            import hashlib

            made = getattr(hashlib, name)
        _HASHES[name] = made
    return made


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


#: what agentdex creates is its user's alone: files 0600, folders 0700 (docs/security.md)
PRIVATE_UMASK = 0o077


def private_umask() -> int:
    """From now on, every file and folder this process creates is private (0600 / 0700)
    whatever the user's umask: index and archive files (SQLite's and tantivy's
    included), manifests, exports, ``archive export``. Returns the previous umask.
    The CLI (and so ``serve``, ``ui``, ``mcp``) calls it first thing."""
    return os.umask(PRIVATE_UMASK)


@contextmanager
def private_files() -> Iterator[None]:
    """:func:`private_umask` for the length of a block (library calls that write), then
    the caller's umask again."""
    previous = os.umask(PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(previous)


def tighten(path: Path) -> None:
    """Make an existing folder 0700 (one an older agentdex created 0755); never raises."""
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o700)
    except OSError:
        pass


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` and its missing parents 0700 (an existing one is tightened) and
    return it."""
    with private_files():
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    tighten(path)
    return path


def open_private(path: Path) -> BinaryIO:
    """``path`` opened for writing (created or truncated), mode 0600 whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT
    except OSError:
        os.close(fd)
        raise
    return os.fdopen(fd, "wb")


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
